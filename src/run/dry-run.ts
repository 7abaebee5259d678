// `enrich --dry-run`: reads and plans every row and checks the store, then says what a real run
// would cost and how long it would take, against the balance and the reserve. It makes no lookup:
// only the two account calls.
import { PUBLISHED_FOUND_COST } from '../lookup/credits.js';
import type { EnrichOptions, Extra } from './enrich-options.js';
import { rateFor } from '../lookup/rate/rate-plan.js';
import { resolveOptions } from './settings.js';
import type { LookupKind } from '../plan/plan.js';
import { countRows } from './count-rows.js';
import { openRun, spendStanding } from './open-run.js';
import { standingOf, type BudgetStanding } from '../lookup/budget.js';
import { Resources } from './resources.js';

/** The options of a run: the dry run plans what `enrich()` with the same options would do. */
export type DryRunOptions = EnrichOptions;

export interface DryRunPlan {
  rows: number;
  invalidRows: number;
  /** Rows whose key cell is empty: skipped with no_key, no request. */
  noKeyRows: number;
  /** --fill / --only-missing: rows whose cells hold values already: skipped with complete, no request. */
  completeRows: number;
  /** Lookups those rows would have needed, at most (keys no other row needs and the store does not know), and their credits at most. */
  lookupsSaved: number;
  creditsSaved: number;
  /** The first (or only) kind and its column; `order` lists every kind of a waterfall in turn. */
  lookup: { kind: LookupKind; column: string; with: Extra[]; order: Array<{ kind: LookupKind; column: string }> };
  /** Distinct normalized keys, per operation. */
  distinctKeys: Record<string, number>;
  /** Of those, already answered in the store (free). */
  alreadyKnown: Record<string, number>;
  /** With a waterfall, the lookups expected: an unknown key ends its row (as if found). Without one, lookupsToMake. */
  lookupsExpected: number;
  /** Set when most rows have no usable key: the key column or the delimiter looks wrong. */
  warning?: string | undefined;
  /**
   * Requests a real run would make (distinct keys not known), at most: with a waterfall, every key
   * of a row not found in turn; with --with and profile URLs
   * but no domain column, each URL key counts one MX/Whois call per extra (the domain comes from
   * the lead found, so it is known only then).
   */
  lookupsToMake: number;
  /** Upper bound: every lookup found, at the published cost of a found lead. */
  creditsNeeded: number;
  creditsEstimate: string;
  /** Minutes at the account's (or --rpm) rate. */
  minutesNeeded: number;
  rpm: number;
  balance: number;
  reserve: number;
  fits: boolean;
  /** --budget N (this run's; the tightest, when given more than once): its limit, and whether it covers `creditsNeeded`. */
  budget?: { limit: number; covers: boolean } | undefined;
  /**
   * Every --budget given (none: empty): what its period has spent so far (this run's: 0), what is
   * left, and whether `creditsNeeded` fits in it; `period` names the UTC day or month.
   */
  budgets: Array<BudgetStanding & { fits: boolean }>;
  /** False when no lookup is to be made: the API is not asked at all (balance, reserve and rpm are then 0 unless given). */
  accountRead: boolean;
}

export async function planRun(options: DryRunOptions): Promise<DryRunPlan> {
  const settings = resolveOptions(options);
  const resources = new Resources();
  try {
    // The account reads go down the run's request path (retried, a 429 waited out), which nothing stops.
    const run = await openRun(settings, resources);
    const { cut: _cut, cutAtRows: _rows, ...counted } = await countRows(settings, run.stored);
    const ledger = await spendStanding(run, resources);
    const standings = await Promise.all(settings.budget.map((limit) => standingOf(limit, ledger, settings.tuning.now())));
    const budget = (creditsNeeded: number) => budgetsOf(standings, creditsNeeded);
    if (counted.lookupsToMake === 0) {
      // Every answer is stored (or no row has a key): nothing to pay for, so nothing to ask the API.
      settings.notice('no lookup to make: every answer is stored; the account was not read (the API was not asked)');
      return {
        ...counted,
        creditsNeeded: 0,
        creditsSaved: counted.lookupsSaved * PUBLISHED_FOUND_COST,
        creditsEstimate: 'nothing to look up',
        minutesNeeded: 0,
        rpm: settings.rpm ?? 0,
        balance: 0,
        reserve: run.reserveOf(undefined),
        fits: true,
        ...budget(0),
        accountRead: false,
      };
    }
    const account = await run.readAccount();
    const creditsNeeded = counted.lookupsToMake * PUBLISHED_FOUND_COST;
    const creditsSaved = counted.lookupsSaved * PUBLISHED_FOUND_COST;
    const { rpm } = rateFor(settings.rpm, account.limits);
    const reserve = run.reserveOf(account);
    return {
      ...counted,
      creditsNeeded,
      creditsSaved,
      creditsEstimate: `upper bound: every lookup found, at ${PUBLISHED_FOUND_COST} credits each (the published cost of a found lead); misses cost nothing`,
      minutesNeeded: Math.round((counted.lookupsToMake / rpm) * 100) / 100,
      rpm,
      balance: account.balance,
      reserve,
      fits: account.balance - creditsNeeded >= reserve,
      ...budget(creditsNeeded),
      accountRead: true,
    };
  } finally {
    await resources.release(false);
  }
}

/** The plan's budgets: each with whether the credits needed fit in what it has left; the run's own also as `budget`. */
function budgetsOf(standings: BudgetStanding[], creditsNeeded: number): Pick<DryRunPlan, 'budget' | 'budgets'> {
  const budgets = standings.map((standing) => ({ ...standing, fits: creditsNeeded <= standing.left }));
  const own = budgets.filter((b) => b.per === 'run').sort((a, b) => a.credits - b.credits)[0];
  return { budgets, ...(own ? { budget: { limit: own.credits, covers: own.fits } } : {}) };
}
