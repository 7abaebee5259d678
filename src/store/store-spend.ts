// The ledger in the store's own file (schema v7; docs/cli-contract.md, "Spending over days and
// months"): what every run on the store was charged, and the credits its calls in flight hold
// against the day and month budgets. Two runs at once on one store share both: a call starts only
// when, under the write lock, what the period has spent plus what every run holds in flight plus
// its own worst case stays within each budget (the same rule as the credit reserve's).
//
// A charge is written in the commit that keeps its answer (result-store.ts queues it beside the
// answers), and its hold goes in that same commit: at no moment is a call counted neither as spent
// nor as held. A run killed with -9 loses only its calls in flight; its holds lapse when their
// lease runs out or, on this host, as soon as its process is gone.
import os from 'node:os';
import { dayNumber, DAY_MS, periodAt, type Period, type PeriodLimit } from '../core/budget-periods.js';
import { isAlive } from '../core/processes.js';
import { immediateTransaction, prepareRaw, type Database, type Statement } from './sqlite.js';
import { storeFailure } from './store-failure.js';

/** One charged call, as the ledger keeps it. */
export interface Charge {
  /** When the call was made (epoch ms): its period is that of its hold. */
  at: number;
  service: string;
  op: string;
  credits: number;
  runId: string;
}

/** A call settled: its charge (none for a miss or a failure) and the hold it releases, if any. */
export interface Settle {
  hold: { owner: string; seq: number } | undefined;
  charge: Charge | undefined;
}

/** The budget a call would pass, what its period spent, and what calls in flight hold in it. */
export interface HoldRefusal {
  refused: PeriodLimit;
  period: Period;
  spent: number;
  held: number;
}

export interface SpendHoldsOptions {
  owner: string;
  /** The store's file, named when a hold cannot be written. */
  path: string;
  /** How long a hold lasts unless its run reserves again (longer than any call). */
  leaseMs: number;
  now: () => number;
  /** Whether a process of this host is alive (tests replace it). */
  alive?: (pid: number) => boolean;
}

/** Credits per UTC day (`2026-03-14`) or month (`2026-03`), and the charged calls. */
export interface SpendRow {
  period: string;
  credits: number;
  calls: number;
}

/** Writes settled calls inside the caller's transaction (the store's commit of its answers). */
export class SettleWriter {
  readonly #insert: Statement;
  readonly #release: Statement;

  constructor(db: Database) {
    this.#insert = db.prepare('INSERT INTO ledger (charged_at, service, op, credits, run_id) VALUES (?, ?, ?, ?, ?)');
    this.#release = db.prepare('DELETE FROM spend_holds WHERE owner = ? AND seq = ?');
  }

  write(settles: readonly Settle[]): void {
    for (const { hold, charge } of settles) {
      if (charge && charge.credits > 0) this.#insert.run(charge.at, charge.service, charge.op, charge.credits, charge.runId);
      if (hold) this.#release.run(hold.owner, hold.seq);
    }
  }
}

/** What the ledger says: a period's spend, and the totals `store spend` lists. */
export class LedgerReader {
  readonly #days: Statement;
  readonly #perDay: Statement;
  readonly #held: Statement;

  constructor(db: Database) {
    this.#days = prepareRaw(db, 'SELECT total(credits) FROM ledger_totals WHERE day >= ? AND day < ?');
    this.#held = prepareRaw(db, 'SELECT total(credits) FROM spend_holds WHERE made_at >= ? AND made_at < ?');
    this.#perDay = prepareRaw(db, 'SELECT day, sum(credits), sum(calls) FROM ledger_totals WHERE day >= ? AND day < ? GROUP BY day ORDER BY day');
  }

  /** Credits charged in `period` (committed). */
  spentIn(period: Period): number {
    return (this.#days.get(dayNumber(period.start), dayNumber(period.end)) as unknown as [number])[0];
  }

  /** What `period` has spent (committed), and what calls in flight of every run hold in it. */
  standing(period: Period): { spent: number; held: number } {
    return { spent: this.spentIn(period), held: (this.#held.get(period.start, period.end) as unknown as [number])[0] };
  }

  /** The days with a charge from `from` to `to` (epoch ms, UTC days), oldest first. */
  days(from: number, to: number): SpendRow[] {
    const rows = this.#perDay.all(dayNumber(from), dayNumber(to) + 1) as unknown as Array<[number, number, number]>;
    return rows.map(([day, credits, calls]) => ({ period: new Date(day * DAY_MS).toISOString().slice(0, 10), credits, calls }));
  }

  /** The same summed per UTC month. */
  months(from: number, to: number): SpendRow[] {
    const months = new Map<string, SpendRow>();
    for (const day of this.days(from, to)) {
      const key = day.period.slice(0, 7);
      const row = months.get(key) ?? { period: key, credits: 0, calls: 0 };
      row.credits += day.credits;
      row.calls += day.calls;
      months.set(key, row);
    }
    return [...months.values()];
  }
}

const roomOf = (refusal: HoldRefusal): number => refusal.refused.credits - refusal.spent - refusal.held;

/** One run's holds on the day and month budgets of every run on the store. */
export class SpendHolds {
  readonly #db: Database;
  readonly #options: Required<SpendHoldsOptions>;
  readonly #host = os.hostname();
  readonly #ledger: LedgerReader;
  readonly #insert: Statement;
  readonly #expire: Statement;
  readonly #renew: Statement;
  readonly #holders: Statement;
  readonly #dropOwner: Statement;
  #seq = 0;

  constructor(db: Database, options: SpendHoldsOptions) {
    this.#db = db;
    this.#options = { alive: isAlive, ...options };
    this.#ledger = new LedgerReader(db);
    this.#insert = db.prepare('INSERT INTO spend_holds (owner, seq, pid, host, credits, made_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)');
    this.#expire = db.prepare('DELETE FROM spend_holds WHERE expires_at < ?');
    this.#renew = db.prepare('UPDATE spend_holds SET expires_at = ? WHERE owner = ?');
    this.#holders = prepareRaw(db, 'SELECT DISTINCT owner, pid FROM spend_holds WHERE owner <> ? AND host = ?');
    this.#dropOwner = db.prepare('DELETE FROM spend_holds WHERE owner = ?');
  }

  /**
   * Holds `cost` credits made at `at` against every budget of `limits`, in one write transaction;
   * the hold's number, or the first budget it would pass. A refusal while another run of this
   * host holds credits looks whether that run is still alive first (a killed run's holds go).
   */
  reserve(cost: number, limits: readonly PeriodLimit[], at: number = this.#options.now()): { seq: number } | HoldRefusal {
    try {
      const outcome = this.#tryReserve(cost, limits, at);
      if ('seq' in outcome || outcome.held === 0 || !this.#dropDeadHolders()) return outcome;
      return this.#tryReserve(cost, limits, at);
    } catch (error) {
      // A locked, full or damaged file: the run stops as for any write of the store that fails.
      throw storeFailure(this.#options.path, 'written', error);
    }
  }

  #tryReserve(cost: number, limits: readonly PeriodLimit[], at: number): { seq: number } | HoldRefusal {
    const { owner, leaseMs } = this.#options;
    return immediateTransaction(this.#db, () => {
      this.#expire.run(at);
      let refusal: HoldRefusal | undefined;
      for (const limit of limits) {
        const period = periodAt(limit.per, at);
        const { spent, held } = this.#ledger.standing(period);
        // Of the budgets the call would pass, the one with the least room is named.
        if (spent + held + cost > limit.credits && (!refusal || roomOf(refusal) > limit.credits - spent - held)) refusal = { refused: limit, period, spent, held };
      }
      if (refusal) return refusal;
      // A run that reserves is alive: its other holds are renewed with this one.
      this.#renew.run(at + leaseMs, owner);
      const seq = ++this.#seq;
      this.#insert.run(owner, seq, process.pid, this.#host, cost, at, at + leaseMs);
      return { seq };
    });
  }

  /** Deletes the holds of runs of this host whose process is gone; true when there were any. */
  #dropDeadHolders(): boolean {
    const holders = this.#holders.all(this.#options.owner, this.#host) as unknown as Array<[string, number]>;
    const dead = holders.filter(([, pid]) => !this.#options.alive(pid));
    if (dead.length === 0) return false;
    immediateTransaction(this.#db, () => {
      for (const [owner] of dead) this.#dropOwner.run(owner);
    });
    return true;
  }

  /** The run is over: whatever it still holds goes (its calls were settled or given up). */
  releaseAll(): void {
    this.#dropOwner.run(this.#options.owner);
  }
}
