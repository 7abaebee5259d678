// The ledger and the day and month budgets in a store's file (store/store-spend.ts): runs on the
// same file, each with its own connection, share what was spent and what their calls in flight
// hold, per service; a charge is committed with the answers; a killed run's holds are counted as
// spent at what they held (never dropped), once its process is gone or it stopped renewing them for
// a lease as the other run's own clock measures it; a run whose clock is wrong takes no live hold.
// Clocks are injected: the wall clock (`now`, what holds are dated by) and each run's monotonic one
// (`elapsed`, what leases are measured by).
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { periodAt, type PeriodLimit } from '../../src/core/budget-periods.js';
import { holderAlive, runGoing } from '../../src/core/processes.js';
import { ResultStore, SCHEMA_VERSION } from '../../src/store/result-store.js';
import { SpendHolds } from '../../src/store/store-spend.js';
import { tempDir } from '../helpers/cli.js';
import { openSqliteFile } from '../helpers/sqlite.js';

const NOON = Date.parse('2026-03-14T12:00:00Z');
const DAY: PeriodLimit[] = [{ credits: 20, per: 'day' }];
const MONTH: PeriodLimit[] = [{ credits: 48, per: 'month' }];
const LEASE = 60_000;

function storeFile(): string {
  const file = path.join(tempDir(), 'store.sqlite');
  ResultStore.open({ path: file }).close();
  return file;
}

interface Clocks {
  now: number;
  elapsed: number;
}

/** A run's holds over its own connection to `file`, of service `svc` unless said. */
function holdsOn(file: string, owner: string, clock: Clocks, options: { alive?: (pid: number, owner: string) => boolean; service?: string } = {}): SpendHolds {
  const db = new DatabaseSync(file, { timeout: 5000 });
  return new SpendHolds(db, {
    owner,
    service: options.service ?? 'svc',
    path: file,
    leaseMs: LEASE,
    now: () => clock.now,
    elapsed: () => clock.elapsed,
    alive: options.alive ?? (() => true),
  });
}

const granted = (outcome: object) => 'seq' in outcome;

describe('the ledger in the store', () => {
  it('is a table of its own, migrated with the others', () => {
    const file = storeFile();
    const db = openSqliteFile(file, { readonly: true });
    expect(db.pragma('user_version')).toBe(SCHEMA_VERSION);
    const tables = db.rows("SELECT name FROM sqlite_schema WHERE type IN ('table', 'view', 'trigger') ORDER BY name").map((row) => row[0]);
    expect(tables).toEqual(expect.arrayContaining(['ledger', 'ledger_totals', 'ledger_total', 'ledger_view', 'spend_holds']));
    db.close();
  });

  it('writes a charge and releases its hold in the commit of the answers, which another connection then sees', () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    const store = ResultStore.open({ path: file, flushIntervalMs: 60_000 });
    const holds = store.spend().holds('run-a', 'svc', LEASE);
    expect(holds.reserve('lookup_email', 8, DAY, clock.now)).toEqual({ seq: 1 });
    const other = holdsOn(file, 'run-b', clock);
    // 8 held by run-a: 12 left.
    expect(other.reserve('lookup_email', 13, DAY, clock.now)).toMatchObject({ refused: DAY[0], spent: 0, held: 8 });
    const db = openSqliteFile(file, { readonly: true });
    expect(db.rows('SELECT owner, seq, credits, made_at, service, op FROM spend_holds')).toEqual([['run-a', 1, 8, NOON, 'svc', 'lookup_email']]);
    store.put('svc', 'lookup_email', 'a@b.com', { found: true, data: { lead: { name: 'A' } } }, 'run-a');
    store.settle({
      hold: { owner: 'run-a', seq: 1, at: NOON, service: 'svc', op: 'lookup_email' },
      charge: { at: clock.now, service: 'svc', op: 'lookup_email', credits: 6, runId: 'run-a' },
    });
    expect(db.value('SELECT count(*) FROM ledger')).toBe(0);
    store.flush();
    expect(db.rows('SELECT charged_at_utc, service, op, credits, lapsed, run_id FROM ledger_view')).toEqual([
      ['2026-03-14T12:00:00.000Z', 'svc', 'lookup_email', 6, 0, 'run-a'],
    ]);
    expect(db.value('SELECT count(*) FROM spend_holds')).toBe(0);
    expect(db.value('SELECT count(*) FROM results')).toBe(1);
    // 6 spent: 14 left.
    expect(other.reserve('lookup_email', 14, DAY, clock.now)).toEqual({ seq: 1 });
    db.close();
    store.close();
  });

  it('two runs at once never hold more than the budget between them', () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    const runs = [holdsOn(file, 'one', clock), holdsOn(file, 'two', clock)];
    const outcomes = Array.from({ length: 10 }, (_, i) => runs[i % 2]!.reserve('lookup_email', 4, DAY, clock.now));
    expect(outcomes.filter(granted)).toHaveLength(5);
    const db = openSqliteFile(file, { readonly: true });
    expect(db.value('SELECT sum(credits) FROM spend_holds')).toBe(20);
    db.close();
  });

  it('a call holds without a budget too: a run killed then is counted all the same', () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    expect(holdsOn(file, 'killed', clock).reserve('lookup_url', 8, [], clock.now)).toEqual({ seq: 1 });
    holdsOn(file, 'next', clock, { alive: () => false }).reserve('lookup_url', 8, [], clock.now);
    const db = openSqliteFile(file, { readonly: true });
    expect(db.rows('SELECT charged_at, service, op, credits, lapsed, run_id FROM ledger')).toEqual([[NOON, 'svc', 'lookup_url', 8, 1, 'killed']]);
    db.close();
  });

  it("the last call that fits before a budget's edge holds all the budget has left", () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    const run = holdsOn(file, 'run', clock);
    // 20 left: room for two calls at 8 after this one, so it holds 8.
    run.reserve('lookup_email', 8, DAY, clock.now);
    // 12 left: no call at 8 would fit after this one, so it holds all 12.
    run.reserve('lookup_email', 8, DAY, clock.now);
    const db = openSqliteFile(file, { readonly: true });
    expect(db.rows('SELECT seq, credits FROM spend_holds ORDER BY seq')).toEqual([
      [1, 8],
      [2, 12],
    ]);
    db.close();
    expect(run.reserve('lookup_email', 1, DAY, clock.now)).toMatchObject({ spent: 0, held: 20 });
  });
});

describe("a killed run's holds", () => {
  it('count as spent at what they held, dated when they were made, once its process is gone (this host): one transaction', () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    const day: PeriodLimit[] = [{ credits: 40, per: 'day' }];
    const killed = holdsOn(file, 'killed', clock);
    killed.reserve('lookup_email', 8, day, clock.now);
    killed.reserve('lookup_url', 8, day, clock.now + 1);
    expect(holdsOn(file, 'living', clock).reserve('lookup_email', 25, day, clock.now)).toMatchObject({ refused: day[0], spent: 0, held: 16 });
    clock.now += 3_600_000;
    // The next run sees the process gone: its holds become lapsed charges, which the budget counts.
    const next = holdsOn(file, 'sees-it-dead', clock, { alive: () => false });
    expect(next.reserve('lookup_email', 25, day, clock.now)).toMatchObject({ refused: day[0], spent: 16, held: 0 });
    const db = openSqliteFile(file, { readonly: true });
    expect(db.rows('SELECT charged_at, service, op, credits, lapsed, run_id FROM ledger ORDER BY charged_at')).toEqual([
      [NOON, 'svc', 'lookup_email', 8, 1, 'killed'],
      [NOON + 1, 'svc', 'lookup_url', 8, 1, 'killed'],
    ]);
    expect(db.rows('SELECT service, day, credits, calls, lapsed FROM ledger_totals')).toEqual([['svc', Math.floor(NOON / 86_400_000), 16, 2, 16]]);
    expect(db.value('SELECT count(*) FROM spend_holds')).toBe(0);
    db.close();
    // 24 left of the day: a call of 24 fits.
    expect(next.reserve('lookup_email', 24, day, clock.now)).toEqual({ seq: 1 });
  });

  it("of a run of this very process that ended without releasing them (a full disk): counted at once by the next run, as a dead process's", () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    const day: PeriodLimit[] = [{ credits: 40, per: 'day' }];
    const ended = runGoing('ended-here');
    // Its hold is written; its answer's commit, the release, and its close never come.
    holdsOn(file, 'ended-here', clock, { alive: holderAlive }).reserve('lookup_email', 8, day, clock.now);
    // While it goes, its hold is a live one's, whatever the pid says.
    expect(holdsOn(file, 'beside-it', clock, { alive: holderAlive }).reserve('lookup_email', 33, day, clock.now)).toMatchObject({ spent: 0, held: 8 });
    ended();
    expect(holderAlive(process.pid, 'ended-here')).toBe(false);
    expect(holderAlive(process.pid, 'never-registered')).toBe(true);
    expect(holdsOn(file, 'after-it', clock, { alive: holderAlive }).reserve('lookup_email', 33, day, clock.now)).toMatchObject({ spent: 8, held: 0 });
    const db = openSqliteFile(file, { readonly: true });
    expect(db.rows('SELECT credits, lapsed, run_id FROM ledger')).toEqual([[8, 1, 'ended-here']]);
    db.close();
  });

  it("on another host, once they were not renewed for a lease as this run's own clock measures it (its wall clock a day ahead changes nothing)", () => {
    const file = storeFile();
    const frozenClock = { now: NOON, elapsed: 0 };
    holdsOn(file, 'frozen', frozenClock).reserve('lookup_email', 20, MONTH, NOON);
    const db = new DatabaseSync(file);
    db.prepare("UPDATE spend_holds SET host = 'another-host'").run();
    db.close();
    const clock = { now: NOON + 86_400_000, elapsed: 1_000 };
    const late = holdsOn(file, 'later', clock);
    expect(late.reserve('lookup_email', 40, MONTH, clock.now)).toMatchObject({ held: 20 });
    clock.elapsed += LEASE - 1;
    expect(late.reserve('lookup_email', 40, MONTH, clock.now)).toMatchObject({ held: 20 });
    clock.elapsed += 1;
    expect(late.reserve('lookup_email', 40, MONTH, clock.now)).toMatchObject({ refused: MONTH[0], spent: 20, held: 0 });
    expect(late.reserve('lookup_email', 28, MONTH, clock.now)).toEqual({ seq: 1 });
  });

  it("a run renewing its holds keeps them, whatever the other run's clock says", () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    const alive = holdsOn(file, 'alive', clock);
    alive.reserve('lookup_email', 4, MONTH, clock.now);
    const db = new DatabaseSync(file);
    db.prepare("UPDATE spend_holds SET host = 'another-host'").run();
    db.close();
    const watcherClock = { now: NOON + 86_400_000, elapsed: 0 };
    const watching = holdsOn(file, 'watcher', watcherClock);
    expect(watching.reserve('lookup_email', 45, MONTH)).toMatchObject({ held: 4 });
    for (let i = 0; i < 5; i++) {
      watcherClock.elapsed += LEASE / 2;
      // The other run reserves again (its clock moved on): a renewal, seen as a change.
      clock.now += LEASE / 2;
      alive.reserve('lookup_email', 1, MONTH, clock.now);
      expect(watching.reserve('lookup_email', 48, MONTH)).toMatchObject({ spent: 0 });
    }
  });

  it('a live hold survives a run whose clock is a day ahead: two runs together never get more calls than holds allow', () => {
    const file = storeFile();
    const right = holdsOn(file, 'right', { now: NOON, elapsed: 0 });
    const ahead = holdsOn(file, 'ahead', { now: NOON + 86_400_000, elapsed: 0 });
    // 48 a month, calls at 4: twelve between them, whichever run asks.
    const calls = [
      ...Array.from({ length: 6 }, () => right.reserve('lookup_email', 4, MONTH)),
      ...Array.from({ length: 12 }, () => ahead.reserve('lookup_email', 4, MONTH)),
    ];
    expect(calls.filter(granted)).toHaveLength(12);
    const db = openSqliteFile(file, { readonly: true });
    expect(db.rows('SELECT owner, count(*), sum(credits) FROM spend_holds GROUP BY owner ORDER BY owner')).toEqual([
      ['ahead', 6, 24],
      ['right', 6, 24],
    ]);
    db.close();
  });

  it('of a run taken for gone that settles after all: its real charge takes the lapsed row’s place', () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    const store = ResultStore.open({ path: file });
    const frozen = store.spend().holds('frozen', 'svc', LEASE);
    frozen.reserve('lookup_email', 8, DAY, NOON);
    holdsOn(file, 'next', clock, { alive: () => false }).reserve('lookup_email', 4, DAY, NOON);
    const db = openSqliteFile(file, { readonly: true });
    expect(db.rows('SELECT credits, lapsed FROM ledger')).toEqual([[8, 1]]);
    store.settle({
      hold: { owner: 'frozen', seq: 1, at: NOON, service: 'svc', op: 'lookup_email' },
      charge: { at: NOON, service: 'svc', op: 'lookup_email', credits: 6, runId: 'frozen' },
    });
    store.flush();
    expect(db.rows('SELECT credits, lapsed FROM ledger')).toEqual([[6, 0]]);
    expect(db.rows('SELECT credits, calls, lapsed FROM ledger_totals')).toEqual([[6, 1, 0]]);
    db.close();
    store.close();
  });

  it('a run that ends with a call not settled counts it at what it holds (its answer may have been charged)', () => {
    const file = storeFile();
    const store = ResultStore.open({ path: file });
    const holds = store.spend().holds('quitting', 'svc', LEASE);
    holds.reserve('lookup_email', 8, [], NOON);
    holds.reserve('lookup_email', 8, [], NOON);
    store.settle({ hold: { owner: 'quitting', seq: 1, at: NOON, service: 'svc', op: 'lookup_email' }, charge: undefined });
    store.flush();
    holds.close();
    const db = openSqliteFile(file, { readonly: true });
    expect(db.rows('SELECT credits, lapsed FROM ledger')).toEqual([[8, 1]]);
    expect(db.value('SELECT count(*) FROM spend_holds')).toBe(0);
    db.close();
    store.close();
  });
});

describe('one service’s spend', () => {
  it("a budget counts the spend and the holds of the run's service only", () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    const store = ResultStore.open({ path: file });
    store.settle({ hold: undefined, charge: { at: NOON, service: 'sandbox-url', op: 'lookup_email', credits: 18, runId: 'r' } });
    store.flush();
    holdsOn(file, 'rehearsal', clock, { service: 'sandbox-url' }).reserve('lookup_email', 2, DAY, NOON);
    const real = holdsOn(file, 'real', clock, { service: 'real-url' });
    expect(real.reserve('lookup_email', 20, DAY, NOON)).toEqual({ seq: 1 });
    const rehearsal = holdsOn(file, 'rehearsal-2', clock, { service: 'sandbox-url' });
    expect(rehearsal.reserve('lookup_email', 1, DAY, NOON)).toMatchObject({ spent: 18, held: 2 });
    const { ledger } = store.spend();
    expect(ledger.spentIn(periodAt('day', NOON), 'sandbox-url')).toBe(18);
    expect(ledger.spentIn(periodAt('day', NOON), 'real-url')).toBe(0);
    expect(ledger.standing(periodAt('day', NOON), 'real-url')).toEqual({ spent: 0, held: 20 });
    expect(ledger.services()).toEqual(['real-url', 'sandbox-url']);
    store.close();
  });
});

describe('what the ledger lists', () => {
  it('a period is what its UTC days spent: the month sums them, the next day starts at 0', () => {
    const file = storeFile();
    const store = ResultStore.open({ path: file });
    const charge = (iso: string, credits: number) =>
      store.settle({ hold: undefined, charge: { at: Date.parse(iso), service: 'svc', op: 'lookup_url', credits, runId: 'r' } });
    charge('2026-02-28T23:59:59.999Z', 4);
    charge('2026-03-01T00:00:00.000Z', 6);
    charge('2026-03-14T12:00:00.000Z', 8);
    charge('2026-03-14T23:00:00.000Z', 2);
    store.settle({ hold: undefined, charge: undefined });
    store.flush();
    const { ledger } = store.spend();
    expect(ledger.spentIn(periodAt('day', NOON), 'svc')).toBe(10);
    expect(ledger.spentIn(periodAt('month', NOON), 'svc')).toBe(16);
    expect(ledger.spentIn(periodAt('day', Date.parse('2026-03-15T00:00:00Z')), 'svc')).toBe(0);
    expect(ledger.months(12, 'svc')).toEqual([
      { period: '2026-02', credits: 4, calls: 1, lapsed: 0 },
      { period: '2026-03', credits: 16, calls: 3, lapsed: 0 },
    ]);
    expect(ledger.days(2)).toEqual([
      { period: '2026-03-01', credits: 6, calls: 1, lapsed: 0 },
      { period: '2026-03-14', credits: 10, calls: 2, lapsed: 0 },
    ]);
    expect(ledger.months(1, 'svc')).toEqual([{ period: '2026-03', credits: 16, calls: 3, lapsed: 0 }]);
    expect(ledger.newestCharge()).toBe(Date.parse('2026-03-14T23:00:00.000Z'));
    expect(ledger.total('svc')).toEqual({ credits: 20, calls: 4 });
    store.close();
  });

  it('the most one call of each operation was charged, per service, lapsed holds aside', () => {
    const file = storeFile();
    const store = ResultStore.open({ path: file });
    const charge = (service: string, op: string, credits: number) => store.settle({ hold: undefined, charge: { at: NOON, service, op, credits, runId: 'r' } });
    charge('svc', 'lookup_email', 6);
    charge('svc', 'lookup_email', 14);
    charge('svc', 'lookup_url', 4);
    charge('other', 'lookup_email', 30);
    store.flush();
    const db = openSqliteFile(file);
    db.run("INSERT INTO ledger (charged_at, service, op, credits, run_id, lapsed) VALUES (?, 'svc', 'lookup_url', 40, 'gone', 1)", NOON);
    db.close();
    expect(store.spend().ledger.mostCharged('svc')).toEqual(
      new Map([
        ['lookup_email', 14],
        ['lookup_url', 4],
      ]),
    );
    store.close();
  });
});
