// `lead-enrich enrich` as users and scripts run it: the built CLI as a subprocess against a
// sandbox on 127.0.0.1, checking outputs and every exit status of the contract.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { lines, REPO_ROOT, runCli, spawnCli } from '../helpers/cli.js';
import { emails, makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';
import { hangBound } from '../helpers/processes.js';

let sandbox: Sandbox;
let env: Record<string, string>;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, rpm: 60_000 });
  env = { LEAD_API_BASE_URL: sandbox.baseUrl, LEAD_API_TOKEN: sandbox.token };
});
afterAll(() => sandbox.close());

function copyFixture(name: string): { dir: string; file: string } {
  const dir = makeTempDir();
  const file = path.join(dir, name);
  fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', name), file);
  return { dir, file };
}

describe('lead-enrich enrich (CLI)', () => {
  it('runs the README demo against the embedded sandbox: exit 0, outputs beside the input, a summary', async () => {
    const { dir, file } = copyFixture('contacts.csv');
    const result = await runCli(['enrich', file, '--sandbox']);
    expect(result.stderr).toMatch(/Rows: 10 \(found \d+, not found \d+, errors 0, skipped 0\)/);
    expect(result.stderr).toContain('Billing:');
    expect(result.code).toBe(0);
    const rows = readCsvObjects(path.join(dir, 'contacts.enriched.csv'));
    expect(rows).toHaveLength(10);
    expect(rows[4]!.lead_billing).toBe('duplicate');
    expect(readCsvObjects(path.join(dir, 'contacts.enriched.errors.csv'))).toHaveLength(0);
  });

  it("exits 5 when the only rows in error are the file's own (a malformed key), and lists them in the sidecar (an empty email is skipped, not an error)", async () => {
    const { dir, file } = copyFixture('contacts-messy.csv');
    const result = await runCli(['enrich', file, '-o', path.join(dir, 'out.csv'), '--json'], { env });
    expect(result.code).toBe(5);
    const summary = JSON.parse(result.stdout);
    expect(summary.status.error).toBe(1);
    expect(summary.status.skipped).toBe(1);
    expect(summary.errorCodes).toEqual({ invalid_input: 1, no_key: 1 });
    const sidecar = readCsvObjects(path.join(dir, 'out.errors.csv'));
    expect(sidecar.map((r) => [r.row, r.error_code])).toEqual([
      ['9', 'invalid_input'],
      ['10', 'no_key'],
    ]);
  });

  it('exits 3 when the credit reserve stops the run, with every row written', async () => {
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(30).map((e) => [e])]);
    const result = await runCli(['enrich', input, '--json', '--min-credits', String(sandbox.credits - 20)], { env });
    expect(result.code).toBe(3);
    const summary = JSON.parse(result.stdout);
    expect(summary.rows).toBe(30);
    expect(summary.stoppedBy).toBe('credits');
    expect(summary.errorCodes.credit_reserve).toBeGreaterThan(0);
    expect(result.stderr).toContain('credit reserve');
  });

  it(
    'exits 1 with one line for fatal errors, and leaves no output file',
    async () => {
      const dir = makeTempDir();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['a@acme.com']]);
      const cases: Array<[string[], Record<string, string>, RegExp]> = [
        [['enrich', path.join(dir, 'missing.csv')], env, /Cannot read input .*missing\.csv: no such file/],
        [['enrich', input], { ...env, LEAD_API_TOKEN: 'wrong-token-0123456789' }, /rejected the token.*LEAD_API_TOKEN/],
        [['enrich', input, '--rpm', 'abc'], env, /Invalid option --rpm: must be a positive integer, got 'abc'/],
        [['enrich', input, '--by', 'phone'], env, /--by/],
        [['enrich', input, '--with', 'dns'], env, /Invalid option --with/],
        [['enrich', input, '--max-age', 'soon'], env, /--max-age/],
        [['enrich', input, '--column', 'nope'], env, /no column named 'nope'/],
      ];
      const results = await Promise.all(cases.map(([args, e]) => runCli(args, { env: e })));
      results.forEach((result, i) => {
        expect(result.code, cases[i]![0].join(' ')).toBe(1);
        expect(lines(result.stderr), result.stderr).toHaveLength(1);
        expect(result.stderr).toMatch(cases[i]![2]);
        expect(result.stderr).not.toMatch(/^\s+at /m);
      });
      expect(fs.readdirSync(dir)).toEqual(['in.csv']);
    },
    hangBound(60_000),
  ); // seven CLI processes at once: 20 s was outlasted at a load average of 14 on 2 cores, where one CLI takes 6 s to start

  it('reads stdin and writes stdout', async () => {
    const result = await runCli(['enrich', '-', '-o', '-', '--quiet'], { env, input: 'email,name\njane@acme.com,Jane\n' });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const [header, row] = result.stdout.trim().split('\n');
    expect(header!.startsWith('email,name,lead_status,lead_name')).toBe(true);
    expect(row!.startsWith('jane@acme.com,Jane,')).toBe(true);
  });

  it('adds MX and Whois columns with --with mx,whois, resolving each distinct domain once', async () => {
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['ann@mxcheck-one.com'], ['bob@mxcheck-one.com'], ['cy@mxcheck-two.org']]);
    const mxBefore = sandbox.stats.byOperation.mx ?? 0;
    const whoisBefore = sandbox.stats.byOperation.whois ?? 0;
    const result = await runCli(['enrich', input, '--with', 'mx,whois', '--json'], { env });
    expect(result.code, result.stderr).toBe(0);
    expect((sandbox.stats.byOperation.mx ?? 0) - mxBefore).toBe(2);
    expect((sandbox.stats.byOperation.whois ?? 0) - whoisBefore).toBe(2);
    const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
    expect(rows.map((r) => r.mx_primary)).toEqual(['mx1.mxcheck-one.com', 'mx1.mxcheck-one.com', 'mx1.mxcheck-two.org']);
    for (const row of rows) {
      // Every record, lowest priority number first, the first being mx_primary.
      const records = row.mx_records!.split('; ').map((r) => r.split(' '));
      expect(records.map(([priority]) => Number(priority))).toEqual(records.map(([priority]) => Number(priority)).sort((x, y) => x - y));
      expect(records[0]![1]).toBe(row.mx_primary);
    }
    expect(rows.every((r) => (r.whois_registrar ?? '') !== '')).toBe(true);
    expect(JSON.parse(result.stdout).lookup.with).toEqual(['mx', 'whois']);
  });

  it('with --json and the rows on stdout, prints the JSON summary on stderr, one line, and keeps stdout CSV', async () => {
    const result = await runCli(['enrich', '-', '-o', '-', '--json'], { env, input: 'email,name\njane@acme.com,Jane\n' });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(2);
    expect(result.stdout.startsWith('email,name,lead_status,')).toBe(true);
    expect(lines(result.stderr)).toHaveLength(1);
    expect(JSON.parse(result.stderr)).toMatchObject({ rows: 1, output: '-' });
  });

  it('plans a dry run without any lookup: exit 0 when it fits, 3 when it does not', async () => {
    const dir = makeTempDir();
    const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(10).map((e) => [e]), ['bad'], [emails(1)[0]!]]);
    const before = sandbox.stats.byOperation.lookup_email ?? 0;
    const fits = await runCli(['enrich', input, '--dry-run', '--json'], { env });
    expect(fits.code).toBe(0);
    const plan = JSON.parse(fits.stdout);
    expect(plan).toMatchObject({ rows: 12, invalidRows: 1, lookupsToMake: 10, creditsNeeded: 40, fits: true });
    const tight = await runCli(['enrich', input, '--dry-run', '--min-credits', String(sandbox.credits - 10)], { env });
    expect(tight.code).toBe(3);
    expect(tight.stdout).toContain('does NOT fit');
    expect(sandbox.stats.byOperation.lookup_email ?? 0).toBe(before);
    expect(fs.readdirSync(dir)).toEqual(['in.csv']);
  });

  it(
    'exits 130 on SIGINT with complete outputs, and the same command then finishes the work',
    async () => {
      // 600 RPM: one request every 100 ms, so the run is still going when the signal comes.
      const paced = await startSandbox({ port: 0, rpm: 600 });
      try {
        const dir = makeTempDir();
        const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(60).map((e) => [e])]);
        const pacedEnv = { LEAD_API_BASE_URL: paced.baseUrl, LEAD_API_TOKEN: paced.token, LEAD_ENRICH_STORE: path.join(dir, 'store.sqlite') };
        const child = spawnCli(['enrich', input, '--json'], { env: pacedEnv });
        child.stdin!.end();
        // The signal comes once lookups are under way (a state, not a time: a busy machine can take
        // longer than a fixed delay to start the process, which then dies of the signal unhandled).
        const deadline = Date.now() + 20_000;
        while ((paced.stats.byOperation.lookup_email ?? 0) < 5 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        child.kill('SIGINT');
        const first = await child.result;
        expect(first.code).toBe(130);
        expect(first.stderr).toContain('Interrupted');
        const firstSummary = JSON.parse(first.stdout);
        const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
        expect(rows).toHaveLength(60);
        const skipped = rows.filter((r) => r.lead_status === 'skipped');
        expect(skipped.length).toBeGreaterThan(0);
        const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
        expect(sidecar).toHaveLength(skipped.length);
        expect(sidecar.every((r) => r.error_code === 'interrupted')).toBe(true);

        const second = await runCli(['enrich', input, '--json'], { env: pacedEnv, timeoutMs: 20_000 });
        expect(second.code).toBe(0);
        const secondSummary = JSON.parse(second.stdout);
        expect(secondSummary.billing.cached).toBe(firstSummary.billing.charged + firstSummary.billing.free);
        expect([...paced.stats.charges.values()].every((n) => n === 1)).toBe(true);
        // Outputs equal an uninterrupted run's, but for lead_billing.
        const final = readCsvObjects(path.join(dir, 'in.enriched.csv'));
        expect(final.every((r) => r.lead_status === 'found' || r.lead_status === 'not_found')).toBe(true);
      } finally {
        await paced.close();
      }
    },
    hangBound(30_000),
  );
});
