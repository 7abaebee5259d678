// A store written by the build before schema v9 (fixtures/stores/v8-two-services.sqlite: answers and a
// ledger of two services, history with changes) upgrades once, in place, keeping what it held: the
// ledger's rows and their totals per service and day, every answer and earlier answer, and no change
// of that history is reported again (docs/cli-contract.md, "What changed since the last answer").
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { periodAt } from '../../src/core/budget-periods.js';
import { Budgets } from '../../src/lookup/budget.js';
import { storeLedger } from '../../src/lookup/spend-ledgers.js';
import { ResultStore, SCHEMA_VERSION } from '../../src/store/result-store.js';
import { makeTempDir } from '../helpers/files.js';
import { openSqliteFile } from '../helpers/sqlite.js';

const FIXTURE = path.join(import.meta.dirname, '../../fixtures/stores/v8-two-services.sqlite');
const REAL = 'http://127.0.0.1:47811/v2';
const REHEARSAL = 'http://127.0.0.1:47812/v2';

function copyOfFixture(): string {
  const file = path.join(makeTempDir(), 'v8.sqlite');
  fs.copyFileSync(FIXTURE, file);
  return file;
}

describe('a v8 store, opened by this build', () => {
  it('upgrades once, keeping its answers, history and ledger, the ledger now summed per service', () => {
    const file = copyOfFixture();
    const before = openSqliteFile(file, { readonly: true });
    expect(before.pragma('user_version')).toBe(8);
    const answers = before.rows('SELECT service_id, op, key, found, data, fetched_at FROM results ORDER BY rowid');
    const history = before.rows('SELECT service_id, op, key, fetched_at, replaced_at, found, same, data FROM history ORDER BY rowid');
    const ledger = before.rows('SELECT charged_at, service, op, credits, run_id FROM ledger ORDER BY rowid');
    before.close();
    expect(answers).toHaveLength(18);
    expect(history).toHaveLength(9);
    expect(ledger).toHaveLength(15);

    const upgrades: Array<[number, number]> = [];
    ResultStore.open({ path: file, onUpgrade: (from, to) => upgrades.push([from, to]) }).close();
    ResultStore.open({ path: file, onUpgrade: (from, to) => upgrades.push([from, to]) }).close();
    expect(upgrades).toEqual([[8, SCHEMA_VERSION]]);

    const after = openSqliteFile(file, { readonly: true });
    expect(after.rows('SELECT service_id, op, key, found, data, fetched_at FROM results ORDER BY rowid')).toEqual(answers);
    expect(after.rows('SELECT service_id, op, key, fetched_at, replaced_at, found, same, data FROM history ORDER BY rowid')).toEqual(history);
    expect(after.rows('SELECT charged_at, service, op, credits, run_id FROM ledger ORDER BY rowid')).toEqual(ledger);
    // Every row the ledger had was a charge the service made, none a lapsed hold.
    expect(after.value('SELECT count(*) FROM ledger WHERE lapsed <> 0')).toBe(0);
    // The totals per service and day, from the ledger's own rows.
    const day = Math.floor(Number(ledger[0]![0]) / 86_400_000);
    expect(after.rows('SELECT service, day, credits, calls, lapsed FROM ledger_totals ORDER BY service')).toEqual([
      [REAL, day, 68, 10, 0],
      [REHEARSAL, day, 20, 5, 0],
    ]);
    // What the history held was the build before's to report: nothing is left to report.
    expect(after.value('SELECT count(*) FROM history WHERE reported = 0')).toBe(0);
    after.close();
  });

  it("a budget reads the spend of its own service: the rehearsal's rows never count against the real service", async () => {
    const file = copyOfFixture();
    const store = ResultStore.open({ path: file });
    const db = openSqliteFile(file, { readonly: true });
    const chargedAt = Number(db.value('SELECT min(charged_at) FROM ledger'));
    db.close();
    const day = periodAt('day', chargedAt);
    const { ledger } = store.spend();
    expect(ledger.spentIn(day, REAL)).toBe(68);
    expect(ledger.spentIn(day, REHEARSAL)).toBe(20);
    // A day budget of 76 for the real service leaves 8: one lookup at 8 fits, a second does not.
    const budgets = (service: string, runId: string) =>
      new Budgets({ limits: [{ credits: 76, per: 'day' }], ledger: storeLedger(store, runId, 60_000, service), now: () => chargedAt, service, runId });
    const real = budgets(REAL, 'run-real');
    expect(await real.tryBegin('lookup_email', 8)).toBeDefined();
    expect(await real.tryBegin('lookup_email', 8)).toBeUndefined();
    expect(real.stopped).toMatchObject({ spent: 68, held: 8 });
    // The rehearsal's service has spent 20 of its own 76.
    expect(await budgets(REHEARSAL, 'run-rehearsal').tryBegin('lookup_email', 8)).toBeDefined();
    store.close();
  });

  it('keeps the history from then on, a change marked unreported and a repeat reported', () => {
    const file = copyOfFixture();
    const store = ResultStore.open({ path: file });
    const db = openSqliteFile(file, { readonly: true });
    const [[key, data]] = db.rows(
      'SELECT r.key, r.data FROM results r JOIN services s ON s.id = r.service_id WHERE s.name = ? AND r.found = 1 LIMIT 2',
      REAL,
    ) as Array<[string, string]>;
    const other = (
      db.rows('SELECT r.key FROM results r JOIN services s ON s.id = r.service_id WHERE s.name = ? AND r.found = 1 AND r.key <> ? LIMIT 1', REAL, key) as Array<
        [string]
      >
    )[0]![0];
    const parsed = JSON.parse(data!) as { lead: Record<string, unknown> };
    const later = Date.parse('2026-12-07T03:00:00Z');
    store.put(
      REAL,
      'lookup_email',
      key!,
      { found: true, data: { ...parsed, lead: { ...parsed.lead, title: 'Chief Everything Officer' } }, fetchedAt: later },
      'run-after',
    );
    const otherData = JSON.parse((db.rows('SELECT data FROM results WHERE key = ?', other) as Array<[string]>)[0]![0]) as unknown;
    store.put(REAL, 'lookup_email', other, { found: true, data: otherData, fetchedAt: later }, 'run-after');
    store.flush();
    expect(db.rows('SELECT key, same, reported FROM history WHERE replaced_at = ? ORDER BY key', later)).toEqual(
      [
        [key, 0, 0],
        [other, 1, 1],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
    );
    db.close();
    store.close();
  });
});
