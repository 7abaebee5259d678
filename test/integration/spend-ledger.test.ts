// The ledger and the day and month budgets in a store's file (store/store-spend.ts): runs on the
// same file, each with its own connection, share what was spent and what their calls in flight
// hold; a charge is committed with the answers; a killed run's holds go (its process is gone, or
// its lease ran out). Clocks are injected.
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { periodAt, type PeriodLimit } from '../../src/core/budget-periods.js';
import { ResultStore, SCHEMA_VERSION } from '../../src/store/result-store.js';
import { SpendHolds } from '../../src/store/store-spend.js';
import { tempDir } from '../helpers/cli.js';
import { openSqliteFile } from '../helpers/sqlite.js';

const NOON = Date.parse('2026-03-14T12:00:00Z');
const DAY: PeriodLimit[] = [{ credits: 20, per: 'day' }];

function storeFile(): string {
  const file = path.join(tempDir(), 'store.sqlite');
  ResultStore.open({ path: file }).close();
  return file;
}

/** A run's holds over its own connection to `file`. */
function holdsOn(file: string, owner: string, clock: { now: number }, alive: (pid: number) => boolean = () => true): SpendHolds {
  const db = new DatabaseSync(file, { timeout: 5000 });
  return new SpendHolds(db, { owner, path: file, leaseMs: 60_000, now: () => clock.now, alive });
}

describe('the ledger in the store', () => {
  it('is a table of its own, migrated with the others', () => {
    const file = storeFile();
    const db = openSqliteFile(file, { readonly: true });
    expect(db.pragma('user_version')).toBe(SCHEMA_VERSION);
    const tables = db.rows("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view', 'trigger') ORDER BY name").map((row) => row[0]);
    expect(tables).toEqual(expect.arrayContaining(['ledger', 'ledger_totals', 'ledger_total', 'ledger_view', 'spend_holds']));
    db.close();
  });

  it("writes a charge and releases its hold in the commit of the answers, which another connection then sees", () => {
    const file = storeFile();
    const clock = { now: NOON };
    const store = ResultStore.open({ path: file, flushIntervalMs: 60_000 });
    const holds = store.spend().holds('run-a', 60_000);
    const held = holds.reserve(8, DAY, clock.now);
    expect(held).toEqual({ seq: 1 });
    const other = holdsOn(file, 'run-b', clock);
    // 8 held by run-a: 12 left.
    expect(other.reserve(13, DAY, clock.now)).toMatchObject({ refused: DAY[0], spent: 0, held: 8 });
    store.put('svc', 'lookup_email', 'a@b.com', { found: true, data: { lead: { name: 'A' } } }, 'run-a');
    store.settle({ hold: { owner: 'run-a', seq: 1 }, charge: { at: clock.now, service: 'svc', op: 'lookup_email', credits: 6, runId: 'run-a' } });
    const db = openSqliteFile(file, { readonly: true });
    expect(db.value('SELECT count(*) FROM ledger')).toBe(0);
    store.flush();
    expect(db.rows('SELECT charged_at_utc, service, op, credits, run_id FROM ledger_view')).toEqual([['2026-03-14T12:00:00.000Z', 'svc', 'lookup_email', 6, 'run-a']]);
    expect(db.value('SELECT count(*) FROM spend_holds')).toBe(0);
    expect(db.value('SELECT count(*) FROM results')).toBe(1);
    // 6 spent: 14 left.
    expect(other.reserve(14, DAY, clock.now)).toEqual({ seq: 1 });
    db.close();
    store.close();
  });

  it('two runs at once never hold more than the budget between them', () => {
    const file = storeFile();
    const clock = { now: NOON };
    const runs = [holdsOn(file, 'one', clock), holdsOn(file, 'two', clock)];
    const granted = Array.from({ length: 10 }, (_, i) => runs[i % 2]!.reserve(4, DAY, clock.now)).filter((outcome) => 'seq' in outcome);
    expect(granted).toHaveLength(5);
    const db = openSqliteFile(file, { readonly: true });
    expect(db.value('SELECT sum(credits) FROM spend_holds')).toBe(20);
    db.close();
  });

  it("a killed run's holds go: at once when its process is gone (this host), else when their lease runs out", () => {
    const file = storeFile();
    const clock = { now: NOON };
    holdsOn(file, 'killed', clock).reserve(20, DAY, clock.now);
    expect(holdsOn(file, 'living', clock).reserve(4, DAY, clock.now)).toMatchObject({ held: 20 });
    expect(holdsOn(file, 'sees-it-dead', clock, () => false).reserve(4, DAY, clock.now)).toEqual({ seq: 1 });

    const other = storeFile();
    holdsOn(other, 'frozen', clock).reserve(20, DAY, clock.now);
    const late = holdsOn(other, 'later', clock);
    clock.now += 59_000;
    expect(late.reserve(4, DAY, clock.now)).toMatchObject({ held: 20 });
    clock.now += 2_000;
    expect(late.reserve(4, DAY, clock.now)).toEqual({ seq: 1 });
  });

  it('a period is what its UTC days spent: the month sums them, the next day starts at 0', () => {
    const file = storeFile();
    const store = ResultStore.open({ path: file });
    const charge = (iso: string, credits: number) => store.settle({ hold: undefined, charge: { at: Date.parse(iso), service: 'svc', op: 'lookup_url', credits, runId: 'r' } });
    charge('2026-02-28T23:59:59.999Z', 4);
    charge('2026-03-01T00:00:00.000Z', 6);
    charge('2026-03-14T12:00:00.000Z', 8);
    charge('2026-03-14T23:00:00.000Z', 2);
    store.settle({ hold: undefined, charge: undefined });
    store.flush();
    const { ledger } = store.spend();
    expect(ledger.spentIn(periodAt('day', NOON))).toBe(10);
    expect(ledger.spentIn(periodAt('month', NOON))).toBe(16);
    expect(ledger.spentIn(periodAt('day', Date.parse('2026-03-15T00:00:00Z')))).toBe(0);
    expect(ledger.months(Date.parse('2026-01-01T00:00:00Z'), NOON)).toEqual([
      { period: '2026-02', credits: 4, calls: 1 },
      { period: '2026-03', credits: 16, calls: 3 },
    ]);
    store.close();
  });
});
