// A stale answer is better than none (docs/cli-contract.md, "Every night, unattended"): on the
// README's nightly recipe, forty days after the first run every stored answer is older than
// --max-age (30 days) at once; a run that cannot look them all up again (a budget that covers a
// third of the file, the API down past --patience, --max-errors, an interrupt) writes every row it
// enriched before with its stored answer, `lead_billing` `stale`, never blank; the sidecar lists
// each with the code of what stopped its refresh, and the summary, --json, -q and the report count
// them. The answers are made forty days old in the store file itself (no wait): the history
// trigger then keeps the older copy, as it would a refresh, which nothing here reads.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, spawnCli } from '../helpers/cli.js';
import { emails, makeTempDir, readCsvObjects, writeCsv } from '../helpers/files.js';
import { openSqliteFile } from '../helpers/sqlite.js';
import { closeAll, envFor, expectNoCrash, lookupsSeen, sandbox, until } from './reliability/support.js';
import { hangBound } from '../helpers/processes.js';

afterAll(closeAll);

const DAY = 86_400_000;
const ROWS = 30;

/** Makes every answer in the store `days` older, as if the first run had been that long ago. */
function age(store: string, days: number): void {
  const db = openSqliteFile(store);
  try {
    db.run('UPDATE results SET fetched_at = fetched_at - ?', days * DAY);
  } finally {
    db.close();
  }
}

/** The added cells of a row that say what the answers hold (not how this run got them). */
function answerCells(row: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(row).filter(([name]) => /^(lead|mx)_/.test(name) && !name.endsWith('_billing')));
}

/** Enriches `rows` people once (a third not found; `extra` flags as well), then ages the store by forty days. */
async function enrichedFortyDaysAgo(prefix: string, rows = ROWS, extra: string[] = []) {
  const s = await sandbox({ notFoundRate: 0.3 });
  const dir = makeTempDir();
  const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ...emails(rows, prefix).map((k) => [k])]);
  const env = envFor(s, dir);
  const first = await runCli(['enrich', input, '--yes', ...extra], { env });
  expect(first.code, first.stderr).toBe(0);
  const before = readCsvObjects(path.join(dir, 'in.enriched.csv'));
  expect(before.every((row) => row.lead_status === 'found' || row.lead_status === 'not_found')).toBe(true);
  age(env.LEAD_ENRICH_STORE!, 40);
  return { s, dir, input, env, before, output: path.join(dir, 'in.enriched.csv'), sidecar: path.join(dir, 'in.enriched.errors.csv') };
}

/** Every row enriched before comes out with its answer: the same status and cells, refreshed, stored or `stale`; none blank. */
function expectEveryAnswerKept(before: Array<Record<string, string>>, after: Array<Record<string, string>>): void {
  expect(after).toHaveLength(before.length);
  after.forEach((row, i) => {
    expect(row.email).toBe(before[i]!.email);
    expect(['charged', 'free', 'cached', 'stale'], JSON.stringify(row)).toContain(row.lead_billing);
    // The sandbox's people did not change: a refreshed answer is the stored one again.
    expect(answerCells(row), row.email).toEqual(answerCells(before[i]!));
  });
}

describe.concurrent('forty days later, every answer is stale: a run that cannot refresh them all writes each with its stored answer', () => {
  it(
    '--budget covering a third of the file: exit 3, the rest stale (code budget), none blank; the counts say so',
    async () => {
      const { s, input, env, before, output, sidecar } = await enrichedFortyDaysAgo('stale-budget');
      const lookupsBefore = lookupsSeen(s);
      // 10 holds of 8 (a person with two phones at most): a third of the 30 rows.
      const r = await runCli(['enrich', input, '--budget', '80', '--json'], { env });
      expectNoCrash(r);
      expect(r.code, r.stderr).toBe(3);
      const after = readCsvObjects(output);
      expectEveryAnswerKept(before, after);
      const stale = after.filter((row) => row.lead_billing === 'stale');
      const refreshed = lookupsSeen(s) - lookupsBefore;
      expect(refreshed).toBeGreaterThanOrEqual(8);
      expect(refreshed).toBeLessThanOrEqual(12);
      expect(stale).toHaveLength(ROWS - refreshed);
      // The sidecar lists the stale rows, and only them, with what stopped their refresh.
      const listed = readCsvObjects(sidecar);
      expect(listed.map((row) => row.email)).toEqual(stale.map((row) => row.email));
      // Those the budget could not pay for waited for their turn (the oldest went first); those it
      // refused at the gate, when holds of calls in flight filled it, were stopped by it.
      for (const row of listed) {
        expect(row.error_code).toBe('budget');
        expect(row.error_message).toMatch(
          /^not looked up: (the next lookup could have spent more than --budget|--budget cannot refresh every answer older than --max-age in this run, and older ones went first); written with the stored answer of \d{4}-\d\d-\d\d \(stale\)$/,
        );
      }
      const summary = JSON.parse(r.stdout);
      expect(summary).toMatchObject({
        exitCode: 3,
        stoppedBy: 'budget',
        rows: ROWS,
        stale: { rows: stale.length, errors: 0, reasons: { budget: stale.length } },
        billing: { stale: stale.length, none: 0 },
        errorCodes: {},
      });
      expect(summary.status.found + summary.status.not_found).toBe(ROWS);
      expect(r.stderr).toMatch(
        new RegExp(`Stale: ${stale.length} rows written with their stored answers, older than --max-age, not refreshed \\(budget ${stale.length}\\)`),
      );
    },
    hangBound(60_000),
  );

  it(
    '-q says it in its one line; the report counts them; the next run with room refreshes them all: exit 0, none stale',
    async () => {
      const { s, dir, input, env, before, output } = await enrichedFortyDaysAgo('stale-quiet');
      const report = path.join(dir, 'report.json');
      const r = await runCli(['enrich', input, '--budget', '80', '-q', '--report', report], { env });
      expect(r.code, r.stderr).toBe(3);
      const stale = readCsvObjects(output).filter((row) => row.lead_billing === 'stale').length;
      const lines = r.stderr.split('\n').filter((l) => l !== '');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `stopped at --budget 80 .*: ${ROWS} rows \\(found \\d+, not found \\d+, errors 0, skipped 0; stale ${stale}\\); stale: budget ${stale}; see `,
        ),
      );
      const figures = JSON.parse(fs.readFileSync(report, 'utf8'));
      expect(figures.rows.stale).toEqual({ rows: stale, errors: 0, byReason: { budget: stale } });
      expect(figures.billing.stale).toBe(stale);
      expect(figures.outcome).toMatch(/rows keep their stored answer, older than --max-age/);
      // The next night, with room: the stale rows are looked up again (only they: the others are fresh).
      const lookupsBefore = lookupsSeen(s);
      const again = await runCli(['enrich', input, '--json'], { env });
      expect(again.code, again.stderr).toBe(0);
      expect(lookupsSeen(s) - lookupsBefore).toBe(stale);
      const after = readCsvObjects(output);
      expectEveryAnswerKept(before, after);
      expect(after.filter((row) => row.lead_billing === 'stale')).toEqual([]);
      expect(JSON.parse(again.stdout).stale).toEqual({ rows: 0, errors: 0, reasons: {} });
    },
    hangBound(60_000),
  );

  it(
    'the API down past --patience: exit 2, every row stale with api_unavailable, the same rows',
    async () => {
      const { s, input, env, before, output, sidecar } = await enrichedFortyDaysAgo('stale-down');
      s.setOutage({ kind: 'error503', scope: 'all' });
      const r = await runCli(['enrich', input, '--patience', '1s', '--json'], { env });
      expectNoCrash(r);
      expect(r.code, r.stderr).toBe(2);
      const after = readCsvObjects(output);
      expectEveryAnswerKept(before, after);
      expect(after.every((row) => row.lead_billing === 'stale')).toBe(true);
      const listed = readCsvObjects(sidecar);
      expect(listed).toHaveLength(ROWS);
      expect(new Set(listed.map((row) => row.error_code))).toEqual(new Set(['api_unavailable']));
      expect(JSON.parse(r.stdout)).toMatchObject({
        exitCode: 2,
        stoppedBy: 'api_unavailable',
        stale: { rows: ROWS, errors: 0, reasons: { api_unavailable: ROWS } },
      });
    },
    hangBound(60_000),
  );

  it(
    'a refresh that fails after every retry keeps the stored answer too: stale with server_error, an error for the exit status (2) and for --max-errors (4)',
    async () => {
      // Four keys: their failures are too few keys at once to be the API down (request-path/breaker.ts), so each row's retries fail.
      const { s, input, env, before, output, sidecar } = await enrichedFortyDaysAgo('stale-failing', 4);
      s.setOutage({ kind: 'error503' });
      const r = await runCli(['enrich', input, '--retries', '1', '--json'], { env });
      expectNoCrash(r);
      expect(r.code, r.stderr).toBe(2);
      expectEveryAnswerKept(before, readCsvObjects(output));
      expect(readCsvObjects(output).every((row) => row.lead_billing === 'stale')).toBe(true);
      expect(readCsvObjects(sidecar).map((row) => row.error_code)).toEqual(['server_error', 'server_error', 'server_error', 'server_error']);
      const summary = JSON.parse(r.stdout);
      expect(summary).toMatchObject({ exitCode: 2, stale: { rows: 4, errors: 4, reasons: { server_error: 4 } }, status: { error: 0 } });
      expect(r.stderr).toMatch(/Finished with 4 rows in error \(4 written with their stale answer\) \(exit 2\)/);
      // --max-errors counts them: past 1, the run stops; the rows it did not try keep theirs with max_errors.
      const capped = await runCli(['enrich', input, '--retries', '1', '--concurrency', '1', '--max-errors', '1', '--json'], { env });
      expect(capped.code, capped.stderr).toBe(4);
      expectEveryAnswerKept(before, readCsvObjects(output));
      const codes = readCsvObjects(sidecar).map((row) => row.error_code);
      expect(codes).toHaveLength(4);
      expect(codes.filter((code) => code === 'server_error').length).toBeGreaterThanOrEqual(2);
      expect(codes).toContain('max_errors');
      expect(JSON.parse(capped.stdout)).toMatchObject({ exitCode: 4, stoppedBy: 'max_errors', stale: { rows: 4 } });
    },
    hangBound(60_000),
  );

  it(
    'an interrupt: exit 130, the rows not refreshed keep their stored answer (interrupted), those given up in flight too',
    async () => {
      const { s, input, env, before, output, sidecar } = await enrichedFortyDaysAgo('stale-sigint');
      // Lookups that never answer: the interrupt comes with rows in flight, which the second Ctrl-C gives up at once.
      s.setOutage({ kind: 'hang' });
      const lookupsBefore = lookupsSeen(s);
      const child = spawnCli(['enrich', input, '--concurrency', '4', '--json'], { env });
      child.stdin!.end();
      await until(() => lookupsSeen(s) - lookupsBefore >= 4, 'four lookups in flight');
      child.kill('SIGINT');
      await until(() => /SIGINT: stopping/.test(child.output.stderr), 'the first interrupt said');
      child.kill('SIGINT');
      const r = await child.result;
      expectNoCrash(r);
      expect(r.code, r.stderr).toBe(130);
      const after = readCsvObjects(output);
      expectEveryAnswerKept(before, after);
      expect(after.every((row) => row.lead_billing === 'stale')).toBe(true);
      expect(new Set(readCsvObjects(sidecar).map((row) => row.error_code))).toEqual(new Set(['interrupted']));
      expect(JSON.parse(r.stdout)).toMatchObject({ exitCode: 130, stoppedBy: 'interrupt', stale: { rows: ROWS, reasons: { interrupted: ROWS } } });
    },
    hangBound(60_000),
  );

  it(
    "--with mx: the domains' stored answers are kept too (mx_billing stale), with the lead's",
    async () => {
      const { s, input, env, before, output } = await enrichedFortyDaysAgo('stale-mx', 14, ['--with', 'mx']);
      expect(before.some((row) => row.mx_primary !== '')).toBe(true);
      s.setOutage({ kind: 'error503', scope: 'all' });
      const r = await runCli(['enrich', input, '--with', 'mx', '--patience', '1s', '--json'], { env });
      expect(r.code, r.stderr).toBe(2);
      const after = readCsvObjects(output);
      expectEveryAnswerKept(before, after);
      // Every row's own answer is stale, and so is every domain's looked up before.
      expect(after.every((row) => row.lead_billing === 'stale')).toBe(true);
      for (const [i, row] of after.entries()) expect(row.mx_billing, row.email).toBe(before[i]!.mx_billing === 'none' ? 'none' : 'stale');
      expect(JSON.parse(r.stdout).withBilling.mx.stale).toBe(after.filter((row) => row.mx_billing === 'stale').length);
    },
    hangBound(60_000),
  );
});
