// `enrich --dry-run`: reads and plans every row and checks the store, then says what a real run
// would cost and how long it would take, against the balance and the reserve. It makes no lookup:
// only the two account calls.
import { ApiClient } from '../api/client.js';
import { PUBLISHED_FOUND_COST } from '../lookup/credits.js';
import { RequestPath } from '../lookup/request-path/request-path.js';
import { RetryPolicy } from '../lookup/request-path/retry-policy.js';
import type { EnrichOptions, Extra } from './enrich-options.js';
import { rateFor } from '../lookup/rate/rate-plan.js';
import { resolveOptions, transportOf } from './settings.js';
import { readAccount } from '../lookup/account.js';
import { ResultStore } from '../store/result-store.js';
import { ANSWER_CELLS } from '../write/columns.js';
import type { LookupKind } from '../plan/plan.js';
import { countRows } from './count-rows.js';

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
  /** --budget: its limit, and whether it covers `creditsNeeded`. */
  budget?: { limit: number; covers: boolean } | undefined;
  /** False when no lookup is to be made: the API is not asked at all (balance, reserve and rpm are then 0 unless given). */
  accountRead: boolean;
}

export async function planRun(options: DryRunOptions): Promise<DryRunPlan> {
  const settings = resolveOptions(options);
  const client = settings.client?.direct ?? new ApiClient(transportOf(settings));
  const store = settings.store instanceof ResultStore ? settings.store : ResultStore.open({ path: settings.store, cells: ANSWER_CELLS });
  try {
    // The two account reads go down a request path of their own (retried, a 429 waited out),
    // which nothing stops: its signals never abort.
    const never = new AbortController().signal;
    const path = new RequestPath((op, input) => client.call(op, input as never), {
      retry: new RetryPolicy({ retries: settings.retries, baseDelayMs: settings.tuning.retryBaseDelayMs, maxDelayMs: settings.tuning.retryMaxDelayMs }),
      windowMs: settings.tuning.windowMs,
      noMoreRequests: never,
      halt: never,
    });
    const { cut: _cut, cutAtRows: _rows, ...counted } = await countRows(settings, store, settings.service ?? client.baseUrl);
    if (counted.lookupsToMake === 0) {
      // Every answer is stored (or no row has a key): nothing to pay for, so nothing to ask the API.
      settings.notice('no lookup to make: every answer is stored; the account was not read (the API was not asked)');
      return { ...counted, creditsNeeded: 0, creditsSaved: counted.lookupsSaved * PUBLISHED_FOUND_COST, creditsEstimate: 'nothing to look up', minutesNeeded: 0, rpm: settings.rpm ?? 0, balance: 0, reserve: settings.minCredits ?? 0, fits: true, ...(settings.budget === undefined ? {} : { budget: { limit: settings.budget, covers: true } }), accountRead: false };
    }
    const account = await readAccount(path, settings.rpm);
    const creditsNeeded = counted.lookupsToMake * PUBLISHED_FOUND_COST;
    const creditsSaved = counted.lookupsSaved * PUBLISHED_FOUND_COST;
    const { rpm } = rateFor(settings.rpm, account.limits);
    const reserve = settings.minCredits ?? account.threshold;
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
      ...(settings.budget === undefined ? {} : { budget: { limit: settings.budget, covers: creditsNeeded <= settings.budget } }),
      accountRead: true,
    };
  } finally {
    if (!(settings.store instanceof ResultStore)) store.close();
    if (!settings.client) client.close();
  }
}

