// Scenario 1, fault soak: thousands of rows against a sandbox that fails a few percent of all
// requests in every way it can (500, 503 without a body, reset connections, truncated bodies,
// "status":"failed" at HTTP 200, requests that never get an answer). With enough retries, every
// row must end exactly as the sandbox answers it, in input order, none lost or doubled, and no
// key may be paid for twice.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { lines, refusalMs, runCli } from '../../helpers/cli.js';
import { emails, makeTempDir, readCsvBytes, readCsvObjects, writeCsv } from '../../helpers/files.js';
import { chargedTwice, closeAll, envFor, expectedEmail, expectNoCrash, expectNoSecret, expectRowsMatchSandbox, lookupsSeen, sandbox } from './support.js';
import { hangBound } from '../../helpers/processes.js';

afterAll(closeAll);

describe('fault soak', () => {
  it(
    '2000+ rows through every sandbox fault at a few percent each: every row answered as the sandbox says, each key paid once',
    async () => {
      const s = await sandbox({
        faults: { error500: 0.025, error503: 0.025, reset: 0.025, truncated: 0.025, failed200: 0.025, hang: 0.025 },
        seed: 7,
      });
      const dir = makeTempDir();
      const distinct = emails(2000, 'soak');
      // Some keys come again in another spelling: answered once, by the first request.
      const keys = [...distinct, ...distinct.filter((_, i) => i % 40 === 0).map((e) => `  ${e.toUpperCase()} `)];
      // A second column whose cells must come back byte for byte, in the same row.
      const input = writeCsv(path.join(dir, 'in.csv'), [['email', 'row_id'], ...keys.map((e, i) => [e, `r${i + 1}`])]);
      const output = path.join(dir, 'out.csv');
      // The request timeout must stay well above a normal answer's time, even on a loaded machine:
      // an answer the server charged for but that arrived after the timeout is paid again on retry,
      // and healthy answers that time out several in a row open the breaker. 2 s was outlasted at a
      // load average of 12 (the breaker held the run for 4.5 s), 5 s at 18 (27 keys paid twice; the
      // sandbox answers from this test's own process). So 5 s, or, on a machine slower now than idle,
      // five times what a run refused for a bad option takes now (0.4-0.6 s idle; 6 s at 14).
      const timeout = Math.max(5_000, 5 * (await refusalMs()));
      const started = Date.now();
      const result = await runCli(['enrich', input, '-o', output, '--json', '--retries', '12', '--request-timeout', String(timeout)], {
        env: envFor(s, dir),
        // Some 60 requests hang until the timeout, 16 at a time.
        timeoutMs: 60_000 + 5 * timeout,
      });
      const elapsed = Date.now() - started;
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(0);

      // The faults really happened, each kind of them, and were retried.
      for (const [kind, n] of Object.entries(s.stats.faults)) expect(n, `fault ${kind}`).toBeGreaterThan(10);
      const summary = JSON.parse(result.stdout);
      expect(summary.retries).toBeGreaterThan(100);
      expect(summary.rows).toBe(keys.length);
      expect(summary.status.error + summary.status.skipped).toBe(0);
      // A flaky API (15 % of answers fail, here and there) is not a dead one: the breaker stays
      // closed, or (when failures happen to come several in a row, as load makes likelier) opens
      // until an answer closes it, never for the minutes a dead API holds it (--patience, 10 min
      // here). Its probe meets the same faults, and it may open more than once: 1005 ms in all seen
      // at a load average of 7, 2005 ms with four e2e files at once (.ci/run). A breaker opened by
      // any single failure held it 7.3 s in all (tried: OPEN_AFTER_CONSECUTIVE and MANY_KEYS 1).
      expect(summary.apiUnavailableMs, result.stderr).toBeLessThan(5_000);

      // Every row, in input order, exactly once, answered as the sandbox answers its key.
      expectRowsMatchSandbox(output, keys);
      const rows = readCsvObjects(output);
      expect(rows.map((r) => r.row_id)).toEqual(keys.map((_, i) => `r${i + 1}`));
      const inputCells = readCsvBytes(input);
      expect(readCsvBytes(output).map((r) => r.slice(0, 2))).toEqual(inputCells);
      expect(readCsvObjects(path.join(dir, 'out.errors.csv'))).toEqual([]);

      // Billing: every distinct key answered by exactly one request; the respelled ones are duplicates.
      const foundKeys = distinct.filter((e) => expectedEmail(e).kind === 'found');
      expect(chargedTwice(s)).toEqual([]);
      expect(s.stats.charges.size).toBe(foundKeys.length);
      expect(summary.billing).toMatchObject({
        charged: foundKeys.length,
        free: distinct.length - foundKeys.length,
        duplicate: keys.length - distinct.length,
        none: 0,
      });
      expect(s.stats.creditsCharged).toBe(4 * foundKeys.length);
      // No request beyond what the faults explain: each faulted request is retried once, nothing more.
      const faulted = Object.values(s.stats.faults).reduce((a, b) => a + b, 0);
      expect(lookupsSeen(s)).toBeLessThanOrEqual(distinct.length + faulted);

      expectNoSecret([result.stdout, result.stderr], [dir]);
      // No line per fault or retry. The status lines come every 10 s and at each tenth of the rows
      // (docs/reference.md), and the breaker says when it opens and closes (its probe a second
      // later), so their numbers follow the run's length and how long the API seemed down, which load
      // stretches (24 lines in all at a load average of 17, against the 20 once allowed): each bounded
      // by what the run reports; the rest, the summary, by a count.
      const all = lines(result.stderr);
      const status = all.filter((line) => / lead-enrich: \d+ rows done of /.test(line));
      const breaker = all.filter((line) => / lead-enrich: The API is (unavailable|back)/.test(line));
      expect(status.length, result.stderr).toBeLessThanOrEqual(Math.ceil(elapsed / 10_000) + 11);
      expect(breaker.length, result.stderr).toBeLessThanOrEqual(2 * Math.ceil(summary.apiUnavailableMs / 1_000));
      expect(all.length - status.length - breaker.length, result.stderr).toBeLessThan(12);
      expect(fs.readdirSync(dir).sort()).toEqual(
        ['in.csv', 'out.csv', 'out.errors.csv', 'store.sqlite', 'store.sqlite-shm', 'store.sqlite-wal'].filter((f) => fs.existsSync(path.join(dir, f))),
      );
      console.log(
        `fault soak: ${keys.length} rows, ${lookupsSeen(s)} lookups (${faulted} faulted), ${summary.retries} retries, ${elapsed} ms, request timeout ${timeout} ms`,
      );
    },
    hangBound(300_000),
  );
});
