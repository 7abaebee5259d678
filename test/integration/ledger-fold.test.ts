// A bounded ledger (store/ledger-upkeep.ts; docs/cli-contract.md, "Spending over days and months"):
// the per-call rows charged before the start of the previous UTC month are folded away, each
// service and operation's dearest call kept; the per-day totals, which every budget and `store
// spend` read, are kept for good; a run folds as it opens its ledger. Clocks are injected.
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { periodAt } from '../../src/core/budget-periods.js';
import { enrich } from '../../src/run/enrich.js';
import { startSandbox } from '../../src/sandbox/server.js';
import { foldBefore } from '../../src/store/ledger-upkeep.js';
import { ResultStore } from '../../src/store/result-store.js';
import { tempDir } from '../helpers/cli.js';
import { writeCsv } from '../helpers/files.js';
import { openSqliteFile } from '../helpers/sqlite.js';

const at = (iso: string) => Date.parse(iso);
const DAY = 86_400_000;

function charge(store: ResultStore, iso: string, credits: number, service = 'svc', op = 'lookup_email'): void {
  store.settle({ hold: undefined, charge: { at: at(iso), service, op, credits, runId: 'r' } });
}

describe('folding the ledger', () => {
  it('folds before the start of the previous UTC month: a month of margin, whatever day of the month it is', () => {
    expect(new Date(foldBefore(at('2026-03-14T12:00:00Z'))).toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(new Date(foldBefore(at('2026-03-01T00:00:00Z'))).toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(new Date(foldBefore(at('2026-02-28T23:59:59.999Z'))).toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(new Date(foldBefore(at('2027-01-05T00:00:00Z'))).toISOString()).toBe('2026-12-01T00:00:00.000Z');
  });

  it('deletes the per-call rows before it, keeps the dearest of each service and operation, and the totals every budget reads', () => {
    const clock = { now: at('2026-03-14T12:00:00Z') };
    const file = path.join(tempDir(), 'store.sqlite');
    const store = ResultStore.open({ path: file, now: () => clock.now });
    charge(store, '2026-01-10T10:00:00Z', 4);
    charge(store, '2026-01-10T11:00:00Z', 14); // the dearest person by email, ever
    charge(store, '2026-01-31T23:59:59.999Z', 6);
    charge(store, '2026-01-20T10:00:00Z', 4, 'svc', 'mx');
    charge(store, '2026-01-20T10:00:00Z', 8, 'other');
    charge(store, '2026-02-01T00:00:00.000Z', 6); // the first instant kept
    charge(store, '2026-03-14T09:00:00Z', 8);
    store.flush();
    const db = openSqliteFile(file, { readonly: true });
    const totals = db.rows('SELECT service, day, credits, calls, lapsed FROM ledger_totals ORDER BY service, day');
    const january = periodAt('month', at('2026-01-15T00:00:00Z'));
    expect(store.spend().ledger.spentIn(january, 'svc')).toBe(28);

    expect(store.spend().fold()).toBe(2);
    expect(db.rows('SELECT charged_at, service, op, credits FROM ledger ORDER BY charged_at, service')).toEqual([
      [at('2026-01-10T11:00:00Z'), 'svc', 'lookup_email', 14],
      [at('2026-01-20T10:00:00Z'), 'other', 'lookup_email', 8],
      [at('2026-01-20T10:00:00Z'), 'svc', 'mx', 4],
      [at('2026-02-01T00:00:00.000Z'), 'svc', 'lookup_email', 6],
      [at('2026-03-14T09:00:00Z'), 'svc', 'lookup_email', 8],
    ]);
    // The totals are untouched: January still spent 28, and the dearest call is still known.
    expect(db.rows('SELECT service, day, credits, calls, lapsed FROM ledger_totals ORDER BY service, day')).toEqual(totals);
    expect(store.spend().ledger.spentIn(january, 'svc')).toBe(28);
    expect(store.spend().ledger.mostCharged('svc')).toEqual(
      new Map([
        ['lookup_email', 14],
        ['mx', 4],
      ]),
    );
    // Again: nothing more to fold.
    expect(store.spend().fold()).toBe(0);
    db.close();
    store.close();
  });

  it('a lapsed hold is folded like a charge, and never kept as the dearest call', () => {
    const clock = { now: at('2026-05-02T00:00:00Z') };
    const file = path.join(tempDir(), 'store.sqlite');
    const store = ResultStore.open({ path: file, now: () => clock.now });
    charge(store, '2026-02-10T10:00:00Z', 6);
    store.flush();
    const db = openSqliteFile(file);
    db.run(
      "INSERT INTO ledger (charged_at, service, op, credits, run_id, lapsed) VALUES (?, 'svc', 'lookup_email', 40, 'gone', 1)",
      at('2026-02-11T10:00:00Z'),
    );
    expect(store.spend().fold()).toBe(1);
    expect(db.rows('SELECT credits, lapsed FROM ledger')).toEqual([[6, 0]]);
    expect(db.value('SELECT sum(lapsed) FROM ledger_totals')).toBe(40);
    db.close();
    store.close();
  });

  it('a year of nights stays bounded: about two months of per-call rows, every day of totals', () => {
    const file = path.join(tempDir(), 'store.sqlite');
    const clock = { now: at('2026-01-01T02:00:00Z') };
    const store = ResultStore.open({ path: file, now: () => clock.now });
    const perNight = 20;
    let most = 0;
    for (let night = 0; night < 365; night++) {
      clock.now = at('2026-01-01T02:00:00Z') + night * DAY;
      store.spend().fold();
      for (let call = 0; call < perNight; call++) charge(store, new Date(clock.now + call * 1000).toISOString(), 4 + 2 * ((night + call) % 4));
      store.flush();
      most = store.spend().size().rows > most ? store.spend().size().rows : most;
    }
    const size = store.spend().size();
    expect(size.days).toBe(365);
    // At most the previous month and this one (62 days), and the one dearest call kept.
    expect(most).toBeLessThanOrEqual(62 * perNight + 1);
    expect(size.rows).toBeGreaterThanOrEqual(31 * perNight);
    expect(store.spend().ledger.total('svc')).toEqual({ credits: 365 * perNight * 4 + 2 * 365 * (0 + 1 + 2 + 3) * (perNight / 4), calls: 365 * perNight });
    store.close();
  });
});

describe('a run folds as it opens its ledger', () => {
  it('enrich() folds the rows no budget reads before its first call', async () => {
    const sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
    try {
      const dir = tempDir();
      const file = path.join(dir, 'store.sqlite');
      const old = ResultStore.open({ path: file });
      for (let i = 0; i < 5; i++) charge(old, new Date(Date.now() - 100 * DAY + i).toISOString(), 4, sandbox.baseUrl);
      old.close();
      const input = writeCsv(path.join(dir, 'in.csv'), [['email'], ['jane.doe@acme.com']]);
      await enrich({ input, baseUrl: sandbox.baseUrl, token: sandbox.token, store: file });
      const db = openSqliteFile(file, { readonly: true });
      // Of the five old rows one is kept (the dearest of its operation); today's charge is there.
      expect(db.value('SELECT count(*) FROM ledger WHERE charged_at < ?', Date.now() - 50 * DAY)).toBe(1);
      expect(db.value('SELECT sum(calls) FROM ledger_totals')).toBe(6);
      db.close();
    } finally {
      await sandbox.close();
    }
  });
});
