// The credit reserve guard: never start a billable request that could take the balance below
// the reserve, counting the requests already in flight at their worst-case cost.
// The balance is known exactly only when /account/credits is read; in between we subtract what
// found answers cost. The cost per operation starts at the published figure for a found person
// (behaviour notes, "Credits": 4) and is learned from balance drops between readings.
import type { BillableOperation } from '../core/kinds.js';

export type { BillableOperation } from '../core/kinds.js';

export const PUBLISHED_FOUND_COST = 4;

export interface CreditGuardOptions {
  balance: number;
  reserve: number;
  /** Known costs; anything missing starts at PUBLISHED_FOUND_COST as an upper bound. */
  costs?: Partial<Record<BillableOperation, number>>;
}

export interface CreditTicket {
  op: BillableOperation;
  cost: number;
}

export class CreditGuard {
  readonly reserve: number;
  readonly startBalance: number;
  #balance: number;
  /** Estimated spending since the last reading. */
  #spentSinceReading = 0;
  #inFlight = 0;
  #foundSinceReading = new Map<BillableOperation, number>();
  #costs = new Map<BillableOperation, number>();
  #exhausted = false;

  constructor(options: CreditGuardOptions) {
    this.reserve = options.reserve;
    this.startBalance = options.balance;
    this.#balance = options.balance;
    for (const [op, cost] of Object.entries(options.costs ?? {})) this.#costs.set(op as BillableOperation, cost);
  }

  costOf(op: BillableOperation): number {
    return this.#costs.get(op) ?? PUBLISHED_FOUND_COST;
  }

  /** The balance we believe the account has now (before in-flight requests settle). */
  get estimatedBalance(): number {
    return this.#balance - this.#spentSinceReading;
  }

  /** True once the reserve is reached or the server answered 402: no more billable requests. */
  get exhausted(): boolean {
    return this.#exhausted;
  }

  /** Whether the reserve already forbids any lookup, before the run starts. */
  get atReserve(): boolean {
    return this.#balance <= this.reserve;
  }

  /** Reserves the worst-case cost of one request, or returns undefined when it could breach the reserve. */
  tryBegin(op: BillableOperation): CreditTicket | undefined {
    if (this.#exhausted) return undefined;
    const cost = this.costOf(op);
    if (this.estimatedBalance - this.#inFlight - cost < this.reserve) return undefined;
    this.#inFlight += cost;
    return { op, cost };
  }

  /** Settles a request: a found answer is charged, a miss or a failure is not (behaviour notes). */
  finish(ticket: CreditTicket, charged: boolean): void {
    this.#inFlight -= ticket.cost;
    if (!charged) return;
    this.#spentSinceReading += ticket.cost;
    this.#foundSinceReading.set(ticket.op, (this.#foundSinceReading.get(ticket.op) ?? 0) + 1);
  }

  /** The server answered 402: stop all billable requests for the rest of the run. */
  markExhausted(): void {
    this.#exhausted = true;
  }

  /** Stops new requests because the reserve was reached (confirmed by a fresh reading). */
  stop(): void {
    this.#exhausted = true;
  }

  /**
   * A fresh balance from /account/credits. When only one operation was charged since the last
   * reading, the drop tells its real cost. Requests in flight during the reading may or may not
   * be in it; their worst case stays counted in #inFlight, so the guard errs on the safe side.
   */
  reading(balance: number): void {
    const drop = this.#balance - balance;
    const ops = [...this.#foundSinceReading.entries()];
    if (ops.length === 1 && drop >= 0) {
      const [op, count] = ops[0]!;
      if (count >= 3) this.#costs.set(op, Math.max(0, Math.round(drop / count)));
    }
    this.#balance = balance;
    this.#spentSinceReading = 0;
    this.#foundSinceReading.clear();
  }

}

/** The reserve guard as the pipeline uses it: one process alone, or several sharing Redis. */
export interface CreditAccount {
  readonly reserve: number;
  readonly startBalance: number;
  readonly estimatedBalance: number;
  readonly exhausted: boolean;
  readonly atReserve: boolean;
  costOf(op: BillableOperation): number;
  tryBegin(op: BillableOperation): CreditTicket | undefined | Promise<CreditTicket | undefined>;
  finish(ticket: CreditTicket, charged: boolean): void | Promise<void>;
  markExhausted(): void;
  stop(): void;
  reading(balance: number): void | Promise<void>;
}

/** What SharedCreditGuard needs from Redis (src/cluster/coordinator.ts). */
export interface SharedCreditStore {
  creditReading(balance: number, reserve: number, atStart?: boolean): Promise<void>;
  tryReserve(cost: number, reserve: number): Promise<boolean>;
  settle(cost: number, charged: boolean): Promise<void>;
  markExhausted(): Promise<void>;
}

/**
 * The reserve shared by every worker of an account: all spending counts against one estimate
 * kept in Redis, checked and reserved atomically, so the reserve holds whatever the number of
 * workers. The local guard still learns costs and mirrors this worker's view for the summary.
 */
export class SharedCreditGuard implements CreditAccount {
  readonly #local: CreditGuard;
  readonly #shared: SharedCreditStore;

  private constructor(local: CreditGuard, shared: SharedCreditStore) {
    this.#local = local;
    this.#shared = shared;
  }

  static async create(options: CreditGuardOptions, shared: SharedCreditStore): Promise<SharedCreditGuard> {
    await shared.creditReading(options.balance, options.reserve, true);
    return new SharedCreditGuard(new CreditGuard(options), shared);
  }

  get reserve(): number {
    return this.#local.reserve;
  }
  get startBalance(): number {
    return this.#local.startBalance;
  }
  get estimatedBalance(): number {
    return this.#local.estimatedBalance;
  }
  get exhausted(): boolean {
    return this.#local.exhausted;
  }
  get atReserve(): boolean {
    return this.#local.atReserve;
  }
  costOf(op: BillableOperation): number {
    return this.#local.costOf(op);
  }

  async tryBegin(op: BillableOperation): Promise<CreditTicket | undefined> {
    if (this.#local.exhausted) return undefined;
    const cost = this.#local.costOf(op);
    // The shared estimate decides: other workers' spending and requests in flight count too.
    if (!(await this.#shared.tryReserve(cost, this.#local.reserve))) return undefined;
    return { op, cost };
  }

  async finish(ticket: CreditTicket, charged: boolean): Promise<void> {
    // This worker's own view, for its summary; the shared estimate is what guards the reserve.
    if (charged) this.#local.reading(this.#local.estimatedBalance - ticket.cost);
    // If Redis is gone the coordinator has already told the run; the answer itself must not be lost.
    await this.#shared.settle(ticket.cost, charged).catch(() => {});
  }

  markExhausted(): void {
    this.#local.markExhausted();
    this.#shared.markExhausted().catch(() => {});
  }

  stop(): void {
    this.#local.stop();
  }

  async reading(balance: number): Promise<void> {
    this.#local.reading(balance);
    await this.#shared.creditReading(balance, this.#local.reserve);
  }
}
