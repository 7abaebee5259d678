// The edges of a run's holds in the store (store/store-spend.ts; docs/cli-contract.md, "Spending
// over days and months"): which budget a refusal names, what the last call before a budget's edge
// holds, when another run's holds count as spent if it stopped (the refusal says when, the soonest
// of them), and when a run looks for runs that are gone: at its first call and every half lease
// after, by its own clock. Clocks are injected: `now` dates the holds, `elapsed` measures leases.
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { describe, expect, it } from 'vitest';
import { StoreFailedError } from '../../src/api/errors.js';
import type { PeriodLimit } from '../../src/core/budget-periods.js';
import { ResultStore } from '../../src/store/result-store.js';
import { SpendHolds, storeSpend } from '../../src/store/store-spend.js';
import { tempDir } from '../helpers/cli.js';
import { openSqliteFile } from '../helpers/sqlite.js';

const NOON = Date.parse('2026-03-14T12:00:00Z');
const LEASE = 60_000;
const day = (credits: number): PeriodLimit => ({ credits, per: 'day' });
const month = (credits: number): PeriodLimit => ({ credits, per: 'month' });

function storeFile(): string {
  const file = path.join(tempDir(), 'store.sqlite');
  ResultStore.open({ path: file }).close();
  return file;
}

/** A run's holds over its own connection, its clocks the test's; every process alive unless said. */
function holdsOn(file: string, owner: string, clock: { now: number; elapsed: number }, alive: () => boolean = () => true): SpendHolds {
  return new SpendHolds(new DatabaseSync(file, { timeout: 5000 }), {
    owner,
    service: 'svc',
    path: file,
    leaseMs: LEASE,
    now: () => clock.now,
    elapsed: () => clock.elapsed,
    alive,
  });
}

/** Makes every hold of `owner` another host's: only its lease can tell it is gone. */
function elsewhere(file: string, owner: string): void {
  const db = openSqliteFile(file);
  db.run("UPDATE spend_holds SET host = 'another-host' WHERE owner = ?", owner);
  db.close();
}

const lapsedRows = (file: string) => {
  const db = openSqliteFile(file, { readonly: true });
  const rows = db.rows('SELECT run_id, credits FROM ledger WHERE lapsed = 1 ORDER BY run_id');
  db.close();
  return rows;
};

describe('which budget a refusal names', () => {
  it('of those the call would pass, the one with the least room, in whichever order they are given', () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    const run = holdsOn(file, 'run', clock);
    expect(run.reserve('lookup_email', 12, [], NOON)).toEqual({ seq: 1 });
    // Room: the month 36, the day 8; a call of 40 passes both, the day is the nearer edge.
    expect(run.reserve('lookup_email', 40, [month(48), day(20)], NOON)).toMatchObject({ refused: day(20), spent: 0, held: 12 });
    expect(run.reserve('lookup_email', 40, [day(20), month(48)], NOON)).toMatchObject({ refused: day(20) });
    // A call of 10 passes the day only.
    expect(run.reserve('lookup_email', 10, [month(48), day(20)], NOON)).toMatchObject({ refused: day(20) });
    expect(run.reserve('lookup_email', 8, [month(48), day(20)], NOON)).toEqual({ seq: 2 });
  });

  it('of two with the same room, the first given (the order of --budget)', () => {
    const file = storeFile();
    const run = holdsOn(file, 'run', { now: NOON, elapsed: 0 });
    expect(run.reserve('lookup_email', 30, [day(20), month(20)], NOON)).toMatchObject({ refused: day(20) });
    expect(run.reserve('lookup_email', 30, [month(20), day(20)], NOON)).toMatchObject({ refused: month(20) });
  });
});

describe("the last call before a budget's edge", () => {
  it('holds its worst case while another call of it fits after (twice its cost left), and all that is left once none would', () => {
    const file = storeFile();
    const run = holdsOn(file, 'run', { now: NOON, elapsed: 0 });
    // 16 left: exactly room for this call and one more: it holds 8.
    expect(run.reserve('lookup_email', 8, [day(16)], NOON)).toEqual({ seq: 1 });
    // 8 left: this call takes them.
    expect(run.reserve('lookup_email', 8, [day(16)], NOON)).toEqual({ seq: 2 });
    const db = openSqliteFile(file, { readonly: true });
    expect(db.rows('SELECT seq, credits FROM spend_holds ORDER BY seq')).toEqual([
      [1, 8],
      [2, 8],
    ]);
    db.close();
    expect(run.reserve('lookup_email', 1, [day(16)], NOON)).toMatchObject({ refused: day(16), held: 16 });
  });
});

describe('when a refusal says the holds of other runs lapse', () => {
  it('its own holds alone: never (they lapse with the run)', () => {
    const file = storeFile();
    const run = holdsOn(file, 'run', { now: NOON, elapsed: 0 });
    run.reserve('lookup_email', 8, [day(16)], NOON);
    const refused = run.reserve('lookup_email', 9, [day(16)], NOON);
    expect(refused).toMatchObject({ refused: day(16), held: 8 });
    expect(refused).not.toHaveProperty('lapseInMs');
  });

  it('nothing held at all: never', () => {
    const file = storeFile();
    holdsOn(file, 'other', { now: NOON, elapsed: 0 }).reserve('lookup_email', 4, [], NOON - 86_400_000);
    const refused = holdsOn(file, 'run', { now: NOON, elapsed: 0 }).reserve('lookup_email', 9, [day(8)], NOON);
    expect(refused).toMatchObject({ refused: day(8), spent: 0, held: 0 });
    expect(refused).not.toHaveProperty('lapseInMs');
  });

  it("another run's: when the soonest of them would lapse, by this run's clock, if it stopped renewing", () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    holdsOn(file, 'early', clock).reserve('lookup_email', 4, [], NOON);
    const watcher = holdsOn(file, 'watcher', clock);
    // The watcher first sees `early` at 0.
    expect(watcher.reserve('lookup_email', 20, [day(20)], NOON)).toMatchObject({ held: 4, lapseInMs: LEASE });
    clock.elapsed = 20_000;
    holdsOn(file, 'late', { now: NOON, elapsed: 0 }).reserve('lookup_email', 4, [], NOON);
    // `late` is first seen at 20 s, `early` 20 s ago: early's lease ends first.
    expect(watcher.reserve('lookup_email', 20, [day(20)], NOON)).toMatchObject({ held: 8, lapseInMs: LEASE - 20_000 });
  });
});

describe('when a run looks for runs that are gone', () => {
  /** A run on another host holding 8 credits that stopped renewing, and a run whose calls (at `elapsed` ms of its own clock) look for it. */
  function stoppedElsewhereAndWatched() {
    const file = storeFile();
    holdsOn(file, 'stopped', { now: NOON, elapsed: 0 }).reserve('lookup_email', 8, [], NOON);
    elsewhere(file, 'stopped');
    const clock = { now: NOON, elapsed: 0 };
    const run = holdsOn(file, 'run', clock);
    const callAt = (elapsed: number) => {
      clock.elapsed = elapsed;
      run.reserve('lookup_email', 1, [], NOON);
    };
    return { file, callAt };
  }

  it('at its first call and every half lease after, by its own clock: a run on another host that stopped renewing lapses at the first look a lease after it was seen', () => {
    const { file, callAt } = stoppedElsewhereAndWatched();
    callAt(0); // the first call looks: `stopped` seen
    callAt(LEASE / 2); // half a lease after: looks (not gone yet)
    callAt((3 * LEASE) / 4); // a quarter after that: does not look
    expect(lapsedRows(file)).toEqual([]);
    callAt(LEASE); // half a lease after the last look, a lease after `stopped` was seen: gone
    expect(lapsedRows(file)).toEqual([['stopped', 8]]);
  });

  it('not sooner than half a lease after its last look, even when a run went past its lease meanwhile', () => {
    const { file, callAt } = stoppedElsewhereAndWatched();
    callAt(0);
    callAt((3 * LEASE) / 4); // looks: three quarters of its lease gone
    callAt(LEASE + 1); // a lease after it was seen, but a quarter lease after the last look: not looked at
    expect(lapsedRows(file)).toEqual([]);
    callAt((5 * LEASE) / 4); // half a lease after the last look
    expect(lapsedRows(file)).toEqual([['stopped', 8]]);
  });

  it('a refusal that met no credits held does not look before its time', () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    // Another run's hold of yesterday: nothing of today's budget.
    holdsOn(file, 'killed', clock).reserve('lookup_email', 8, [], NOON - 86_400_000);
    let killed = false;
    const run = holdsOn(file, 'run', clock, () => !killed);
    run.reserve('lookup_email', 4, [], NOON - 86_400_000);
    killed = true;
    clock.elapsed = LEASE / 4;
    expect(run.reserve('lookup_email', 21, [day(20)], NOON)).toMatchObject({ refused: day(20), spent: 0, held: 0 });
    expect(lapsedRows(file)).toEqual([]);
    clock.elapsed = LEASE / 2;
    run.reserve('lookup_email', 20, [day(20)], NOON);
    expect(lapsedRows(file)).toEqual([['killed', 8]]);
  });

  it("by the process's own monotonic clock when none is given: a dead process's holds lapse at the first call", () => {
    const file = storeFile();
    const dead = new SpendHolds(new DatabaseSync(file), { owner: 'dead', service: 'svc', path: file, leaseMs: LEASE, now: () => NOON, alive: () => true });
    dead.reserve('lookup_email', 8, [], NOON);
    const store = ResultStore.open({ path: file, now: () => NOON });
    const db = openSqliteFile(file);
    // A pid no process has (above the largest Linux allows).
    db.run('UPDATE spend_holds SET pid = 99999999');
    db.close();
    store.spend().holds('run', 'svc', LEASE).reserve('lookup_email', 1, [], NOON);
    expect(lapsedRows(file)).toEqual([['dead', 8]]);
    store.close();
  });

  it('a run that found another gone on a refusal counts its holds as spent and tries again at once', () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    holdsOn(file, 'killed', clock).reserve('lookup_email', 8, [], NOON);
    let killed = false;
    const run = holdsOn(file, 'run', clock, () => !killed);
    expect(run.reserve('lookup_email', 4, [day(16)], NOON)).toEqual({ seq: 1 });
    killed = true;
    // No look is due (the same instant), but the refusal met another run's holds: it looks, and they count as spent.
    expect(run.reserve('lookup_email', 8, [day(16)], NOON)).toMatchObject({ refused: day(16), spent: 8, held: 4 });
    expect(lapsedRows(file)).toEqual([['killed', 8]]);
  });
});

describe('what a settled call writes', () => {
  it('a charge of no credits is no charged call; a hold settled twice changes nothing the second time', () => {
    const file = storeFile();
    const store = ResultStore.open({ path: file });
    const holds = store.spend().holds('run', 'svc', LEASE);
    holds.reserve('lookup_email', 8, [], NOON);
    const hold = { owner: 'run', seq: 1, at: NOON, service: 'svc', op: 'lookup_email' };
    store.settle({ hold, charge: { at: NOON, service: 'svc', op: 'lookup_email', credits: 0, runId: 'run' } });
    store.flush();
    store.settle({ hold, charge: { at: NOON, service: 'svc', op: 'lookup_email', credits: 4, runId: 'run' } });
    store.flush();
    const db = openSqliteFile(file, { readonly: true });
    expect(db.rows('SELECT credits, lapsed FROM ledger')).toEqual([[4, 0]]);
    expect(db.rows('SELECT credits, calls, lapsed FROM ledger_totals')).toEqual([[4, 1, 0]]);
    expect(db.value('SELECT count(*) FROM spend_holds')).toBe(0);
    db.close();
    store.close();
  });
});

describe('the least room, counted per period', () => {
  it("what each period spent and what is held in it: a month's earlier charges and holds are not the day's", () => {
    const file = storeFile();
    const store = ResultStore.open({ path: file });
    // Charged three days ago: the month's, not today's.
    store.settle({ hold: undefined, charge: { at: NOON - 3 * 86_400_000, service: 'svc', op: 'lookup_email', credits: 30, runId: 'r' } });
    store.flush();
    store.close();
    const run = holdsOn(file, 'run', { now: NOON, elapsed: 0 });
    // Month: 48 - 30 = 18 left; day: 20 left. A call of 40 passes both: the month is the nearer edge.
    expect(run.reserve('lookup_email', 40, [month(48), day(20)], NOON)).toMatchObject({ refused: month(48), spent: 30, held: 0 });
    expect(run.reserve('lookup_email', 40, [day(20), month(48)], NOON)).toMatchObject({ refused: month(48) });
  });

  it('a hold made on an earlier day of the month is held in the month only', () => {
    const file = storeFile();
    holdsOn(file, 'other', { now: NOON, elapsed: 0 }).reserve('lookup_email', 30, [], NOON - 3 * 86_400_000);
    const run = holdsOn(file, 'run', { now: NOON, elapsed: 0 });
    expect(run.reserve('lookup_email', 40, [month(48), day(20)], NOON)).toMatchObject({ refused: month(48), spent: 0, held: 30 });
  });
});

describe('a run watched anew', () => {
  it('a renewal seen by a refusal restarts the time it says', () => {
    const file = storeFile();
    const clock = { now: NOON, elapsed: 0 };
    const other = holdsOn(file, 'other', { now: NOON, elapsed: 0 });
    other.reserve('lookup_email', 4, [], NOON);
    const watcher = holdsOn(file, 'watcher', clock);
    expect(watcher.reserve('lookup_email', 20, [day(20)], NOON)).toMatchObject({ lapseInMs: LEASE });
    clock.elapsed = 20_000;
    // The other run renews (a call at a later time of its clock).
    other.reserve('lookup_email', 4, [], NOON + 20_000);
    expect(watcher.reserve('lookup_email', 20, [day(20)], NOON)).toMatchObject({ lapseInMs: LEASE });
  });

  it('a run taken for gone that comes back is given a whole lease again, even with its clock where it stood', () => {
    const file = storeFile();
    const frozen = holdsOn(file, 'frozen', { now: NOON, elapsed: 0 });
    frozen.reserve('lookup_email', 8, [], NOON);
    elsewhere(file, 'frozen');
    const clock = { now: NOON, elapsed: 0 };
    const run = holdsOn(file, 'run', clock);
    run.reserve('lookup_email', 1, [], NOON);
    clock.elapsed = LEASE;
    run.reserve('lookup_email', 1, [], NOON);
    expect(lapsedRows(file)).toEqual([['frozen', 8]]);
    // It wakes, its clock where it stood: the same deadline as before.
    frozen.reserve('lookup_email', 8, [], NOON);
    elsewhere(file, 'frozen');
    clock.elapsed = LEASE + LEASE / 2;
    run.reserve('lookup_email', 1, [], NOON);
    expect(lapsedRows(file)).toEqual([['frozen', 8]]);
  });

  it("the store's holds measure leases by the clock given to them", () => {
    const file = storeFile();
    holdsOn(file, 'stopped', { now: NOON, elapsed: 0 }).reserve('lookup_email', 8, [], NOON);
    elsewhere(file, 'stopped');
    const store = ResultStore.open({ path: file, now: () => NOON });
    const clock = { elapsed: 0 };
    const run = store.spend().holds('run', 'svc', LEASE, () => clock.elapsed);
    run.reserve('lookup_email', 1, [], NOON);
    clock.elapsed = LEASE;
    run.reserve('lookup_email', 1, [], NOON);
    expect(lapsedRows(file)).toEqual([['stopped', 8]]);
    store.close();
  });
});

describe('a ledger whose store cannot be written', () => {
  it('a hold, a fold and a clear fail as the store does: one line naming the file, its cause kept', () => {
    const file = storeFile();
    const db = new DatabaseSync(file);
    const holds = new SpendHolds(db, { owner: 'run', service: 'svc', path: file, leaseMs: LEASE, now: () => NOON });
    const spend = storeSpend(db, file, () => NOON);
    db.close();
    for (const write of [() => holds.reserve('lookup_email', 4, [], NOON), () => spend.fold(), () => spend.clear('svc')]) {
      expect(write).toThrow(StoreFailedError);
      expect(write).toThrow(`The result store at ${file} could not be written`);
    }
  });
});
