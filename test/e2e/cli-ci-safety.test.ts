// Runs that are never silently broken (cli-contract.md, `--max-errors`, `-q`, and the paragraph
// after the exit-status table), and the command line's papercuts: through the built CLI.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { lines, runCli, spawnCli, tempDir } from '../helpers/cli.js';
import { emails, writeCsv } from '../helpers/files.js';
import { accountOnlyServer } from '../helpers/servers.js';
import { hangBound } from '../helpers/processes.js';

const STAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z lead-enrich: |^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /;

let sandbox: Sandbox;
let env: Record<string, string>;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, rpm: 60_000 });
  env = { LEAD_API_BASE_URL: sandbox.baseUrl, LEAD_API_TOKEN: sandbox.token };
});
afterAll(() => sandbox.close());
const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

describe('--patience, --max-errors and -q: a failing API fails the job loudly', () => {
  it(
    'an API that is down: exit 2 after --patience with the one-line summary on stderr, and a few probes, not a request per row',
    async () => {
      let lookups = 0;
      const api = await accountOnlyServer(() => {
        lookups += 1;
        return { status: 503, body: '' };
      });
      closers.push(api.close);
      const dir = tempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(500, 'down').map((e) => [e])]);
      const started = Date.now();
      const r = await runCli(['enrich', input, '--max-errors', '10', '-q', '--concurrency', '4', '--retries', '1', '--patience', '3s'], {
        env: { LEAD_API_BASE_URL: api.baseUrl, LEAD_API_TOKEN: 'tok-ci-safety-0123456789', LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') },
      });
      expect(r.code, r.stderr).toBe(2);
      expect(Date.now() - started).toBeLessThan(15_000);
      const out = lines(r.stderr);
      expect(out, r.stderr).toHaveLength(1);
      expect(out[0]).toMatch(STAMP);
      // The one line says what failed too: a cron mail names the cause.
      expect(out[0]).toMatch(/the API stayed unavailable past --patience \(3s\), failing with: Server error 503 .*: 500 rows .*api_unavailable \d+/);
      const sidecar = fs.readFileSync(path.join(dir, 'in.enriched.errors.csv'), 'utf8').trim().split('\n');
      expect(sidecar).toHaveLength(501);
      expect(sidecar.filter((line) => line.includes(',api_unavailable,')).length).toBeGreaterThan(480);
      expect(lookups).toBeLessThanOrEqual(30);
    },
    hangBound(20_000),
  );

  it(
    'lookups that fail (answers the interface does not allow): exit 4 within seconds at --max-errors, one line, nothing sent after the stop',
    async () => {
      let lookups = 0;
      const api = await accountOnlyServer(() => {
        lookups += 1;
        return { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: 'x', lead: 'nobody' } }) };
      });
      closers.push(api.close);
      const dir = tempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(500, 'down').map((e) => [e])]);
      const started = Date.now();
      const r = await runCli(['enrich', input, '--max-errors', '10', '-q', '--concurrency', '4', '--retries', '1'], {
        env: { LEAD_API_BASE_URL: api.baseUrl, LEAD_API_TOKEN: 'tok-ci-safety-0123456789', LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') },
      });
      expect(r.code, r.stderr).toBe(4);
      expect(Date.now() - started).toBeLessThan(15_000);
      const out = lines(r.stderr);
      expect(out, r.stderr).toHaveLength(1);
      expect(out[0]).toMatch(STAMP);
      expect(out[0]).toMatch(/stopped at --max-errors: 500 rows .*max_errors \d+/);
      const sidecar = fs.readFileSync(path.join(dir, 'in.enriched.errors.csv'), 'utf8').trim().split('\n');
      expect(sidecar).toHaveLength(501);
      // At most N + in flight (4) are errors; the rows whose retry the stop cut short say so, and
      // every request belongs to one of those two (a try and one retry each): none to a row never tried.
      const errors = sidecar.filter((line) => line.includes(',bad_response,')).length;
      const cutShort = sidecar.filter((line) => line.includes('a try before the stop failed')).length;
      expect(errors).toBeGreaterThan(10);
      expect(errors).toBeLessThanOrEqual(10 + 4);
      expect(lookups).toBeLessThanOrEqual((errors + cutShort) * 2);
    },
    hangBound(20_000),
  );

  it('a quiet run that succeeds prints nothing; one that ends with errors prints one line', async () => {
    const dir = tempDir();
    const good = writeCsv(path.join(dir, 'good.csv'), [['email'], ['ann@acme.com']]);
    const bad = writeCsv(path.join(dir, 'bad.csv'), [['email'], ['ann@acme.com'], ['broken@']]);
    const e = { ...env, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') };
    const ok = await runCli(['enrich', good, '-q'], { env: e });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toBe('');
    const failed = await runCli(['enrich', bad, '-q'], { env: e });
    expect(failed.code).toBe(5); // the file's own problem: a malformed key
    expect(lines(failed.stderr)).toHaveLength(1);
    expect(failed.stderr).toMatch(/1 row is an error: 2 rows .*invalid_input 1; see .*bad\.enriched\.errors\.csv/);
  });

  it('without a terminal, every line of the summary starts with an ISO 8601 timestamp', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
    const r = await runCli(['enrich', input], { env: { ...env, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') } });
    expect(r.code).toBe(0);
    const out = lines(r.stderr);
    expect(out.length).toBeGreaterThan(3);
    for (const line of out) expect(line).toMatch(STAMP);
  });
});

describe('a second Ctrl-C', () => {
  it(
    'quits at once without waiting for requests in flight, with complete outputs and exit 130',
    async () => {
      // Every lookup takes 4 s to answer: after one SIGINT the run would wait for those in flight.
      let arrived = 0;
      const slow = await accountOnlyServer(async () => {
        arrived += 1;
        await new Promise((r) => setTimeout(r, 4000));
        return { status: 200, body: JSON.stringify({ status: 'success', data: { email_address: 'x', lead: {} } }) };
      });
      closers.push(slow.close);
      const dir = tempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(40, 'quit').map((e) => [e])]);
      const child = spawnCli(['enrich', input, '--json'], {
        env: { LEAD_API_BASE_URL: slow.baseUrl, LEAD_API_TOKEN: 'tok-ci-safety-0123456789', LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') },
      });
      child.stdin!.end();
      // Wait until lookups are in flight (the handler is in place well before the first request).
      for (let i = 0; i < 400 && arrived === 0; i += 1) await new Promise((r) => setTimeout(r, 25));
      expect(arrived).toBeGreaterThan(0);
      child.kill('SIGINT');
      await new Promise((r) => setTimeout(r, 200));
      const second = Date.now();
      child.kill('SIGINT');
      const r = await child.result;
      expect(r.code, r.stderr).toBe(130);
      // Well before the 4 s answers (and the 10 s drain) could have come.
      expect(Date.now() - second).toBeLessThan(3000);
      expect(r.stderr).toMatch(/SIGINT again: quitting now/);
      const summary = JSON.parse(r.stdout);
      expect(summary).toMatchObject({ rows: 40, stoppedBy: 'interrupt' });
      expect(summary.errorCodes.interrupted).toBe(40);
      const output = fs.readFileSync(path.join(dir, 'in.enriched.csv'), 'utf8').trim().split('\n');
      expect(output).toHaveLength(41);
    },
    hangBound(20_000),
  );
});

describe('papercuts', () => {
  it('--with does not swallow the input file name after it', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@mxpaper.com']]);
    const r = await runCli(['enrich', '--with', 'mx', input, '-q'], { env: { ...env, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') } });
    expect(r.code, r.stderr).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'in.enriched.csv'), 'utf8')).toMatch(/mx_primary/);
    // Repeated, and as a list, still work.
    const twice = await runCli(['enrich', input, '--with', 'mx', '--with', 'whois', '-o', path.join(dir, 'b.csv'), '-q'], {
      env: { ...env, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') },
    });
    expect(twice.code, twice.stderr).toBe(0);
    expect(fs.readFileSync(path.join(dir, 'b.csv'), 'utf8')).toMatch(/mx_primary.*whois_registrar/);
  });

  it('lookup reads its value from stdin with -', async () => {
    const r = await runCli(['lookup', 'email', '-'], { env, input: '\n  jane.doe@acme.com  \n' });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).email_address).toBe('jane.doe@acme.com');
    const empty = await runCli(['lookup', 'email', '-'], { env, input: '' });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/No email on standard input/);
  });

  it('names an unknown option once, and a mistyped command without a double stop', async () => {
    const unknown = await runCli(['enrich', 'x.csv', '--foo-bar'], { env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Unknown option --foo-bar\. Run 'lead-enrich --help'/);
    expect(unknown.stderr).not.toMatch(/fooBar/);
    const typo = await runCli(['enrch', 'x.csv'], { env });
    expect(typo.stderr).toMatch(/Unknown command 'enrch': did you mean enrich\? Run/);
  });

  it('enrich --help lists the exit statuses', async () => {
    const r = await runCli(['enrich', '--help']);
    expect(r.code).toBe(0);
    for (const status of ['0 ', '1 ', '2 ', '3 ', '4 ', '130 ']) expect(r.stdout).toMatch(new RegExp(`^\\s+${status}`, 'm'));
  });

  it('says in words why an output path cannot be written', async () => {
    const dir = tempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@acme.com']]);
    const r = await runCli(['enrich', input, '-o', path.join(input, 'out.csv')], { env: { ...env, LEAD_ENRICH_STORE: path.join(dir, 's.sqlite') } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/a part of the path is a file, not a folder; choose another path/);
    expect(r.stderr).not.toMatch(/ENOTDIR|EEXIST/);
  });
});
