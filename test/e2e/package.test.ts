// The package as users get it (cli-contract.md, "Library"): `npm pack`,
// the tarball unpacked as node_modules/lead-enrich of a temporary project (its dependencies
// linked from this repository's node_modules, no registry), then loaded from that project in
// child processes, by `import` and by `require`, and type-checked by `tsc` as a user's code is.
// A missing `files` entry, export condition, export or type fails here, not in a user's build.
// Needs the build (`npm run build`): the tarball is packed with --ignore-scripts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { REPO_ROOT, refuseStaleBuild } from '../helpers/cli.js';
import { hangBound, run as runProcess, start } from '../helpers/processes.js';
import { REDIS_MISSING, startRedis, type RedisServer } from '../helpers/redis.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  /** What the script wrote to the file named by its first argument. */
  report: Record<string, any>;
  /** ms from the line 'broke' on stdout (if any) to the exit. */
  exitAfterBreakMs: number | undefined;
}

let project: string;
let packed: { files: string[] };
let tmp: string;

/** Runs `command` in the project; resolves with its output; killed after `timeoutMs`. */
async function run(command: string, args: string[], options: { env?: Record<string, string>; timeoutMs?: number; report?: false } = {}): Promise<Run> {
  const reportFile = path.join(project, `report-${Math.random().toString(36).slice(2)}.json`);
  const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...options.env };
  const child = start(command, options.report === false ? args : [...args, reportFile], {
    cwd: project,
    env,
    stdin: 'ignore',
    timeoutMs: options.timeoutMs ?? 30_000,
  });
  let brokeAt: number | undefined;
  child.stdout!.on('data', () => {
    if (brokeAt === undefined && child.output.stdout.includes('broke')) brokeAt = Date.now();
  });
  const exitedAt = new Promise<number>((resolve) => child.once('exit', () => resolve(Date.now())));
  const { code, stdout, stderr } = await child.result;
  const exitAfterBreakMs = brokeAt === undefined ? undefined : (await exitedAt) - brokeAt;
  const report = fs.existsSync(reportFile) ? JSON.parse(fs.readFileSync(reportFile, 'utf8')) : {};
  return { code, stdout, stderr, report, exitAfterBreakMs };
}

interface PackInfo {
  filename: string;
  files: { path: string }[];
}

/**
 * What `npm pack --json` printed: npm 10 and 11 print an array of one entry, npm 12 an object
 * keyed by the package's name. Anything a lifecycle script printed before it is skipped.
 */
function packInfo(printed: string): PackInfo {
  const start = printed.search(/^[[{]/m);
  const parsed = JSON.parse(printed.slice(start)) as PackInfo[] | Record<string, PackInfo>;
  const info = Array.isArray(parsed) ? parsed[0] : Object.values(parsed)[0];
  if (!info?.filename || !Array.isArray(info.files)) throw new Error(`npm pack --json printed no package: ${printed.slice(0, 200)}`);
  return info;
}

/** `npm pack` into a temporary folder, unpacked as the project's node_modules/lead-enrich. */
async function packIntoProject(): Promise<void> {
  refuseStaleBuild();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lead-enrich-package-'));
  // No request to a registry: npm's own update check is off.
  const pack = await runProcess('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], {
    cwd: REPO_ROOT,
    env: { ...process.env, npm_config_update_notifier: 'false' },
    timeoutMs: 120_000,
  });
  if (pack.code !== 0) throw new Error(`npm pack exited ${pack.code}: ${pack.stderr}`);
  const info = packInfo(pack.stdout);
  packed = { files: info.files.map((f) => f.path) };
  project = path.join(tmp, 'project');
  const installed = path.join(project, 'node_modules', 'lead-enrich');
  fs.mkdirSync(installed, { recursive: true });
  const tar = await runProcess('tar', ['-xzf', path.join(tmp, info.filename), '-C', installed, '--strip-components=1']);
  if (tar.code !== 0) throw new Error(`tar exited ${tar.code}: ${tar.stderr}`);
  // The dependencies a registry install would bring, linked. Of the type packages only
  // @types/node, as a user's project has: the package's types must not need our devDependencies.
  const modules = fs.realpathSync(path.join(REPO_ROOT, 'node_modules'));
  for (const name of fs.readdirSync(modules)) {
    if (name === 'lead-enrich' || name === '.bin' || name.startsWith('.') || name === '@types') continue;
    fs.symlinkSync(path.join(modules, name), path.join(project, 'node_modules', name));
  }
  fs.mkdirSync(path.join(project, 'node_modules', '@types'));
  fs.symlinkSync(path.join(modules, '@types', 'node'), path.join(project, 'node_modules', '@types', 'node'));
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  for (const [name, text] of Object.entries(SCRIPTS)) fs.writeFileSync(path.join(project, name), text);
}

let redis: RedisServer | undefined;
let breakSandbox: Sandbox;
const runs: Record<'esm' | 'cjs' | 'types' | 'break', Promise<Run>> = {} as never;

beforeAll(async () => {
  await packIntoProject();
  [redis, breakSandbox] = await Promise.all([
    REDIS_MISSING === undefined ? startRedis() : undefined,
    startSandbox({ port: 0, rpm: 60_000, latencyMs: [5, 30], notFoundRate: 0 }),
  ]);
  const tsc = path.join(fs.realpathSync(path.join(REPO_ROOT, 'node_modules')), 'typescript', 'bin', 'tsc');
  // All at once: the type check is CPU, the others mostly wait on the network.
  runs.types = run(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false', '--listFiles'], { timeoutMs: 50_000, report: false });
  runs.esm = run(process.execPath, ['library.mjs']);
  runs.cjs = run(process.execPath, ['library.cjs']);
  // The break run's sandbox lives here, not in the child, so that only lead-enrich's own
  // handles (sockets, timers, the store, Redis) could keep the child alive after the loop.
  // The break run holds a Redis connection too: without a redis-server its two tests are skipped.
  if (redis) {
    runs.break = run(process.execPath, ['break.mjs'], {
      env: { BASE_URL: breakSandbox.baseUrl, TOKEN: breakSandbox.token, REDIS_URL: redis.url, STORE: path.join(tmp, 'break.sqlite') },
    });
  }
  await Promise.all(Object.values(runs));
}, hangBound(90_000));

afterAll(async () => {
  await Promise.all([breakSandbox?.close(), redis?.stop()]);
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('holds the build, the README and the docs it links to, not the sources or the tests', () => {
    expect(packed.files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'docs/reference.md',
        'docs/library.md',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/sandbox/index.js',
        'dist/sandbox/index.d.ts',
        'dist/cli/main.js',
        'dist/cli/bundle.js',
      ]),
    );
    expect(packed.files.filter((f) => /^(src|test|bench|fixtures)\//.test(f))).toEqual([]);
    // The build's own record of what it compiled (tsconfig.json, tsBuildInfoFile) is not the package's.
    expect(packed.files).not.toContain('dist/.tsbuildinfo');
  });

  it('loads by import: the library surface, and no output on stdout', async () => {
    const r = await runs.esm;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.report.exports).toEqual({
      enrich: 'function',
      enrichRows: 'function',
      LeadClient: 'function',
      LeadError: 'function',
      startSandbox: 'function',
      RowError: 'function',
    });
  });

  it('the sandbox is its own entry, lead-enrich/sandbox: the main entry does not export it', async () => {
    const esm = await runs.esm;
    expect(esm.report.sandboxEntry).toEqual({ mainHasSandbox: false, sandboxExports: ['startSandbox'] });
    const cjs = await runs.cjs;
    expect(cjs.report.sandboxEntry).toEqual({ mainHasSandbox: false, sameStartSandbox: true });
  });

  it('loads by require: the same module, the same classes', async () => {
    const r = await runs.cjs;
    expect(r.code, r.stderr).toBe(0);
    expect(r.report).toMatchObject({ sameModule: true, sameLeadError: true, configErrorIsLeadError: true, code: 'config' });
    expect(r.report.rows).toEqual([
      { row: 1, status: 'found', billing: 'charged' },
      { row: 2, status: 'error', billing: 'none', code: 'bad_request', isLeadError: true },
    ]);
  });

  it("type-checks a user's TypeScript (node16 resolution, strict, no skipLibCheck) and reports a type error", async () => {
    const r = await runs.types;
    const errors = r.stdout.split('\n').filter((line) => /error TS\d+/.test(line));
    // The deliberate mistake in broken.ts is the only error: the check can fail, and nothing
    // else did (a type the user cannot name, a .d.ts that needs a devDependency's types).
    expect(errors, r.stdout + r.stderr).toHaveLength(1);
    expect(errors[0]).toMatch(/^broken\.ts\(4,\d+\): error TS2322: Type .* is not assignable to type 'number'/);
  });

  it('its public types reach none of the types of what only --redis uses (ioredis and its packages, Bottleneck): a strict check needs @types/node alone', async () => {
    const r = await runs.types;
    const files = r.stdout.split('\n').filter((line) => line.startsWith('/'));
    expect(files.some((file) => file.includes('/lead-enrich/dist/index.d.ts'))).toBe(true);
    expect(files.filter((file) => /\/node_modules\/(ioredis|@ioredis|redis-errors|bottleneck)\//.test(file))).toEqual([]);
    // Nor the run's own parts those types would bring (the coordinator, the run's state).
    expect(files.filter((file) => /\/lead-enrich\/dist\/(cluster\/|run\/open-run\.d\.ts)/.test(file))).toEqual([]);
  });
});

describe('enrichRows through the package', () => {
  it('yields results in input order although answers come back out of order', async () => {
    const { ordering } = (await runs.esm).report;
    expect(ordering.rows).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(ordering.ids).toEqual(ordering.rows);
    expect(ordering.first).toEqual({ status: 'found', source: 'email', billing: 'charged', error: null, hasLead: true });
    expect(ordering.lookups).toBe(200);
    // Answers came back in another order than the rows'.
    expect(ordering.answeredInInputOrder).toBe(false);
  });

  it('pulls rows only as results are consumed: a slow consumer holds a bounded window', async () => {
    const { pull } = (await runs.esm).report;
    expect(pull.consumed).toBe(300);
    // The reorder window (200 here, 4096 by default: the contract's "a few thousand rows") and
    // the batches being read (64 rows each).
    expect(pull.maxAhead).toBeLessThanOrEqual(200 + 2 * 64);
    expect(pull.pulled).toBeLessThan(pull.total);
  });

  it('break stops the lookups: the server sees no new request after the loop ends', async (context) => {
    // Skipped without a redis-server on PATH (the runs share a real one); .ci/run installs it.
    if (REDIS_MISSING !== undefined) return context.skip(REDIS_MISSING);
    // Requests are counted where they are made (http.Agent's addRequest) up to the end of the
    // loop, and the server's count, read once everything sent has had time to land, may not be
    // higher. Not "the server's count at the break": a request written just before the break may
    // reach a busy server long after it. A request asked for before the break that got had not
    // yet put on the wire is refused at the closed agent (after the break: not counted, not sent).
    const { pull } = (await runs.esm).report;
    expect(pull.issuedAtBreak).toBeGreaterThan(0);
    expect(pull.requests).toBeLessThanOrEqual(pull.issuedAtBreak);
    expect(pull.lookups).toBeLessThan(pull.pulled + 1);
    const r = await runs.break;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(r.report.issuedAtBreak).toBeGreaterThan(150);
    expect(breakSandbox.stats.requests).toBeLessThanOrEqual(r.report.issuedAtBreak);
    expect(r.report.issuedAtBreak).toBeLessThan(r.report.pulled + 10);
  });

  it('break releases everything (sockets, timers, store, Redis): the process exits on its own', async (context) => {
    // Skipped without a redis-server on PATH (the runs share a real one); .ci/run installs it.
    if (REDIS_MISSING !== undefined) return context.skip(REDIS_MISSING);
    const r = await runs.break;
    expect(r.code, r.stderr).toBe(0);
    expect(r.report).toMatchObject({ seen: 150, clientAnswers: 3 });
    expect(r.exitAfterBreakMs).toBeLessThan(5_000);
  });
});

describe('enrich() with streams through the package', () => {
  it('reads a Readable, writes the output and the sidecar to Writables, and nothing to stdout', async () => {
    const r = await runs.esm;
    expect(r.stdout).toBe('');
    const { streams } = r.report;
    expect(streams.output[0]).toMatch(/^email,name,lead_status,/);
    expect(streams.output.slice(1).map((line: string) => line.split(',')[2])).toEqual(['found', 'error', 'found']);
    expect(streams.errors[0]).toBe('row,email,name,error_code,error_message');
    expect(streams.errors[1]).toMatch(/^2,broken@,Bob,invalid_input,/);
    expect(streams.summary).toEqual({ rows: 3, status: { found: 2, not_found: 0, error: 1, skipped: 0 } });
  });

  it('a Writable that fails rejects the run with a LeadError instead of crashing the process', async () => {
    const { failingOutput } = (await runs.esm).report;
    expect(failingOutput).toMatchObject({ isLeadError: true, code: 'unwritable_output' });
    expect(failingOutput.message).toMatch(/^Cannot write the output: disk full; /);
  });
});

describe('LeadClient through the package', () => {
  it('retries 503s until the call succeeds; retry: false surfaces a LeadError subclass with its code', async () => {
    const { retry } = (await runs.esm).report;
    expect(retry.answers).toBe(30);
    expect(retry.faults).toBeGreaterThan(0);
    expect(retry.noRetry).toEqual({ name: 'ServerError', isLeadError: true, code: 'server_error', status: 503 });
  });

  it('waits out a 429 when retrying; with rpm it never meets one; retry: false surfaces it', async () => {
    const { rate } = (await runs.esm).report;
    expect(rate.unpaced).toMatchObject({ answers: 12 });
    expect(rate.unpaced.rateLimited).toBeGreaterThan(0);
    expect(rate.paced).toEqual({ answers: 12, rateLimited: 0 });
    expect(rate.account).toEqual({ answers: 12, rateLimited: 0, limitsReads: 1 });
    expect(rate.noRetry).toEqual({ name: 'RateLimitedError', isLeadError: true, code: 'rate_limited' });
  });

  it('refuses unknown options, and the sandbox its bad ones, with LeadErrors', async () => {
    const { refusals } = (await runs.esm).report;
    expect(refusals.client).toEqual({
      isLeadError: true,
      code: 'config',
      message: expect.stringContaining("Unknown LeadClient option 'rmp' (did you mean 'rpm'?)"),
    });
    expect(refusals.sandbox).toEqual({ isLeadError: true, code: 'config', message: expect.stringContaining('Invalid sandbox option port') });
  });
});

// ---------------------------------------------------------------------------------------------
// The scripts the project runs. Each writes its findings as JSON to the file named by its last
// argument; the assertions are above.

const LIBRARY_MJS = String.raw`
import fs from 'node:fs';
import http from 'node:http';
import { Readable, Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import * as main from 'lead-enrich';
import * as sandboxEntry from 'lead-enrich/sandbox';
import { enrich, enrichRows, LeadClient, LeadError, RowError } from 'lead-enrich';
import { startSandbox } from 'lead-enrich/sandbox';

const report = {};
report.sandboxEntry = { mainHasSandbox: 'startSandbox' in main, sandboxExports: Object.keys(sandboxEntry) };
report.exports = Object.fromEntries(Object.entries({ enrich, enrichRows, LeadClient, LeadError, startSandbox, RowError }).map(([k, v]) => [k, typeof v]));
const describeError = (e) => ({ name: e.constructor.name, isLeadError: e instanceof LeadError, code: e.code });
async function rejection(promise) {
  try { await promise; } catch (error) { return error; }
  throw new Error('expected a rejection');
}

const sandbox = await startSandbox({ port: 0, rpm: 60000, latencyMs: [0, 30], notFoundRate: 0, credits: 1000000 });
const api = { baseUrl: sandbox.baseUrl, token: sandbox.token, store: ':memory:' };
const lookups = () => sandbox.stats.byOperation.lookup_email;

// Ordering: 200 rows, each answered after 0 to 30 ms. A proxy in front of the sandbox notes the
// order in which the answers come back, to show that it is not the input order.
{
  const answered = [];
  const proxy = http.createServer(async (req, res) => {
    const upstream = await fetch(new URL(req.url, sandbox.baseUrl), { method: req.method, headers: { authorization: req.headers.authorization } });
    const body = await upstream.text();
    const email = new URL(req.url, 'http://x').searchParams.get('email_address');
    if (email) answered.push(Number(email.slice(1, email.indexOf('@'))));
    res.writeHead(upstream.status, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const latent = { ...api, baseUrl: 'http://127.0.0.1:' + proxy.address().port + '/v2' };
  const rows = Array.from({ length: 200 }, (_, i) => ({ id: i + 1, email: 'p' + (i + 1) + '@order' + (i % 5) + '.example.com' }));
  const results = [];
  for await (const r of enrichRows(rows, latent)) results.push(r);
  proxy.closeAllConnections();
  proxy.close();
  const first = results[0];
  report.ordering = {
    rows: results.map((r) => r.row), ids: results.map((r) => r.input.id), lookups: answered.length, answeredInInputOrder: answered.every((n, i) => i === 0 || n > answered[i - 1]),
    first: { status: first.status, source: first.source, billing: first.billing, error: first.error ?? null, hasLead: typeof first.lead?.name === 'string' },
  };
}

// Pull-based reading and break: a cursor-like generator of 20000 rows, consumed slowly.
{
  const total = 20000;
  let pulled = 0, consumed = 0, maxAhead = 0;
  async function* cursor() {
    for (let i = 1; i <= total; i += 1) { pulled += 1; yield { email: 'q' + i + '@pull' + (i % 9) + '.example.com' }; }
  }
  const start = lookups();
  const startRequests = sandbox.stats.requests;
  // Requests counted where they are made (http.Agent), not by when the server sees them.
  let issued = 0;
  const addRequest = http.Agent.prototype.addRequest;
  http.Agent.prototype.addRequest = function (...args) {
    issued += 1;
    return addRequest.apply(this, args);
  };
  // A window of 200 rows instead of the default 4096: the same bound, a tenth of the lookups.
  for await (const r of enrichRows(cursor(), { ...api, tuning: { reorderWindow: 200 } })) {
    consumed += 1;
    maxAhead = Math.max(maxAhead, pulled - consumed);
    await sleep(2);
    if (consumed === 300) break;
  }
  const issuedAtBreak = issued;
  await sleep(550);
  http.Agent.prototype.addRequest = addRequest;
  report.pull = { total, pulled, consumed, maxAhead, issuedAtBreak, requests: sandbox.stats.requests - startRequests, lookups: lookups() - start };
}

// enrich() with a Readable in and Writables out.
{
  const collect = () => { const chunks = []; const stream = new Writable({ write(c, _e, cb) { chunks.push(c); cb(); } }); return { stream, lines: () => Buffer.concat(chunks).toString('utf8').trim().split('\n') }; };
  const output = collect(), errors = collect();
  const input = Readable.from(['email,name\nann@streams.example.com,Ann\nbroken@,Bob\ncy@streams.example.com,Cy\n']);
  const summary = await enrich({ ...api, input, output: output.stream, errors: errors.stream });
  report.streams = { output: output.lines(), errors: errors.lines(), summary: { rows: summary.rows, status: summary.status } };
  const failing = new Writable({ write(_c, _e, cb) { cb(new Error('disk full')); } });
  const error = await rejection(enrich({ ...api, input: Readable.from(['email\nann@streams.example.com\n']), output: failing }));
  report.failingOutput = { ...describeError(error), message: error.message };
}

// The retrying client: 503s injected by the sandbox.
{
  const faulty = await startSandbox({ port: 0, rpm: 60000, faults: { error503: 0.3 }, seed: 7, notFoundRate: 0 });
  const client = new LeadClient({ baseUrl: faulty.baseUrl, token: faulty.token, retry: { retries: 8, baseDelayMs: 2, maxDelayMs: 10 } });
  let answers = 0;
  for (let i = 1; i <= 30; i += 1) if ((await client.lookupEmail('r' + i + '@retry.example.com')).lead.name) answers += 1;
  const faults = faulty.stats.faults.error503;
  faulty.setFaults({ error503: 1 });
  const once = new LeadClient({ baseUrl: faulty.baseUrl, token: faulty.token, retry: false });
  const error = await rejection(once.lookupEmail('r1@retry.example.com'));
  report.retry = { answers, faults, noRetry: { ...describeError(error), status: error.status } };
  await Promise.all([client.close(), once.close()]);
  await faulty.close();
}

// Rate limits: 5 per 500 ms window; twelve calls at once, with and without the gate.
{
  const RPM = 5, WINDOW_MS = 500;
  async function burst(options) {
    const s = await startSandbox({ port: 0, rpm: RPM, windowMs: WINDOW_MS });
    const client = new LeadClient({ baseUrl: s.baseUrl, token: s.token, retry: { baseDelayMs: 2, maxDelayMs: 10 }, windowMs: WINDOW_MS, ...options });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => client.lookupEmail('b' + i + '@rate.example.com')));
    await client.close();
    await s.close();
    return { answers: answers.length, rateLimited: s.stats.rateLimited, limitsReads: s.stats.byOperation.limits };
  }
  const [unpaced, paced, account] = await Promise.all([burst({}), burst({ rpm: RPM }), burst({ rpm: 'account' })]);
  const s = await startSandbox({ port: 0, rpm: 1, windowMs: 60000 });
  const once = new LeadClient({ baseUrl: s.baseUrl, token: s.token, retry: false });
  await once.lookupEmail('first@rate.example.com');
  const error = await rejection(once.lookupEmail('second@rate.example.com'));
  await once.close();
  await s.close();
  report.rate = { unpaced, paced: { answers: paced.answers, rateLimited: paced.rateLimited }, account, noRetry: describeError(error) };
}

// Refusals are LeadErrors too.
{
  const client = await rejection((async () => new LeadClient({ baseUrl: sandbox.baseUrl, token: sandbox.token, rmp: 5 }))());
  const box = await rejection(startSandbox({ port: -1 }));
  report.refusals = {
    client: { isLeadError: client instanceof LeadError, code: client.code, message: client.message },
    sandbox: { isLeadError: box instanceof LeadError, code: box.code, message: box.message },
  };
}

await sandbox.close();
fs.writeFileSync(process.argv[2], JSON.stringify(report));
`;

const LIBRARY_CJS = String.raw`
const fs = require('node:fs');
const lib = require('lead-enrich');
const { enrichRows, LeadError, ConfigError, LeadClient } = lib;
const { startSandbox } = require('lead-enrich/sandbox');

(async () => {
  const esm = await import('lead-enrich');
  const report = { sameModule: esm.enrichRows === enrichRows && esm.LeadClient === LeadClient, sameLeadError: esm.LeadError === LeadError };
  report.sandboxEntry = { mainHasSandbox: 'startSandbox' in lib, sameStartSandbox: (await import('lead-enrich/sandbox')).startSandbox === startSandbox };
  try { new LeadClient({}); } catch (error) { report.configErrorIsLeadError = error instanceof ConfigError && error instanceof LeadError; report.code = error.code; }
  const sandbox = await startSandbox({ port: 0, notFoundRate: 0 });
  report.rows = [];
  for await (const r of enrichRows([{ email: 'ann@cjs.example.com' }, { email: 'reject@cjs.example.com' }], { baseUrl: sandbox.baseUrl, token: sandbox.token, store: ':memory:' })) {
    report.rows.push({ row: r.row, status: r.status, billing: r.billing, ...(r.error ? { code: r.error.code, isLeadError: r.error instanceof LeadError } : {}) });
  }
  await sandbox.close();
  fs.writeFileSync(process.argv[2], JSON.stringify(report));
})();
`;

// No sandbox here (it is in the test process): what is left open after the loop is lead-enrich's.
const BREAK_MJS = String.raw`
import fs from 'node:fs';
import http from 'node:http';
import { enrichRows, LeadClient } from 'lead-enrich';

// Every HTTP request this process makes goes through an http.Agent: count them there.
let issued = 0;
const addRequest = http.Agent.prototype.addRequest;
http.Agent.prototype.addRequest = function (...args) {
  issued += 1;
  return addRequest.apply(this, args);
};

// A paced, retrying client used and closed: it must not keep the process alive either.
const client = new LeadClient({ baseUrl: process.env.BASE_URL, token: process.env.TOKEN, rpm: 'account' });
let clientAnswers = 0;
for (const email of ['x1@brk.example.com', 'x2@brk.example.com', 'x3@brk.example.com']) if ((await client.lookupEmail(email)).lead) clientAnswers += 1;
await client.close();

let pulled = 0;
async function* rows() {
  for (let i = 1; i <= 100000; i += 1) { pulled += 1; yield { email: 'b' + i + '@brk' + (i % 11) + '.example.com' }; }
}
const options = { baseUrl: process.env.BASE_URL, token: process.env.TOKEN, store: process.env.STORE, redis: process.env.REDIS_URL };
let seen = 0;
for await (const result of enrichRows(rows(), options)) {
  if (++seen === 150) break;
}
process.stdout.write('broke\n');
fs.writeFileSync(process.argv[2], JSON.stringify({ seen, pulled, clientAnswers, issuedAtBreak: issued }));
// No process.exit: the test waits for the process to end on its own.
`;

const CONSUMER_TS = `
import {
  enrich, enrichRows, LeadClient, LeadError, RowError,
  type Billing, type ClientRetryOptions, type EnrichOptions, type EnrichRowsOptions, type EnrichSummary, type ErrorCode,
  type Extra, type Lead, type LeadClientOptions, type ResultStoreStats, type RowResult, type RowStatus,
  type Shard,
} from 'lead-enrich';
import * as mainEntry from 'lead-enrich';
import { startSandbox, type Sandbox, type SandboxCosts, type SandboxOptions } from 'lead-enrich/sandbox';
import { Readable, Writable } from 'node:stream';

const extras: Extra[] = ['mx', 'company'];
const shard: Shard = { index: 1, count: 2 };
const options: EnrichOptions = { input: Readable.from(['email\\n']), output: new Writable(), with: extras, shard, maxErrors: '5%' };
const rowsOptions: EnrichRowsOptions = { header: ['email'], store: ':memory:', rpm: 60 };
const retry: ClientRetryOptions = { retries: 2, baseDelayMs: 100 };
const clientOptions: LeadClientOptions = { baseUrl: 'https://api.example.com/v2', token: 'secret', retry, rpm: 'account' };
const costs: SandboxCosts = { person: 4, company: 1, mx: 1, whois: 1 };

function explain(error: unknown): string {
  if (!(error instanceof LeadError)) return 'not ours';
  const code: ErrorCode = error.code;
  switch (code) {
    case 'rate_limited':
    case 'server_error':
      return 'try again later';
    case 'unauthorized':
      return 'fix the token';
    default:
      return code;
  }
}

export async function main(rows: AsyncIterable<{ email: string }>): Promise<number> {
  const summary: EnrichSummary = await enrich(options);
  const byStatus: Record<RowStatus, number> = { found: 0, not_found: 0, error: 0, skipped: 0 };
  for await (const result of enrichRows(rows, rowsOptions)) {
    const r: RowResult = result;
    byStatus[r.status] += 1;
    const billing: Billing = r.billing;
    const lead: Lead | undefined = r.source === 'email' ? (r.lead as Lead | undefined) : undefined;
    const name: string | undefined = lead?.name;
    const why: RowError | undefined = r.error;
    if (why) explain(why);
    void billing, name;
  }
  const client = new LeadClient(clientOptions);
  const credits: number = (await client.getCredits()).total_remaining_credits;
  await client.close();
  const sandboxOptions: SandboxOptions = { port: 0, costs };
  const sandbox: Sandbox = await startSandbox(sandboxOptions);
  // @ts-expect-error: the sandbox is not on the main entry
  void mainEntry.startSandbox;
  const stats: ResultStoreStats | undefined = undefined;
  // @ts-expect-error: not an error code
  const wrong: ErrorCode = 'no_such_code';
  // @ts-expect-error: LeadClient refuses unknown options at compile time too
  new LeadClient({ ...clientOptions, rmp: 5 });
  void stats, wrong, explain;
  await sandbox.close();
  return summary.rows + credits + byStatus.found;
}
`;

const BROKEN_TS = `
import { enrichRows } from 'lead-enrich';
for await (const result of enrichRows([{ email: 'a@b.com' }])) {
  const n: number = result.status;
  void n;
}
`;

const TSCONFIG = JSON.stringify({
  compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'es2022', strict: true, noEmit: true, types: ['node'], skipLibCheck: false },
  files: ['consumer.ts', 'broken.ts'],
});

const SCRIPTS: Record<string, string> = {
  'library.mjs': LIBRARY_MJS,
  'library.cjs': LIBRARY_CJS,
  'break.mjs': BREAK_MJS,
  'consumer.ts': CONSUMER_TS,
  'broken.ts': BROKEN_TS,
  'tsconfig.json': TSCONFIG,
};
