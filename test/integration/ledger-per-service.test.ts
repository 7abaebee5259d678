// What `store clear`, `store stats` and `store spend` read of the ledger (store/ledger-upkeep.ts,
// store/ledger-reader.ts; docs/cli-contract.md, "Spending over days and months"): one service's
// ledger or every one, what a clear removes and how many calls it counted (folded calls too: the
// totals keep them), the ledger's size, and what is held or charged per service. Clocks are injected.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DatabaseSync } from 'node:sqlite';
import { ledgerSize } from '../../src/store/ledger-upkeep.js';
import { ResultStore } from '../../src/store/result-store.js';
import { tempDir } from '../helpers/cli.js';
import { openSqliteFile } from '../helpers/sqlite.js';

const at = (iso: string) => Date.parse(iso);
const NOW = at('2026-05-14T12:00:00Z');

/** A store with charges of two services over several days, one of them long enough ago to be folded. */
function storeWithTwoServices(): { store: ResultStore; file: string } {
  const file = path.join(tempDir(), 'store.sqlite');
  const store = ResultStore.open({ path: file, now: () => NOW });
  const charge = (iso: string, service: string, credits: number) =>
    store.settle({ hold: undefined, charge: { at: at(iso), service, op: 'lookup_email', credits, runId: 'r' } });
  charge('2026-01-10T10:00:00Z', 'svc', 4); // folded (before April)
  charge('2026-01-10T11:00:00Z', 'svc', 6); // folded, but the dearest: kept
  charge('2026-05-13T10:00:00Z', 'svc', 2);
  charge('2026-05-14T10:00:00Z', 'svc', 2);
  charge('2026-05-14T10:00:00Z', 'other', 8);
  charge('2026-05-14T11:00:00Z', 'other', 8);
  store.flush();
  return { store, file };
}

describe("clearing the ledger (store clear's calls)", () => {
  it('of one service: its per-call rows and totals go, counted in calls (folded ones too); the other service keeps its own', () => {
    const { store, file } = storeWithTwoServices();
    expect(store.spend().fold()).toBe(1);
    expect(store.spend().clear('svc')).toBe(4);
    expect(store.spend().ledger.total('svc')).toEqual({ credits: 0, calls: 0 });
    expect(store.spend().ledger.total('other')).toEqual({ credits: 16, calls: 2 });
    expect(store.spend().ledger.mostCharged('svc')).toEqual(new Map());
    expect(store.spend().ledger.mostCharged('other')).toEqual(new Map([['lookup_email', 8]]));
    const db = openSqliteFile(file, { readonly: true });
    expect(db.rows('SELECT DISTINCT service FROM ledger')).toEqual([['other']]);
    expect(db.rows('SELECT DISTINCT service FROM ledger_totals')).toEqual([['other']]);
    db.close();
    // Cleared again: nothing more to count.
    expect(store.spend().clear('svc')).toBe(0);
    store.close();
  });

  it('of every service: the whole ledger goes, every call counted', () => {
    const { store, file } = storeWithTwoServices();
    expect(store.spend().clear(undefined)).toBe(6);
    const db = openSqliteFile(file, { readonly: true });
    expect(db.value('SELECT count(*) FROM ledger')).toBe(0);
    expect(db.value('SELECT count(*) FROM ledger_totals')).toBe(0);
    db.close();
    expect(store.spend().size()).toMatchObject({ rows: 0, days: 0 });
    store.close();
  });
});

describe("the ledger's size (store stats)", () => {
  it('its per-call rows, the UTC days it has totals for (of any service), and the bytes of both tables, in whole pages', () => {
    const { store, file } = storeWithTwoServices();
    const size = store.spend().size();
    expect(size.rows).toBe(6);
    expect(size.days).toBe(3);
    const db = openSqliteFile(file, { readonly: true });
    const page = db.pragma('page_size') as number;
    db.close();
    // Two tables of one page at least each, counted in whole pages.
    expect(size.bytes).toBeGreaterThanOrEqual(2 * page);
    expect((size.bytes ?? 1) % page).toBe(0);
    store.close();
  });
});

describe("the ledger's size on an SQLite built without dbstat", () => {
  it('its rows and days, and no bytes (not a failure)', () => {
    const { store, file } = storeWithTwoServices();
    const db = new DatabaseSync(file, { readOnly: true });
    // The same connection, but its SQLite has no dbstat table, as some builds.
    const withoutDbstat = new Proxy(db, {
      get(target, name) {
        if (name === 'prepare')
          return (sql: string) => {
            if (sql.includes('dbstat')) throw new Error('no such table: dbstat');
            return target.prepare(sql);
          };
        const value = Reflect.get(target, name) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    expect(ledgerSize(withoutDbstat)).toEqual({ rows: 6, days: 3, bytes: undefined });
    db.close();
    store.close();
  });
});

describe('what the ledger reads per service', () => {
  it('what calls in flight hold, of one service or of all', () => {
    const file = path.join(tempDir(), 'store.sqlite');
    const store = ResultStore.open({ path: file, now: () => NOW });
    store.spend().holds('run-a', 'svc', 60_000).reserve('lookup_email', 6, [], NOW);
    store.spend().holds('run-b', 'other', 60_000).reserve('lookup_email', 10, [], NOW);
    expect(store.spend().ledger.heldNow('svc')).toBe(6);
    expect(store.spend().ledger.heldNow('other')).toBe(10);
    expect(store.spend().ledger.heldNow()).toBe(16);
    expect(store.spend().ledger.services()).toEqual(['other', 'svc']);
    store.close();
  });

  it('the newest charge, of one service or of all; none in an empty ledger', () => {
    const { store } = storeWithTwoServices();
    expect(store.spend().ledger.newestCharge('svc')).toBe(at('2026-05-14T10:00:00Z'));
    expect(store.spend().ledger.newestCharge()).toBe(at('2026-05-14T11:00:00Z'));
    expect(store.spend().ledger.newestCharge('nobody')).toBeUndefined();
    store.close();
  });

  it('the last days and months with a charge, oldest first, of one service or of all together', () => {
    const { store } = storeWithTwoServices();
    const { ledger } = store.spend();
    expect(ledger.days(2, 'svc')).toEqual([
      { period: '2026-05-13', credits: 2, calls: 1, lapsed: 0 },
      { period: '2026-05-14', credits: 2, calls: 1, lapsed: 0 },
    ]);
    expect(ledger.days(1)).toEqual([{ period: '2026-05-14', credits: 18, calls: 3, lapsed: 0 }]);
    expect(ledger.days(5, 'other')).toEqual([{ period: '2026-05-14', credits: 16, calls: 2, lapsed: 0 }]);
    expect(ledger.months(5)).toEqual([
      { period: '2026-01', credits: 10, calls: 2, lapsed: 0 },
      { period: '2026-05', credits: 20, calls: 4, lapsed: 0 },
    ]);
    expect(ledger.months(1, 'svc')).toEqual([{ period: '2026-05', credits: 4, calls: 2, lapsed: 0 }]);
    expect(ledger.total()).toEqual({ credits: 30, calls: 6 });
    store.close();
  });

  it('months: each sums its days, however many months the ledger has', () => {
    const file = path.join(tempDir(), 'store.sqlite');
    const store = ResultStore.open({ path: file, now: () => NOW });
    for (const [iso, credits] of [
      ['2026-01-05T10:00:00Z', 1],
      ['2026-02-05T10:00:00Z', 2],
      ['2026-03-05T10:00:00Z', 4],
      ['2026-03-06T10:00:00Z', 8],
      ['2026-03-07T10:00:00Z', 16],
    ] as const)
      store.settle({ hold: undefined, charge: { at: at(iso), service: 'svc', op: 'lookup_email', credits, runId: 'r' } });
    store.flush();
    expect(
      store
        .spend()
        .ledger.months(12, 'svc')
        .map(({ period, credits, calls }) => [period, credits, calls]),
    ).toEqual([
      ['2026-01', 1, 1],
      ['2026-02', 2, 1],
      ['2026-03', 28, 3],
    ]);
    store.close();
  });

  it('a month sums its days: credits, calls and lapsed holds', () => {
    const { store, file } = storeWithTwoServices();
    const db = openSqliteFile(file);
    const lapse = (iso: string, credits: number) =>
      db.run("INSERT INTO ledger (charged_at, service, op, credits, run_id, lapsed) VALUES (?, 'svc', 'lookup_email', ?, 'gone', 1)", at(iso), credits);
    lapse('2026-05-02T10:00:00Z', 8);
    lapse('2026-05-13T10:00:00Z', 6);
    db.close();
    expect(store.spend().ledger.months(1, 'svc')).toEqual([{ period: '2026-05', credits: 18, calls: 4, lapsed: 14 }]);
    expect(store.spend().ledger.months(3)).toEqual([
      { period: '2026-01', credits: 10, calls: 2, lapsed: 0 },
      { period: '2026-05', credits: 34, calls: 6, lapsed: 14 },
    ]);
    store.close();
  });
});
