// The credit reserve guard: never start a billable request that could take the balance below
// the reserve, counting the requests already in flight at their worst-case cost.
// The balance is known exactly only when /account/credits is read; in between we subtract what
// found answers cost. The cost per operation starts at the published figure for a found person
// (docs/api-behaviour-notes.md, "Credits": 4) and is learned from balance drops between readings.
//
// What this run spent is its own charges, not the balance's fall: another client on the account
// (another run, a colleague's tool) makes the balance fall too. It can only make it fall more, so
// the least fall per charge seen is the closest to an operation's real cost (`spent`).
import type { BillableOperation } from '../core/kinds.js';

export type { BillableOperation } from '../core/kinds.js';

export const PUBLISHED_FOUND_COST = 4;
/** What each phone number in a person's answer adds (the service's billing FAQ). */
export const PHONE_COST = 2;

/**
 * What a found answer costs at most, read from its content: a person at the published price plus
 * each phone number it carries (a role-based lead costs less, which the balance then shows);
 * another operation at what the guard counts for it.
 */
export function answerCost(op: BillableOperation, data: unknown, otherwise: number): number {
  if (!PERSON.has(op)) return otherwise;
  const phones = (data as { lead?: { phones?: unknown } } | undefined)?.lead?.phones;
  return PUBLISHED_FOUND_COST + PHONE_COST * (Array.isArray(phones) ? phones.length : 0);
}

/**
 * What a budget holds for a call at least: for a person lookup, the published price with two phone
 * numbers (the sandbox's most). The credit reserve is a floor that a dearer answer may dent by its
 * excess; a budget is a ceiling, so a call holds what its answer may cost, not what most cost:
 * held at 4, the calls in flight when the first answers with phones came passed the budget by up
 * to 4 each. Dearer answers seen in the run raise it (`cost`, the guard's costOf).
 */
export function budgetHold(op: BillableOperation, cost: number): number {
  return PERSON.has(op) ? Math.max(cost, PUBLISHED_FOUND_COST + 2 * PHONE_COST) : cost;
}

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
  /** Costs learned from the balance (the least fall per charge seen). */
  #learned = new Map<BillableOperation, number>();
  /** This run's charged answers, by operation. */
  #charged = new Map<BillableOperation, number>();
  /** What this run's charged person answers cost, read from their content (answerCost). */
  #personCredits = 0;
  /** The most one person lookup has cost in this run (phones make it dearer): what the guard reserves from then on. */
  #most = new Map<BillableOperation, number>();
  #exhausted = false;

  constructor(options: CreditGuardOptions) {
    this.reserve = options.reserve;
    this.startBalance = options.balance;
    this.#balance = options.balance;
    for (const [op, cost] of Object.entries(options.costs ?? {})) this.#costs.set(op as BillableOperation, cost);
  }

  /** What a call is reserved: never less than the known or published price, nor than the most one call has cost in this run. */
  costOf(op: BillableOperation): number {
    return Math.max(this.#learned.get(op) ?? this.#costs.get(op) ?? PUBLISHED_FOUND_COST, this.#most.get(op) ?? 0);
  }

  /**
   * What this run was charged: its charged answers at what each costs. A person lookup at the
   * published figure (what a run learns from the balance while another client spends is
   * inflated by that client's spending); the others at the least fall per charge seen.
   */
  get spent(): number {
    let total = this.#personCredits;
    for (const [op, n] of this.#charged) if (!PERSON.has(op)) total += n * this.costOf(op);
    return total;
  }

  /** A charged answer of this run (counted for `spent`), and what it cost when its content says. */
  recordCharge(op: BillableOperation, cost?: number): void {
    this.#charged.set(op, (this.#charged.get(op) ?? 0) + 1);
    if (!PERSON.has(op)) return;
    this.#personCredits += cost ?? this.#costs.get(op) ?? PUBLISHED_FOUND_COST;
    // Only a person's price is read from the answer; the others' is learned from the balance, where
    // the reservation they were charged at is a guess, not what they cost.
    if (cost !== undefined && cost > (this.#most.get(op) ?? 0)) this.#most.set(op, cost);
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

  /** Settles a request: a found answer is charged (`cost`, default what was reserved), a miss or a failure is not (docs/api-behaviour-notes.md). */
  finish(ticket: CreditTicket, charged: boolean, cost: number = ticket.cost): void {
    this.#inFlight -= ticket.cost;
    if (!charged) return;
    this.#spentSinceReading += cost;
    this.#foundSinceReading.set(ticket.op, (this.#foundSinceReading.get(ticket.op) ?? 0) + 1);
    this.recordCharge(ticket.op, cost);
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
    this.#learn(this.#balance - balance);
    this.#balance = balance;
    this.#spentSinceReading = 0;
    this.#foundSinceReading.clear();
  }

  /**
   * The fall of the balance since the last reading tells the cost of the one operation charged
   * meanwhile whose cost is not known yet (or of the only one charged), once it was charged 3
   * times or more: what the others cost is taken off first.
   */
  #learn(drop: number): void {
    if (drop < 0) return; // credits were added meanwhile
    const ops = [...this.#foundSinceReading.entries()];
    const unknown = ops.length === 1 ? ops : ops.filter(([op]) => !this.#learned.has(op) && !this.#costs.has(op) && !PERSON.has(op));
    if (unknown.length !== 1) return;
    const [op, count] = unknown[0]!;
    if (count < 3) return;
    let rest = drop;
    for (const [other, n] of ops) if (other !== op) rest -= n * this.costOf(other);
    if (rest < 0) return;
    const cost = Math.round(rest / count);
    this.#learned.set(op, Math.min(this.#learned.get(op) ?? cost, cost));
  }
}

/** The operations whose cost is published (docs/api-behaviour-notes.md, "Credits"). */
const PERSON: ReadonlySet<BillableOperation> = new Set(['lookup_email', 'lookup_url']);

/** The reserve guard as the pipeline uses it: one process alone, or several sharing Redis. */
export interface CreditAccount {
  readonly reserve: number;
  readonly startBalance: number;
  readonly estimatedBalance: number;
  readonly exhausted: boolean;
  readonly atReserve: boolean;
  /** What this run was charged (its own charges, whatever else the account spent meanwhile). */
  readonly spent: number;
  costOf(op: BillableOperation): number;
  tryBegin(op: BillableOperation): CreditTicket | undefined | Promise<CreditTicket | undefined>;
  finish(ticket: CreditTicket, charged: boolean, cost?: number): void | Promise<void>;
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
  get spent(): number {
    return this.#local.spent;
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

  async finish(ticket: CreditTicket, charged: boolean, cost: number = ticket.cost): Promise<void> {
    // This worker's own view, for its summary; the shared estimate is what guards the reserve.
    if (charged) {
      this.#local.recordCharge(ticket.op, cost);
      this.#local.reading(this.#local.estimatedBalance - cost);
    }
    // If Redis is gone the coordinator has already told the run; the answer itself must not be lost.
    // The shared estimate settles what was reserved: a dearer answer is caught by the next reading.
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
