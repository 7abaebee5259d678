// --budget, and the ledger (docs/cli-contract.md, "Spending over days and months"). A run may be
// given budgets for itself (`N`) and for UTC days and months (`N/day`, `N/month`), where the credit
// reserve is a floor under the balance. A call starts only when, for every budget, what was spent
// plus the worst case of the calls in flight plus its own worst case stays within it; the costs
// counted are the credit guard's upper bounds, so the server never charges past a budget. The
// run's own budget is kept here; the day and month budgets where the ledger is (the store's file,
// or Redis with --redis), so that every run sharing it counts, its calls in flight too. Every
// charged call is recorded there, budgets or not: what `store spend` lists.
import { budgetText, isPeriodLimit, periodAt, periodWords, resetText, type BudgetLimit, type Period, type PeriodLimit } from '../core/budget-periods.js';
import type { BillableOperation } from '../core/kinds.js';
import { optionWord } from '../options/option-table.js';
import type { Charge, HoldRefusal } from '../store/store-spend.js';

/** Where the day and month budgets are held and the charges recorded: the store's file, or Redis. */
export interface SpendLedger {
  /** Holds `cost` against every budget of `limits` for a call made at `at`; or the budget it would pass. */
  reserve(cost: number, limits: readonly PeriodLimit[], at: number): { seq: number } | HoldRefusal | Promise<{ seq: number } | HoldRefusal>;
  /** A call settled: its charge recorded (none for a miss or a failure), its hold (if any) released. */
  settle(seq: number | undefined, charge: Charge | undefined): void | Promise<void>;
  /** What `period` has spent, and what calls in flight hold in it. */
  standing(period: Period): { spent: number; held: number } | Promise<{ spent: number; held: number }>;
}

/** A call's reservation against the budgets. */
export interface BudgetTicket {
  op: BillableOperation;
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

  /** Reserves `cost` for a call against every budget, or says no (and which budget) when it could pass one. */
  async tryBegin(op: BillableOperation, cost: number): Promise<BudgetTicket | undefined> {
    const at = this.#options.now();
    if (this.#run && this.#spent + this.#inFlight + cost > this.#run.credits) return this.#refuse({ limit: this.#run, spent: this.#spent, held: this.#inFlight, period: undefined, at });
    let seq: number | undefined;
    if (this.#periods.length > 0) {
      const held = await this.#options.ledger.reserve(cost, this.#periods, at);
      if ('refused' in held) return this.#refuse({ limit: held.refused, spent: held.spent, held: held.held, period: held.period, at });
      seq = held.seq;
    }
    this.#inFlight += cost;
    return { op, cost, at, seq };
  }

  #refuse(stop: BudgetStop): undefined {
    this.#stop ??= stop;
    return undefined;
  }

  /** Settles a call: `charged` is what its answer cost (0 for a miss or a failure), recorded in the ledger. */
  finish(ticket: BudgetTicket, charged: number): void | Promise<void> {
    this.#inFlight -= ticket.cost;
    this.#spent += charged;
    const { service, runId } = this.#options;
    const charge = charged > 0 ? { at: ticket.at, service, op: ticket.op, credits: charged, runId } : undefined;
    if (charge || ticket.seq !== undefined) return this.#options.ledger.settle(ticket.seq, charge);
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
  const named = `${optionWord('budget')} ${budgetText(stop.limit)}`;
  const rows = 'the rows not looked up are written as skipped (budget)';
  const held = stop.held > 0 ? `, ${stop.held} more held by lookups in flight` : '';
  if (!stop.period) return `No more lookups: the next one could have spent more than ${named} (${stop.spent} credits spent by this run${held}); ${rows}. Run the same command again (with a larger ${optionWord('budget')}) to finish`;
  return `No more lookups: the next one could have spent more than ${named} (${stop.spent} of ${stop.limit.credits} credits spent ${periodWords(stop.period)}${held}); ${rows}; ${resetText(stop.period, stop.at)}: run the same command again then to finish`;
}
