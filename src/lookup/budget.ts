// --budget, and the ledger (docs/cli-contract.md, "Spending over days and months"). A run may be
// given budgets for itself (`N`) and for UTC days and months (`N/day`, `N/month`), where the credit
// reserve is a floor under the balance. A call starts only when, for every budget, what was spent
// plus the worst case of the calls in flight plus its own worst case stays within it. The run's own
// budget is kept here; the day and month budgets where the ledger is (the store's file, or Redis
// with --redis), so that every run sharing it counts, its calls in flight too, and each counts
// the spend of the run's service only (rehearsals against the sandbox never spend the real
// service's budget). Every call holds its worst case in the ledger before it is sent, budgets or
// not, and every charge is recorded there: what `store spend` lists, and what a killed run's calls
// in flight are counted at.
//
// A call's worst case: the service publishes no most phone numbers per person, so no bound is
// known in advance. A call holds the most of: what the credit guard reserves (the published price
// with two phones for a person, 8; more once a dearer answer came in this run), and the most one
// call of that operation was ever charged by this service as the ledger keeps it (across runs; the
// fold keeps it: store/ledger-upkeep.ts). And the last call that fits before a budget's edge holds
// all the budget has left. So a budget is passed only by an answer dearer than any its service
// charged before through this ledger, and then only by what that answer costs beyond the room the
// budget had left when it was sent; from its settlement on, that price is every hold's floor.
import { budgetText, isPeriodLimit, periodAt, periodWords, resetText, type BudgetLimit, type Period, type PeriodLimit } from '../core/budget-periods.js';
import { formatDuration } from '../core/duration.js';
import type { BillableOperation } from '../core/kinds.js';
import { optionWord } from '../options/option-table.js';
import type { Charge, HoldRefusal } from '../store/store-spend.js';

/** A call's hold, as its settlement names it. */
export interface HeldCall {
  seq: number;
  /** When the call was made: the period of its hold and of its charge. */
  at: number;
  op: string;
}

/** Where the day and month budgets are held and the charges recorded: the store's file, or Redis; of one service. */
export interface SpendLedger {
  /** Holds `cost` for a call of `op` made at `at` against every budget of `limits` (none: it only records the call in flight); or the budget it would pass. */
  reserve(op: string, cost: number, limits: readonly PeriodLimit[], at: number): { seq: number } | HoldRefusal | Promise<{ seq: number } | HoldRefusal>;
  /** A call settled: its charge recorded (none for a miss or a failure), its hold (if any) released. */
  settle(hold: HeldCall | undefined, charge: Charge | undefined): void | Promise<void>;
  /** What `period` has spent, and what calls in flight hold in it. */
  standing(period: Period): { spent: number; held: number } | Promise<{ spent: number; held: number }>;
  /** The most one call of each operation was charged, as the ledger remembers it. */
  mostCharged(): Map<string, number> | Promise<Map<string, number>>;
}

/** A call's reservation against the budgets. */
export interface BudgetTicket {
  op: BillableOperation;
  /** What it holds of the run's own budget. */
  cost: number;
  /** When the call was made: the period its charge belongs to. */
  at: number;
  seq: number | undefined;
}

/** The budget that stopped the run: the tightest that refused, what its period (or the run) had spent, and its period. */
export interface BudgetStop {
  limit: BudgetLimit;
  spent: number;
  /** Held then by calls in flight (of every run sharing the ledger), not yet settled. */
  held: number;
  period: Period | undefined;
  at: number;
  /** When the credits other runs hold count as spent if those runs stopped (ms after `at`). */
  lapseInMs?: number | undefined;
}

/** Where a budget stands: spent in its period (this run, for `N`), left, as a report shows it. */
export interface BudgetStanding {
  budget: string;
  credits: number;
  per: BudgetLimit['per'];
  spent: number;
  left: number;
  /** The period's name (`2026-03-14`, `2026-03`); none for the run's own. */
  period?: string | undefined;
}

export interface BudgetsOptions {
  limits: readonly BudgetLimit[];
  ledger: SpendLedger;
  now: () => number;
  service: string;
  runId: string;
}

export class Budgets {
  readonly limits: readonly BudgetLimit[];
  readonly #options: BudgetsOptions;
  /** The tightest of the run's own budgets. */
  readonly #run: BudgetLimit | undefined;
  readonly #periods: PeriodLimit[];
  #spent = 0;
  #inFlight = 0;
  #stop: BudgetStop | undefined;
  /** The most one call of each operation was charged: the ledger's, then this run's dearer ones. */
  #most: Map<string, number> | Promise<Map<string, number>> | undefined;

  constructor(options: BudgetsOptions) {
    this.#options = options;
    this.limits = options.limits;
    this.#run = options.limits.filter((limit) => limit.per === 'run').sort((a, b) => a.credits - b.credits)[0];
    this.#periods = options.limits.filter(isPeriodLimit);
  }

  /** What this run has been charged, as counted against its budgets. */
  get spent(): number {
    return this.#spent;
  }

  /** The budget that refused a call, once one has. */
  get stopped(): BudgetStop | undefined {
    return this.#stop;
  }

  /**
   * Holds a call's worst case (`cost`, raised to the most a call of `op` was ever charged) against
   * every budget, or says no (and which budget) when it could pass one.
   */
  async tryBegin(op: BillableOperation, cost: number): Promise<BudgetTicket | undefined> {
    const worst = Math.max(cost, (await (this.#most ??= this.#options.ledger.mostCharged())).get(op) ?? 0);
    const at = this.#options.now();
    let hold = worst;
    if (this.#run) {
      const left = this.#run.credits - this.#spent - this.#inFlight;
      if (worst > left) return this.#refuse({ limit: this.#run, spent: this.#spent, held: this.#inFlight, period: undefined, at });
      // The last call that fits holds what is left of the run's budget (as the ledger does at a period's edge).
      if (left - worst < worst) hold = left;
    }
    // Counted before the ledger is asked: calls that start meanwhile see this one in flight.
    this.#inFlight += hold;
    let held: Awaited<ReturnType<SpendLedger['reserve']>>;
    try {
      held = await this.#options.ledger.reserve(op, worst, this.#periods, at);
    } catch (error) {
      this.#inFlight -= hold;
      throw error;
    }
    if (!('refused' in held)) return { op, cost: hold, at, seq: held.seq };
    this.#inFlight -= hold;
    return this.#refuse({ limit: held.refused, spent: held.spent, held: held.held, period: held.period, at, lapseInMs: held.lapseInMs });
  }

  #refuse(stop: BudgetStop): undefined {
    this.#stop ??= stop;
    return undefined;
  }

  /** Settles a call: `charged` is what its answer cost (0 for a miss or a failure), recorded in the ledger. */
  async finish(ticket: BudgetTicket, charged: number): Promise<void> {
    this.#inFlight -= ticket.cost;
    this.#spent += charged;
    const most = await this.#most;
    if (most && charged > (most.get(ticket.op) ?? 0)) most.set(ticket.op, charged);
    const { service, runId } = this.#options;
    const charge = charged > 0 ? { at: ticket.at, service, op: ticket.op, credits: charged, runId } : undefined;
    const hold = ticket.seq === undefined ? undefined : { seq: ticket.seq, at: ticket.at, op: ticket.op };
    if (charge || hold) await this.#options.ledger.settle(hold, charge);
  }

  /** Every budget as it stands now: the run's against this run's charges, the others against their period's. */
  async standings(): Promise<BudgetStanding[]> {
    const at = this.#options.now();
    return Promise.all(this.limits.map((limit) => standingOf(limit, this.#options.ledger, at, this.#spent)));
  }
}

/** Where `limit` stands at `at`: a period's committed spend, or the run's own (`runSpent`). */
export async function standingOf(limit: BudgetLimit, ledger: Pick<SpendLedger, 'standing'>, at: number, runSpent = 0): Promise<BudgetStanding> {
  const budget = budgetText(limit);
  if (!isPeriodLimit(limit)) return { budget, credits: limit.credits, per: limit.per, spent: runSpent, left: Math.max(0, limit.credits - runSpent) };
  const period = periodAt(limit.per, at);
  const { spent } = await ledger.standing(period);
  return { budget, credits: limit.credits, per: limit.per, spent, left: Math.max(0, limit.credits - spent), period: period.key };
}

/** The line said when a budget stops the run: which budget, what its period spent, when it starts again. */
export function budgetStopLine(stop: BudgetStop): string {
  const rows = 'the rows not looked up are written as skipped (budget)';
  const [named, standing] = stopWords(stop);
  if (!stop.period)
    return `No more lookups: the next one could have spent more than ${named} (${standing}); ${rows}. Run the same command again (with a larger ${optionWord('budget')}) to finish`;
  return `No more lookups: the next one could have spent more than ${named} (${standing}); ${rows}; ${resetText(stop.period, stop.at)}: run the same command again then to finish`;
}

/** The line of a single call (`lookup`, `mx`, `whois`) a budget refused: nothing was sent. */
export function budgetCallLine(stop: BudgetStop): string {
  const [named, standing] = stopWords(stop);
  const again = stop.period ? `; ${resetText(stop.period, stop.at)}: run it again then` : '';
  return `Not sent: the call could have spent more than ${named} (${standing})${again}`;
}

/** The budget named as the reader gives it (`--budget 200/day`), and what its period (or the run) spent and holds. */
function stopWords(stop: BudgetStop): [string, string] {
  const named = `${optionWord('budget')} ${budgetText(stop.limit)}`;
  const held = stop.held > 0 ? `, ${stop.held} more held by lookups in flight${heldWords(stop)}` : '';
  return [
    named,
    stop.period ? `${stop.spent} of ${stop.limit.credits} credits spent ${periodWords(stop.period)}${held}` : `${stop.spent} credits spent by this run${held}`,
  ];
}

/** When the credits another run holds are settled at the latest: counted as spent at their worst case once that run is taken for stopped. */
function heldWords(stop: BudgetStop): string {
  if (stop.lapseInMs === undefined) return '';
  const when = new Date(stop.at + stop.lapseInMs).toISOString().slice(11, 19);
  return ` (answered soon, or, if their run has stopped, counted as spent at ${when} UTC, in ${formatDuration(Math.max(1000, stop.lapseInMs))})`;
}
