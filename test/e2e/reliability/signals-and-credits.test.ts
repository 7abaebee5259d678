// Scenario 3, signals and money: SIGINT/SIGTERM (exit 130, complete outputs, the same command then
// finishes without paying twice), during a long retry backoff and while requests hang; a 402 in
// the middle of a run; the credit reserve; a token revoked in the middle of a run.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lines, runCli, spawnCli } from '../../helpers/cli.js';
import { emails, makeTempDir, readCsvObjects, writeCsv } from '../../helpers/files.js';
import {
  chargedTwice,
  closeAll,
  envFor,
  expectedEmail,
  expectNoCrash,
  expectNoSecret,
  expectRowsMatchSandbox,
  jsonlWithoutBilling,
  lookupsSeen,
  sandbox,
  sleep,
  storedKeys,
  tinyServer,
  until,
} from './support.js';
import { hangBound } from '../../helpers/processes.js';

afterAll(closeAll);

function emailInput(dir: string, keys: string[]): string {
  return writeCsv(path.join(dir, 'in.csv'), [['email', 'n'], ...keys.map((k, i) => [k, String(i + 1)])]);
}

// Each test has its own sandbox, store and files: they run side by side.
describe.concurrent('SIGINT and SIGTERM', () => {
  it(
    'SIGTERM mid-run: exit 130, every row written (the rest skipped/interrupted), and the same command finishes paying nothing twice',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const keys = emails(60, 'term');
      const input = emailInput(dir, keys);
      const env = envFor(s, dir);
      const args = ['enrich', input, '--rpm', '900', '--json'];
      const child = spawnCli(args, { env });
      child.stdin!.end();
      await until(() => lookupsSeen(s) >= 20, '20 lookups');
      child.kill('SIGTERM');
      const first = await child.result;
      expectNoCrash(first);
      expect(first.code, first.stderr).toBe(130);
      expect(first.stderr).toContain('SIGTERM');
      const summary = JSON.parse(first.stdout);
      expect(summary.stoppedBy).toBe('interrupt');
      const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
      expect(rows.map((r) => r.email)).toEqual(keys);
      const skipped = rows.filter((r) => r.lead_status === 'skipped');
      expect(skipped.length).toBeGreaterThan(10);
      expect(rows.filter((r) => r.lead_status === 'error')).toEqual([]);
      const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
      expect(sidecar.map((r) => [r.email, r.error_code])).toEqual(skipped.map((r) => [r.email, 'interrupted']));
      // The rows answered before the signal are answered right.
      for (const row of rows.filter((r) => r.lead_status !== 'skipped')) expect(row.lead_status).toBe(expectedEmail(row.email!).kind);

      const second = await runCli(args, { env, timeoutMs: 30_000 });
      expect(second.code, second.stderr).toBe(0);
      // A graceful stop stores every answer it got: nothing at all is paid twice.
      expect(chargedTwice(s)).toEqual([]);
      expect(JSON.parse(second.stdout).billing.cached).toBe(summary.billing.charged + summary.billing.free);
      expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys);
      expectNoSecret([first.stdout, first.stderr, second.stdout, second.stderr], [dir]);
    },
    hangBound(40_000),
  );

  it(
    'SIGINT again and again (an impatient Ctrl-C) on a JSON Lines run: still exit 130, complete outputs, every answer kept; a re-run equals an uninterrupted run',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const keys = [...emails(50, 'int'), 'bad-key'];
      const input = emailInput(dir, keys);
      const env = envFor(s, dir);
      const args = ['enrich', input, '--rpm', '900', '--format', 'jsonl', '-o', path.join(dir, 'out.jsonl')];
      const child = spawnCli(args, { env });
      child.stdin!.end();
      await until(() => lookupsSeen(s) >= 15, '15 lookups');
      // Ctrl-C every few milliseconds until the process is gone: some land while it stops, some
      // while it writes its summary and closes the store.
      let sent = 0;
      while (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT');
        sent += 1;
        await sleep(2);
      }
      const first = await child.result;
      expectNoCrash(first);
      expect(sent).toBeGreaterThan(1);
      expect({ code: first.code, signal: first.signal }, first.stderr).toEqual({ code: 130, signal: null });
      const written = jsonlWithoutBilling(path.join(dir, 'out.jsonl')) as Array<{
        row: number;
        lead_status: string;
        error?: { code: string };
        reason?: { code: string };
      }>;
      expect(written.map((l) => l.row)).toEqual(keys.map((_, i) => i + 1));
      // A skipped row's line says its reason (`reason`), not an error.
      expect(written.filter((l) => l.lead_status === 'skipped').every((l) => l.reason?.code === 'interrupted' && l.error === undefined)).toBe(true);
      expect(readCsvObjects(path.join(dir, 'out.errors.csv')).length).toBe(written.filter((l) => l.error ?? l.reason).length);

      const second = await runCli(args, { env, timeoutMs: 30_000 });
      expect(second.code, second.stderr).toBe(5); // bad-key: the file's own problem
      // Every answer of the interrupted run was kept: none is paid again.
      expect(chargedTwice(s)).toEqual([]);
      const refDir = makeTempDir();
      const ref = await runCli(['enrich', emailInput(refDir, keys), '--format', 'jsonl', '-o', path.join(refDir, 'out.jsonl')], {
        env: envFor(await sandbox(), refDir),
      });
      expect(ref.code).toBe(5);
      expect(jsonlWithoutBilling(path.join(dir, 'out.jsonl'))).toEqual(jsonlWithoutBilling(path.join(refDir, 'out.jsonl')));
      expect(fs.readFileSync(path.join(dir, 'out.errors.csv'))).toEqual(fs.readFileSync(path.join(refDir, 'out.errors.csv')));
    },
    hangBound(40_000),
  );

  it(
    'SIGTERM while rows wait (in a retry backoff, or held while the API is down): stops at once, those rows are interrupted, not errors',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const keys = emails(40, 'sleepy');
      const input = emailInput(dir, keys);
      const env = envFor(s, dir);
      const args = ['enrich', input, '--rpm', '900', '--retries', '10', '--quiet'];
      const child = spawnCli(args, { env });
      child.stdin!.end();
      await until(() => lookupsSeen(s) >= 10, '10 lookups');
      s.setFaults({ error503: 1 });
      // Rows go into their backoffs, then the breaker holds them all (the API is down: 8 failures in
      // a row), probing at most once a second.
      await until(() => s.stats.faults.error503 >= 8, '8 faulted requests');
      await sleep(1500);
      const signalled = Date.now();
      child.kill('SIGTERM');
      const first = await child.result;
      const took = Date.now() - signalled;
      expectNoCrash(first);
      expect(first.code, first.stderr).toBe(130);
      expect(took).toBeLessThan(3000);
      const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
      expect(rows).toHaveLength(keys.length);
      // A row whose retries the signal cut short was not answered: skipped/interrupted, never an error.
      expect(rows.filter((r) => r.lead_status === 'error')).toEqual([]);
      const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
      expect(new Set(sidecar.map((r) => r.error_code))).toEqual(new Set(['interrupted']));

      s.setFaults({});
      const second = await runCli(args, { env, timeoutMs: 30_000 });
      expect(second.code, second.stderr).toBe(0);
      expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys);
      expect(chargedTwice(s)).toEqual([]);
    },
    hangBound(40_000),
  );

  it(
    'SIGINT while every request hangs: the run gives in-flight requests a bounded time, then exits 130 with every row written',
    async () => {
      const s = await sandbox();
      const dir = makeTempDir();
      const keys = emails(10, 'hung');
      const input = emailInput(dir, keys);
      const env = envFor(s, dir);
      // The startup reads get through; then every lookup hangs.
      const child = spawnCli(['enrich', input, '--quiet', '--request-timeout', '16000'], { env, timeoutMs: 40_000 });
      child.stdin!.end();
      await until(() => (s.stats.byOperation.limits ?? 0) >= 1, 'the startup reads');
      s.setFaults({ hang: 1 });
      await until(() => s.stats.faults.hang >= 3, '3 hanging lookups');
      const signalled = Date.now();
      child.kill('SIGINT');
      const result = await child.result;
      const took = Date.now() - signalled;
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(130);
      // The drain allowance is 10 s (enrich.ts, drainTimeoutMs), well below the 16 s request timeout.
      expect(took).toBeLessThan(14_000);
      const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
      expect(rows.map((r) => [r.email, r.lead_status])).toEqual(keys.map((k) => [k, 'skipped']));
      expect(readCsvObjects(path.join(dir, 'in.enriched.errors.csv')).map((r) => r.error_code)).toEqual(keys.map(() => 'interrupted'));
    },
    hangBound(40_000),
  );
});

describe.concurrent('credits', () => {
  it(
    'a 402 in the middle of a run: exit 3, the rest skipped credit_reserve, no more lookups sent; after a top-up the same command finishes paying nothing twice',
    async () => {
      const s = await sandbox({ threshold: 0 });
      const dir = makeTempDir();
      const keys = emails(60, 'broke');
      const input = emailInput(dir, keys);
      const env = envFor(s, dir);
      const args = ['enrich', input, '--rpm', '900', '--json'];
      const child = spawnCli(args, { env });
      child.stdin!.end();
      await until(() => lookupsSeen(s) >= 20, '20 lookups');
      s.setCredits(0);
      const first = await child.result;
      expectNoCrash(first);
      expect(first.code, first.stderr).toBe(3);
      const summary = JSON.parse(first.stdout);
      expect(summary.stoppedBy).toBe('credits');
      // Lookups stop at the first 402 (but for the few already in flight).
      expect(s.stats.paymentRequired).toBeGreaterThanOrEqual(1);
      expect(s.stats.paymentRequired).toBeLessThanOrEqual(3);
      expect(lookupsSeen(s)).toBeLessThanOrEqual(summary.billing.charged + summary.billing.free + 3);
      const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
      expect(rows.map((r) => r.email)).toEqual(keys);
      const skipped = rows.filter((r) => r.lead_status === 'skipped');
      expect(skipped.length).toBeGreaterThan(20);
      expect(rows.filter((r) => r.lead_status === 'error')).toEqual([]);
      const sidecar = readCsvObjects(path.join(dir, 'in.enriched.errors.csv'));
      expect(sidecar.map((r) => [r.email, r.error_code])).toEqual(skipped.map((r) => [r.email, 'credit_reserve']));

      s.setCredits(10_000);
      const second = await runCli(args, { env, timeoutMs: 30_000 });
      expect(second.code, second.stderr).toBe(0);
      expect(chargedTwice(s)).toEqual([]);
      expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys);
      expectNoSecret([first.stdout, first.stderr, second.stdout, second.stderr], [dir]);
    },
    hangBound(40_000),
  );

  it(
    'a server already at zero balance, answering 402 to every call, the account reads too: exit 3, every row written as skipped credit_reserve, no lookup',
    async () => {
      const paymentRequired = (_req: unknown, res: import('node:http').ServerResponse) => {
        const text = JSON.stringify({
          status: 'failed',
          error: { code: 1002, message: 'You have exhausted your credits, please add additional credits to continue' },
        });
        res.writeHead(402, { 'content-type': 'application/json' });
        res.end(text);
      };
      const server = await tinyServer(paymentRequired, { credits: paymentRequired, limits: paymentRequired });
      const dir = makeTempDir();
      const keys = emails(5, 'zero');
      const input = emailInput(dir, keys);
      const result = await runCli(['enrich', input, '--json'], { env: envFor(server, dir) });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(3);
      expect(readCsvObjects(path.join(dir, 'in.enriched.csv')).map((r) => [r.email, r.lead_status])).toEqual(keys.map((k) => [k, 'skipped']));
      expect(readCsvObjects(path.join(dir, 'in.enriched.errors.csv')).map((r) => r.error_code)).toEqual(keys.map(() => 'credit_reserve'));
      expect(server.hits.get('/v2/reverse_lookup/email') ?? 0).toBe(0);
      const dry = await runCli(['enrich', input, '--dry-run', '--json'], { env: envFor(server, dir) });
      expect(dry.code, dry.stderr).toBe(3);
      expect(JSON.parse(dry.stdout)).toMatchObject({ balance: 0, fits: false });
    },
    hangBound(20_000),
  );

  it(
    '--min-credits at full speed: the balance never goes below the reserve, exit 3; a re-run at the reserve answers known rows from the store and makes no lookup',
    async () => {
      const s = await sandbox({ notFoundRate: 0 });
      const dir = makeTempDir();
      const keys = emails(300, 'reserve');
      const input = emailInput(dir, keys);
      const env = envFor(s, dir);
      const reserve = 10_000 - 41; // room for 10 found leads at 4 credits, not 11
      const args = ['enrich', input, '--min-credits', String(reserve), '--json'];
      const first = await runCli(args, { env });
      expectNoCrash(first);
      expect(first.code, first.stderr).toBe(3);
      expect(first.stderr).toMatch(/credit reserve/);
      expect(s.credits).toBeGreaterThanOrEqual(reserve);
      const summary = JSON.parse(first.stdout);
      expect(summary.billing.charged).toBeGreaterThan(0);
      expect(summary.billing.charged).toBeLessThanOrEqual(10);
      const rows = readCsvObjects(path.join(dir, 'in.enriched.csv'));
      expect(rows).toHaveLength(keys.length);
      const answered = rows.filter((r) => r.lead_status === 'found').map((r) => r.email!);
      expect(answered).toHaveLength(summary.billing.charged);
      expect(readCsvObjects(path.join(dir, 'in.enriched.errors.csv')).every((r) => r.error_code === 'credit_reserve')).toBe(true);

      // The balance is now at the reserve: no lookup at all, but known rows are still answered.
      const before = lookupsSeen(s);
      const second = await runCli(args, { env });
      expect(second.code, second.stderr).toBe(3);
      expect(lookupsSeen(s)).toBe(before);
      const again = readCsvObjects(path.join(dir, 'in.enriched.csv'));
      expect(again.filter((r) => r.lead_status === 'found').map((r) => r.email)).toEqual(answered);
      expect(again.filter((r) => r.lead_billing === 'cached').map((r) => r.email)).toEqual(answered);

      // With the reserve lowered, the same command finishes and pays for no key twice.
      const third = await runCli(['enrich', input, '--min-credits', '0', '--json'], { env });
      expect(third.code, third.stderr).toBe(0);
      expect(chargedTwice(s)).toEqual([]);
      expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys, { notFoundRate: 0 });
    },
    hangBound(40_000),
  );
});

describe.concurrent('a token revoked in the middle of a run', () => {
  // paced: one request at a time, so every answer the server charged was received before the 401.
  // full speed: 256 requests in flight and up to 400 ms of latency, so requests the server took
  // (and charged) before the revocation are still in flight when the first 401 comes back.
  for (const pace of ['paced', 'full speed'] as const) {
    it(
      `${pace}: exit 1 with one clear line, no output file, and the store keeps its answers (a re-run with a valid token pays for none of them again)`,
      async () => {
        const first = await sandbox(pace === 'paced' ? {} : { latencyMs: [0, 400] });
        const port = Number(new URL(first.baseUrl).port);
        const dir = makeTempDir();
        const n = pace === 'paced' ? 60 : 1500;
        const keys = emails(n, `revoked-${pace.replace(' ', '')}`);
        const input = emailInput(dir, keys);
        const env = envFor(first, dir);
        const args = ['enrich', input, ...(pace === 'paced' ? ['--rpm', '900'] : [])];
        const child = spawnCli(args, { env });
        child.stdin!.end();
        await until(() => lookupsSeen(first) >= (pace === 'paced' ? 20 : 500), 'some lookups');
        first.revokeToken();
        const result = await child.result;
        expectNoCrash(result);
        expect(result.code, result.stderr).toBe(1);
        // One line says what went wrong, last. A run that lasts past the plain progress's 10 s (as on
        // a loaded machine) has printed periodic progress lines before it: those, and nothing else.
        const said = lines(result.stderr);
        expect(said.at(-1)).toMatch(/rejected the token.*LEAD_API_TOKEN/);
        for (const line of said.slice(0, -1)) expect(line, result.stderr).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z lead-enrich: \d+ rows done of about \d+ /);
        expect(result.stdout).toBe('');
        // No output, no sidecar, and no temporary file left behind either.
        expect(fs.readdirSync(dir).filter((f) => !f.startsWith('store.sqlite'))).toEqual(['in.csv']);
        expectNoSecret([result.stdout, result.stderr], [dir]);

        // The store is intact (it opens, and holds answers of the first run).
        const paidFirst = [...first.stats.charges.keys()].map((k) => k.slice('lookup_email:'.length));
        const stored = storedKeys(env.LEAD_ENRICH_STORE!, first.baseUrl, 'lookup_email', keys);
        expect(stored.size).toBeGreaterThan(0);
        const abandoned = paidFirst.filter((k) => !stored.has(k));
        if (pace === 'paced') {
          // Every answer the server charged for had reached the client: all of them are kept.
          expect(abandoned).toEqual([]);
        } else {
          // Answers still in flight at the 401 are abandoned (paid, never received): at most what
          // can be in flight (the automatic concurrency is capped at 256).
          expect(abandoned.length).toBeLessThanOrEqual(256);
        }

        // A valid token again (the same service: same base URL).
        await first.close();
        const second = await sandbox({ port });
        expect(second.baseUrl).toBe(first.baseUrl);
        const rerun = await runCli(args, { env, timeoutMs: 60_000 });
        expect(rerun.code, rerun.stderr).toBe(0);
        // Nothing the store kept is asked again; only the abandoned answers are paid twice.
        expect(lookupsSeen(second)).toBe(n - stored.size);
        expect(
          chargedTwice(first, second)
            .map((k) => k.replace(/^lookup_email:(.*) x2$/, '$1'))
            .sort(),
        ).toEqual([...abandoned].sort());
        expectRowsMatchSandbox(path.join(dir, 'in.enriched.csv'), keys);
        expectNoSecret([rerun.stdout, rerun.stderr], [dir]);
      },
      hangBound(60_000),
    );
  }
});
