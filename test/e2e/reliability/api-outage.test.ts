// An API that fails (cli-contract.md, "An API that fails", "The file's problems are not
// the API's"): an outage is one event — a few probes, not a request per row, the rows held and
// then looked up — a dead API is given up on after --patience (exit 2, the rest skipped with
// api_unavailable), and the file's own bad keys exit 5. Driven through the CLI against the
// sandbox's outage mode (src/sandbox/outage.ts).
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NetworkError } from '../../../src/api/errors.js';
import { enrich } from '../../../src/run/enrich.js';
import { enrichRows } from '../../../src/run/enrich-rows.js';
import { planRun } from '../../../src/run/dry-run.js';
import { runCli } from '../../helpers/cli.js';
import { emails, makeTempDir, readCsvObjects, writeCsv } from '../../helpers/files.js';
import type { OutageOptions, Sandbox } from '../../../src/sandbox/server.js';
import { closeAll, envFor, expectNoCrash, expectRowsMatchSandbox, lookupsSeen, sandbox, sleep, until } from './support.js';
import { hangBound } from '../../helpers/processes.js';

afterAll(closeAll);

/** Sets the sandbox's outage once it has seen `lookups` lookups; true when it did, false if `ended` came first. */
async function outageAfterLookups(s: Sandbox, lookups: number, outage: OutageOptions, ended: AbortSignal): Promise<boolean> {
  while (lookupsSeen(s) < lookups) {
    if (ended.aborted) return false;
    await sleep(5);
  }
  s.setOutage(outage);
  return true;
}

describe.concurrent('an outage in the middle of a run (acceptance: 8 s, paced at 20/s, concurrency 4)', () => {
  it.each(['error503', 'reset'] as const)(
    '%s: every row right, at most 25 lookups sent while down, and stderr says so',
    async (kind) => {
      const rows = 200; // 10 s at 20/s
      const s = await sandbox({ notFoundRate: 0.1 });
      const dir = makeTempDir();
      const keys = emails(rows, `out-${kind}`);
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...keys.map((k) => [k])]);
      // The outage begins 2 s into the run (its 40th lookup at 20/s), not 2 s after the sandbox
      // started: a CLI that takes seconds to start on a loaded machine would otherwise meet part of
      // the outage, or none of it.
      const runEnded = new AbortController();
      const outageBegins = outageAfterLookups(s, 40, { forMs: 8_000, kind }, runEnded.signal);
      const started = Date.now();
      const r = await runCli(['enrich', input, '--rpm', '1200', '--concurrency', '4', '--json'], { env: envFor(s, dir), timeoutMs: 60_000 });
      const took = Date.now() - started;
      runEnded.abort();
      expect(await outageBegins).toBe(true);
      expectNoCrash(r);
      expect(r.code, r.stderr).toBe(0);
      expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys, { notFoundRate: 0.1 });
      expect(s.stats.outage.lookups).toBeLessThanOrEqual(25);
      expect(lookupsSeen(s)).toBeLessThanOrEqual(rows + 25);
      expect(r.stderr).toMatch(/The API is unavailable \(.*\): holding the rows/);
      expect(r.stderr).toMatch(/The API is back after/);
      const summary = JSON.parse(r.stdout);
      expect(summary.apiUnavailableMs).toBeGreaterThan(5_000);
      // The pace (10 s) + the outage (8 s) + 15 s.
      expect(took).toBeLessThan(10_000 + 8_000 + 15_000);
    },
    hangBound(60_000),
  );
});

describe.concurrent('a dead API (acceptance: 300 rows, --patience 5s)', () => {
  const deadRun = async (kind: 'error503' | 'hang', extra: string[]) => {
    // A plan's rate (600 RPM): the run's concurrency is sized from it, and what is in flight when the
    // API goes down is all that reaches it before the breaker holds the rest.
    const s = await sandbox({ rpm: 600, outage: { afterMs: 0, kind } });
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(300, `dead-${kind}`).map((k) => [k])]);
    const started = Date.now();
    const r = await runCli(['enrich', input, '--json', ...extra], { env: envFor(s, dir), timeoutMs: 60_000 });
    return { r, s, dir, took: Date.now() - started };
  };

  it.each([
    ['503 for good', 'error503', ['--patience', '5s']],
    ['503 for good, --max-errors 10', 'error503', ['--patience', '5s', '--max-errors', '10']],
    ['requests that hang, --request-timeout 1000', 'hang', ['--patience', '4s', '--request-timeout', '1000']],
  ] as const)(
    '%s: exit 2 within 45 s, at most 30 lookups, every row written, the rest skipped with api_unavailable',
    async (_name, kind, extra) => {
      const { r, s, dir, took } = await deadRun(kind, [...extra]);
      expectNoCrash(r);
      expect(r.code, r.stderr).toBe(2);
      expect(took).toBeLessThan(45_000);
      expect(lookupsSeen(s)).toBeLessThanOrEqual(30);
      const summary = JSON.parse(r.stdout);
      expect(summary).toMatchObject({ rows: 300, stoppedBy: 'api_unavailable' });
      expect(summary.status.error).toBeLessThanOrEqual(10 + summary.concurrency);
      expect(summary.errorCodes.api_unavailable).toBe(300 - summary.status.error - summary.status.found - summary.status.not_found);
      expect(summary.apiUnavailableMs).toBeGreaterThanOrEqual(3_500);
      expect(readCsvObjects(path.join(dir, 'in.enriched.csv'))).toHaveLength(300);
      expect(r.stderr).toMatch(/The API stayed unavailable for .* \(--patience \ds\): the rows not looked up are skipped/);
    },
    hangBound(60_000),
  );

  it(
    'the same command finishes the work once the API is back, paying nothing twice',
    async () => {
      const s = await sandbox({ outage: { afterMs: 0, kind: 'error503' } });
      const dir = makeTempDir();
      const keys = emails(100, 'later');
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...keys.map((k) => [k])]);
      const first = await runCli(['enrich', input, '--patience', '2s', '-q'], { env: envFor(s, dir), timeoutMs: 30_000 });
      expect(first.code, first.stderr).toBe(2);
      expect(first.stderr).toMatch(/the API stayed unavailable past --patience \(2s\)/);
      s.setOutage(undefined);
      const second = await runCli(['enrich', input, '-q'], { env: envFor(s, dir), timeoutMs: 30_000 });
      expect(second.code, second.stderr).toBe(0);
      expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys);
    },
    hangBound(40_000),
  );
});

describe.concurrent('an API down when the run starts is an outage, not a configuration error', () => {
  it(
    'refusing connections at start, up 15 s later (--patience 60s): exit 0, every row right, stderr says unavailable and back',
    async () => {
      // A port nobody listens on once this sandbox is closed; the API comes up on it 15 s into the run.
      const gone = await sandbox();
      const { port } = new URL(gone.baseUrl);
      await gone.close();
      const dir = makeTempDir();
      const keys = emails(100, 'later-up');
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...keys.map((k) => [k])]);
      const running = runCli(['enrich', input, '--patience', '60s'], { env: envFor(gone, dir), timeoutMs: 60_000 });
      await sleep(15_000);
      const up = await sandbox({ port: Number(port), notFoundRate: 0.1 });
      const r = await running;
      expectNoCrash(r);
      expect(r.code, r.stderr).toBe(0);
      expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys, { notFoundRate: 0.1 });
      expect(r.stderr).toMatch(
        /The API is unavailable \(Cannot reach 127\.0\.0\.1:\d+ \(\/account\/credits\): connection refused.*\): holding the rows, one request at a time until it answers, for up to --patience 1m/,
      );
      // Back at the first probe after it came up (probes 1, 2.5, 4.75, 8.1, 13.2, 20.8 s after the run
      // found it down). The 15 s count from the test's start: a run that took seconds to start on a
      // loaded machine finds it down for less (beside the reliability suite the line fell outside 10-29 s).
      const back = Number(/The API is back after (\d+)s/.exec(r.stderr)?.[1]);
      expect(back, r.stderr).toBeGreaterThanOrEqual(1);
      expect(back).toBeLessThanOrEqual(29);
      expect(r.stderr).toMatch(/The API was unavailable for \d+s \d+ms in all; the rows waited for it/);
      expect(lookupsSeen(up)).toBe(100);
    },
    hangBound(60_000),
  );

  it(
    '503 to every call for 6 s: exit 0, every row right, a handful of probes, stderr says unavailable and back',
    async () => {
      const s = await sandbox({ notFoundRate: 0.1 });
      const dir = makeTempDir();
      const keys = emails(100, 'blip');
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...keys.map((k) => [k])]);
      // 6 s from the run's first call (not from the test's: a loaded machine may take seconds to start the CLI).
      s.setOutage({ kind: 'error503', scope: 'all' });
      const running = runCli(['enrich', input, '--json'], { env: envFor(s, dir), timeoutMs: 40_000 });
      await until(() => s.stats.outage.requests > 0, 'the first call', 30_000);
      s.setOutage({ forMs: 6_000, kind: 'error503', scope: 'all' });
      const r = await running;
      expectNoCrash(r);
      expect(r.code, r.stderr).toBe(0);
      expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys, { notFoundRate: 0.1 });
      expect(r.stderr).toMatch(/The API is unavailable \(Server error 503 Service Unavailable from \/account\/credits \(no body\)\): holding the rows/);
      expect(r.stderr).toMatch(/The API is back after/);
      // The first read and its probes at growing intervals (1, 1.5, 2.3, 3.4 s ...), no retry storm.
      expect(s.stats.outage.requests).toBeGreaterThanOrEqual(2);
      expect(s.stats.outage.requests).toBeLessThanOrEqual(6);
      expect(JSON.parse(r.stdout).apiUnavailableMs).toBeGreaterThan(3_000);
    },
    hangBound(60_000),
  );

  it.each([
    ['refusing connections', (s: Sandbox) => s.close()],
    ['503 to every call', (s: Sandbox) => s.setOutage({ kind: 'error503', scope: 'all' })],
  ])(
    'down for good (%s), --patience 5s, part of the rows stored: exit 2 within 30 s, stored rows answered, the others skipped with api_unavailable',
    async (_name, down) => {
      const s = await sandbox({ notFoundRate: 0.1 });
      const dir = makeTempDir();
      const keys = emails(120, 'down-for-good');
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...keys.map((k) => [k])]);
      const stored = writeCsv(path.join(dir, 'first.csv'), [['email'], ...keys.slice(0, 40).map((k) => [k])]);
      const env = envFor(s, dir);
      const first = await runCli(['enrich', stored, '-q'], { env });
      expect(first.code, first.stderr).toBe(0);
      await down(s);
      const started = Date.now();
      const r = await runCli(['enrich', input, '--patience', '5s', '--json'], { env, timeoutMs: 40_000 });
      expectNoCrash(r);
      expect(r.code, r.stderr).toBe(2);
      expect(Date.now() - started).toBeLessThan(30_000);
      const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
      expect(rows.map((row) => row.email)).toEqual(keys);
      const answered = rows.slice(0, 40).map((row) => [row.lead_status, row.lead_billing]);
      expect(
        answered.every(([status, billing]) => (status === 'found' || status === 'not_found') && billing === 'cached'),
        JSON.stringify(answered),
      ).toBe(true);
      expect(rows.slice(40).every((row) => row.lead_status === 'skipped')).toBe(true);
      const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
      expect(sidecar.map((row) => [row.row, row.error_code])).toEqual(keys.slice(40).map((_, i) => [String(41 + i), 'api_unavailable']));
      const summary = JSON.parse(r.stdout);
      expect(summary).toMatchObject({
        exitCode: 2,
        version: expect.stringMatching(/^\d+\.\d+\.\d+/),
        rows: 120,
        stoppedBy: 'api_unavailable',
        accountRead: false,
        errorCodes: { api_unavailable: 80 },
      });
      expect(r.stderr).toMatch(/The API is unavailable \(.*\): holding the rows/);
      expect(r.stderr).toMatch(/The API stayed unavailable for 5s \d+ms \(--patience 5s\): the rows not looked up are skipped/);
      expect(r.stderr).toMatch(/Requests: 0 \(the API was unavailable from the start\)/);
    },
    hangBound(60_000),
  );
});

describe("the file's problems are not the API's", () => {
  it(
    'malformed, refused and blank keys with --max-errors 2%: exit 5, not 4; a re-run sends no refused key; a waterfall finds the row by its URL',
    async () => {
      const s = await sandbox({ notFoundRate: 0 });
      const dir = makeTempDir();
      const keys = emails(100, 'crm');
      keys[3] = 'jane.reject@acme.com'; // the sandbox refuses (400) any key holding "reject"
      keys[7] = 'joe.reject@acme.com';
      keys[9] = 'broken@';
      keys[11] = '';
      const input = writeCsv(path.join(dir, 'crm.csv'), [['email', 'linkedin'], ...keys.map((k, i) => [k, `https://www.linkedin.com/in/crm-${i}`])]);
      const env = envFor(s, dir);
      const first = await runCli(['enrich', input, '--max-errors', '2%', '--json'], { env });
      expect(first.code, first.stderr).toBe(5);
      expect(JSON.parse(first.stdout).errorCodes).toEqual({ bad_request: 2, invalid_input: 1, no_key: 1 });
      const sent = lookupsSeen(s);
      const again = await runCli(['enrich', input, '--max-errors', '2%', '--json'], { env });
      expect(again.code, again.stderr).toBe(5);
      expect(lookupsSeen(s)).toBe(sent);
      const waterfall = await runCli(['enrich', input, '--by', 'email,url', '-o', path.join(dir, 'w.csv'), '--json'], { env });
      expect(waterfall.code, waterfall.stderr).toBe(0);
      const rows = readCsvObjects(path.join(dir, 'w.csv'));
      expect([3, 7, 9, 11].map((i) => [rows[i]!.lead_status, rows[i]!.lead_source])).toEqual([
        ['found', 'url'],
        ['found', 'url'],
        ['found', 'url'],
        ['found', 'url'],
      ]);
      // --refresh asks the API again about the refused keys.
      const refreshed = await runCli(['enrich', input, '--refresh', '-o', path.join(dir, 'r.csv'), '--json'], { env });
      expect(refreshed.code).toBe(5);
      expect(lookupsSeen(s)).toBeGreaterThan(sent + 90);
    },
    hangBound(60_000),
  );
});

describe('the library behaves the same', () => {
  it(
    'enrichRows gives the rows it gave up on the code api_unavailable',
    async () => {
      const s = await sandbox({ outage: { afterMs: 0, kind: 'error503' } });
      const results = [];
      for await (const result of enrichRows(
        emails(40, 'lib').map((email) => ({ email })),
        { baseUrl: s.baseUrl, token: s.token, store: ':memory:', patience: '2s', concurrency: 4 },
      )) {
        results.push(result);
      }
      expect(results).toHaveLength(40);
      expect(results.filter((r) => r.status === 'skipped').every((r) => r.error?.code === 'api_unavailable')).toBe(true);
      expect(results.filter((r) => r.status === 'skipped').length).toBeGreaterThan(30);
    },
    hangBound(20_000),
  );

  it(
    'an API down when the run starts: enrichRows and enrich give rows skipped with api_unavailable, not a throw; an error that surfaces is a NetworkError',
    async () => {
      const s = await sandbox();
      await s.close();
      const options = { baseUrl: s.baseUrl, token: s.token, store: ':memory:', patience: '2s' } as const;
      const results = [];
      for await (const result of enrichRows(
        emails(20, 'lib-down').map((email) => ({ email })),
        options,
      ))
        results.push(result);
      expect(results.map((r) => [r.status, r.error?.code])).toEqual(Array(20).fill(['skipped', 'api_unavailable']));
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(20, 'lib-down').map((k) => [k])]);
      const summary = await enrich({ ...options, input });
      expect(summary).toMatchObject({ rows: 20, stoppedBy: 'api_unavailable', errorCodes: { api_unavailable: 20 } });
      // The dry run does not wait: its failure is the documented class, said as the start's.
      const planned = await planRun({ ...options, input, retries: 0 }).catch((error: unknown) => error);
      expect(planned).toBeInstanceOf(NetworkError);
      expect(planned).toMatchObject({
        code: 'network',
        message: expect.stringMatching(/^Cannot read the account before starting: Cannot reach 127\.0\.0\.1:\d+ .*connection refused/),
      });
    },
    hangBound(30_000),
  );
});
