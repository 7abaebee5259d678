// The ledger in the store's own file (schema v7, v9; docs/cli-contract.md, "Spending over days and
// months"): what every run on the store was charged, per service, and the credits its calls in
// flight hold against the day and month budgets. Two runs at once on one store share both: a call
// starts only when, under the write lock, what the period has spent for the run's service plus
// what every run holds in flight for it plus its own worst case stays within each budget (the same
// rule as the credit reserve's).
//
// Every call holds before it is sent, budgets or not, and its charge is written in the commit that
// keeps its answer (result-store.ts queues it beside the answers), its hold released in that same
// commit: at no moment is a call counted neither as spent nor as held. A run killed with -9 leaves
// the holds of its calls in flight, which the service may have charged (their answers were lost):
// the next run that finds their run gone (lease-watch.ts: its process is gone on this host, or it
// stopped renewing them for a lease as that run's own clock measures it, never by comparing clocks)
// turns them, in one transaction, into ledger rows marked `lapsed`, at the credits they held, dated
// when they were made. So no budget is passed because a run died; what `store spend` shows as lapsed
// is an estimate from above. A run judged gone that was only frozen settles its call later: its
// real charge then takes the lapsed row's place.
//
// Why not reconcile a lapsed hold against the balance: the balance is the account's, and other
// clients on the account (another machine's runs, a colleague's tool, the service's other products)
// make it fall too, by amounts nothing here can tell apart; the service publishes no log of charges
// per call. A fall of the balance is no witness of what one dead run was charged.
import os from 'node:os';
import { dayNumber, periodAt, type Period, type PeriodLimit } from '../core/budget-periods.js';
import { holderAlive } from '../core/processes.js';
import { LeaseWatch, monotonicMs } from './lease-watch.js';
import { LedgerReader } from './ledger-reader.js';
import { clearLedger, foldBefore, foldLedger, ledgerSize, type LedgerSize } from './ledger-upkeep.js';
import { immediateTransaction, prepareRaw, type Database, type Statement } from './sqlite.js';
import { storeFailure } from './store-failure.js';

export type { SpendRow } from './ledger-reader.js';
export type { LedgerSize } from './ledger-upkeep.js';
export { LedgerReader } from './ledger-reader.js';

/** One charged call, as the ledger keeps it. */
export interface Charge {
  /** When the call was made (epoch ms): its period is that of its hold. */
  at: number;
  service: string;
  op: string;
  credits: number;
  runId: string;
}

/** A hold as its call settles it: whose, which, and what it was made for (found again if another run lapsed it). */
export interface HoldId {
  owner: string;
  seq: number;
  at: number;
  service: string;
  op: string;
}

/** A call settled: its charge (none for a miss or a failure) and the hold it releases, if any. */
export interface Settle {
  hold: HoldId | undefined;
  charge: Charge | undefined;
}

/** The budget a call would pass, what its period spent, and what calls in flight hold in it. */
export interface HoldRefusal {
  refused: PeriodLimit;
  period: Period;
  spent: number;
  held: number;
  /** When held credits of another run count as spent if that run has stopped (ms from the refusal); only when another run holds some. */
  lapseInMs?: number | undefined;
}

export interface SpendHoldsOptions {
  owner: string;
  /** The service this run's calls are charged by: the budgets count its spend only. */
  service: string;
  /** The store's file, named when a hold cannot be written. */
  path: string;
  /** How long a run's holds last without its renewing them (longer than any call), as another run measures it. */
  leaseMs: number;
  now: () => number;
  /** Whether the run `owner`, of process `pid` of this host, is alive (tests replace it). */
  alive?: (pid: number, owner: string) => boolean;
  /** This run's monotonic time (ms), by which the others' leases are measured (tests replace it). */
  elapsed?: () => number;
}

/** Writes settled calls inside the caller's transaction (the store's commit of its answers). */
export class SettleWriter {
  readonly #insert: Statement;
  readonly #release: Statement;
  readonly #findLapsed: Statement;
  readonly #dropRow: Statement;
  readonly #untotal: Statement;

  constructor(db: Database) {
    this.#insert = db.prepare('INSERT INTO ledger (charged_at, service, op, credits, run_id) VALUES (?, ?, ?, ?, ?)');
    this.#release = db.prepare('DELETE FROM spend_holds WHERE owner = ? AND seq = ?');
    this.#findLapsed = prepareRaw(
      db,
      'SELECT rowid, credits FROM ledger WHERE run_id = ? AND charged_at = ? AND service = ? AND op = ? AND lapsed = 1 LIMIT 1',
    );
    this.#dropRow = db.prepare('DELETE FROM ledger WHERE rowid = ?');
    this.#untotal = db.prepare('UPDATE ledger_totals SET credits = credits - ?, calls = calls - 1, lapsed = lapsed - ? WHERE service = ? AND day = ?');
  }

  write(settles: readonly Settle[]): void {
    for (const { hold, charge } of settles) {
      if (hold && Number(this.#release.run(hold.owner, hold.seq).changes) === 0) this.#unlapse(hold);
      if (charge && charge.credits > 0) this.#insert.run(charge.at, charge.service, charge.op, charge.credits, charge.runId);
    }
  }

  /** Another run took this one for gone and counted the hold at its worst case: the call's own charge (written next) takes its place. */
  #unlapse(hold: HoldId): void {
    const row = this.#findLapsed.get(hold.owner, hold.at, hold.service, hold.op) as unknown as [number, number] | undefined;
    if (!row) return;
    this.#dropRow.run(row[0]);
    this.#untotal.run(row[1], row[1], hold.service, dayNumber(hold.at));
  }
}

const roomOf = (refusal: HoldRefusal): number => refusal.refused.credits - refusal.spent - refusal.held;

/** One run's holds on the day and month budgets of every run on the store. */
export class SpendHolds {
  readonly #db: Database;
  readonly #options: Required<SpendHoldsOptions>;
  readonly #host = os.hostname();
  readonly #ledger: LedgerReader;
  readonly #watch: LeaseWatch;
  readonly #insert: Statement;
  readonly #renew: Statement;
  readonly #holders: Statement;
  readonly #lapse: Statement;
  readonly #dropOwner: Statement;
  #seq = 0;
  /** When this run last looked for runs that are gone (its elapsed time). */
  #lookedAt = -Infinity;

  constructor(db: Database, options: SpendHoldsOptions) {
    this.#db = db;
    this.#options = { alive: holderAlive, elapsed: monotonicMs, ...options };
    this.#ledger = new LedgerReader(db);
    this.#watch = new LeaseWatch({ host: this.#host, leaseMs: options.leaseMs, elapsed: this.#options.elapsed, alive: this.#options.alive });
    this.#insert = db.prepare('INSERT INTO spend_holds (owner, seq, pid, host, credits, made_at, expires_at, service, op) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)');
    this.#renew = db.prepare('UPDATE spend_holds SET expires_at = ? WHERE owner = ?');
    this.#holders = prepareRaw(db, 'SELECT owner, pid, host, max(expires_at) FROM spend_holds WHERE owner <> ? GROUP BY owner, pid, host');
    this.#lapse = db.prepare(
      'INSERT INTO ledger (charged_at, service, op, credits, run_id, lapsed) SELECT made_at, service, op, credits, owner, 1 FROM spend_holds WHERE owner = ?',
    );
    this.#dropOwner = db.prepare('DELETE FROM spend_holds WHERE owner = ?');
  }

  /**
   * Holds `cost` credits for a call of `op` made at `at` against every budget of `limits` (none:
   * the hold only records the call in flight), in one write transaction; the hold's number, or the
   * first budget it would pass. Runs that are gone are looked for at the first call, every half
   * lease after, and when a refusal met credits other runs hold.
   */
  reserve(op: string, cost: number, limits: readonly PeriodLimit[], at: number = this.#options.now()): { seq: number } | HoldRefusal {
    try {
      if (this.#options.elapsed() - this.#lookedAt >= this.#options.leaseMs / 2) this.#lapseGone();
      const outcome = this.#tryReserve(op, cost, limits, at);
      if ('seq' in outcome || outcome.held === 0 || this.#lapseGone() === 0) return outcome;
      return this.#tryReserve(op, cost, limits, at);
    } catch (error) {
      // A locked, full or damaged file: the run stops as for any write of the store that fails.
      throw storeFailure(this.#options.path, 'written', error);
    }
  }

  #tryReserve(op: string, cost: number, limits: readonly PeriodLimit[], at: number): { seq: number } | HoldRefusal {
    const { owner, service, leaseMs } = this.#options;
    return immediateTransaction(this.#db, () => {
      let refusal: HoldRefusal | undefined;
      let room = Infinity;
      for (const limit of limits) {
        const period = periodAt(limit.per, at);
        const { spent, held } = this.#ledger.standing(period, service);
        const left = limit.credits - spent - held;
        // Of the budgets the call would pass, the one with the least room is named.
        if (cost > left && (!refusal || roomOf(refusal) > left)) refusal = { refused: limit, period, spent, held };
        room = Math.min(room, left);
      }
      if (refusal) return this.#withLapse(refusal);
      // The last call that fits before a budget's edge holds all that is left: no other call could
      // use it, and an answer dearer than the worst case known is then covered up to the edge.
      const credits = room - cost < cost ? room : cost;
      // A run that reserves is alive: its other holds are renewed with this one.
      this.#renew.run(at + leaseMs, owner);
      const seq = ++this.#seq;
      this.#insert.run(owner, seq, process.pid, this.#host, credits, at, at + leaseMs, service, op);
      return { seq };
    });
  }

  /** The refusal, with when the holds of other runs lapse if those runs stopped (the soonest). */
  #withLapse(refusal: HoldRefusal): HoldRefusal {
    if (refusal.held === 0) return refusal;
    const holders = this.#holders.all(this.#options.owner) as unknown as Array<[string, number, string, number]>;
    if (holders.length === 0) return refusal;
    return { ...refusal, lapseInMs: Math.min(...holders.map(([id, pid, host, mark]) => this.#watch.leftOf({ id, owner: id, pid, host, mark }))) };
  }

  /** Counts as spent, at the credits they hold, the holds of every run that is gone; returns how many runs'. */
  #lapseGone(): number {
    this.#lookedAt = this.#options.elapsed();
    return immediateTransaction(this.#db, () => {
      let lapsed = 0;
      for (const [id, pid, host, mark] of this.#holders.all(this.#options.owner) as unknown as Array<[string, number, string, number]>) {
        if (!this.#watch.gone({ id, owner: id, pid, host, mark })) continue;
        this.#lapse.run(id);
        this.#dropOwner.run(id);
        this.#watch.forget(id);
        lapsed++;
      }
      return lapsed;
    });
  }

  /**
   * The run is over, its settled calls committed (the caller flushes first): a hold still here is
   * a call that was not settled (given up in flight, or its settle could not be written). The
   * service may have charged it: it counts at its worst case, as a dead run's does.
   */
  close(): void {
    immediateTransaction(this.#db, () => {
      this.#lapse.run(this.#options.owner);
      this.#dropOwner.run(this.#options.owner);
    });
  }
}

/** The store's ledger as its owner reaches it: reads, a run's holds, and its upkeep. */
export interface StoreSpend {
  ledger: LedgerReader;
  holds(owner: string, service: string, leaseMs: number, elapsed?: () => number): SpendHolds;
  /** Folds the per-call rows no budget reads any more (ledger-upkeep.ts); how many went. */
  fold(): number;
  /** Deletes the ledger of `service` (of all, when undefined); how many calls it counted. */
  clear(service: string | undefined): number;
  size(): LedgerSize;
}

export function storeSpend(db: Database, path: string, now: () => number): StoreSpend {
  const writing = <T>(work: () => T): T => {
    try {
      return immediateTransaction(db, work);
    } catch (error) {
      throw storeFailure(path, 'written', error);
    }
  };
  return {
    ledger: new LedgerReader(db),
    holds: (owner, service, leaseMs, elapsed) => new SpendHolds(db, { owner, service, path, leaseMs, now, ...(elapsed ? { elapsed } : {}) }),
    fold: () => writing(() => foldLedger(db, foldBefore(now()))),
    clear: (service) => writing(() => clearLedger(db, service)),
    size: () => ledgerSize(db),
  };
}
