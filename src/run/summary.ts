// What a run reports: the progress snapshots while it runs and the summary when it ends, both read
// from the run's one metrics object.
import type { EnrichProgress, Extra } from './enrich-options.js';
import type { LookupKind, Shard } from '../plan/plan.js';
import type { Billing, RowStatus } from '../core/rows.js';
import type { ChangeCounts, RunMetrics, StaleCounts } from './metrics.js';
import type { StoppedBy } from './run-stop.js';
import type { RunState } from './open-run.js';
import type { BudgetStanding } from '../lookup/budget.js';
import type { CarriedCounts } from './change-listing.js';

export interface EnrichSummary {
  input: string;
  output: string | undefined;
  errorsFile: string | undefined;
  /** The lookup (the first kind of a waterfall), and with a waterfall every kind and column in order. */
  lookup: { kind: LookupKind; column: string; with: Extra[]; waterfall?: Array<{ kind: LookupKind; column: string }> };
  /** Rows found, per lookup kind that found them. */
  foundBy: Partial<Record<LookupKind, number>>;
  /** Rows each kind answered (found or not found; a waterfall row under every kind that answered it): match rate = foundBy ÷ answeredBy. */
  answeredBy: Partial<Record<LookupKind, number>>;
  /**
   * Of the rows found, how many hold a value in each added column (its fill rate = this ÷ status.found):
   * the columns written that an answer fills, and those --fill reads, named as the run writes them.
   */
  fillRates: Record<string, number>;
  /** --fill: cells filled, per input column. */
  filled: Record<string, number>;
  /**
   * What changed since the earlier answers (docs/cli-contract.md, "What changed since the last
   * answer"): of the `compared` rows (their key looked up again), the `rows` that changed, and per
   * field (`status`, or a column's name as --fields names it) the rows where it changed.
   */
  changed: ChangeCounts;
  /**
   * --changes: the changes earlier runs stored and no --changes file listed (a run without
   * --changes, or one that stopped before its file was complete), which this run's file lists
   * beside its own (`changed` counts this run's own only): the keys with a line, the lines, and of
   * those keys the ones no row of this file stands for (their lines have an empty `row`).
   */
  carriedOver: CarriedCounts;
  /** --changes: the file that lists them, once complete. */
  changesFile: string | undefined;
  /** How each --with operation went, of the rows whose own lookup answered. */
  withStatus: Partial<Record<Extra, Record<RowStatus, number>>>;
  rows: number;
  /** --limit: the data rows asked for; undefined without it. */
  limit: number | undefined;
  /** --limit cut the input short: the outputs hold its first rows only. */
  partial: boolean;
  status: Record<RowStatus, number>;
  billing: Record<Billing, number>;
  /** How the --with operations were billed, per operation (their credits are in `credits.spent` too). */
  withBilling: Partial<Record<Extra, Record<Billing, number>>>;
  /** The sidecar's error_code of every row in error or skipped. */
  errorCodes: Record<string, number>;
  /** Of those, the skipped rows' (no_key, complete, credit_reserve, ...): why a row was not looked up, not an error. */
  skipReasons: Record<string, number>;
  /** Rows in `error` for the file's own problems (invalid_input, bad_request): when they are all the errors, exit 5. */
  fileErrors: number;
  /**
   * Rows written with a stored answer older than --max-age that this run could not look up again
   * (`lead_billing` `stale`, or a --with lookup's billing; docs/cli-contract.md, "A stale answer is
   * better than none"): `rows`, `errors` (of them, those whose refresh failed: errors for the exit
   * status) and `reasons` (the sidecar's code of what stopped the refresh → rows). Counted under
   * `status` as the stored answer's found or not found, and not in `errorCodes`.
   */
  stale: StaleCounts;
  requests: number;
  retries: number;
  rateLimited: number;
  /**
   * `spent`: what this run was charged (its own charges); `fell`: how far the balance fell
   * meanwhile, more than `spent` when another client used the account at the same time.
   */
  credits: { before: number; after: number; spent: number; fell: number; reserve: number; exact: boolean };
  /** False when nothing was to be looked up: the account was not read (credits are then all 0). */
  accountRead: boolean;
  /** Requests the run allowed itself per rate window (of `windowMs`: a minute unless the account's window is another). */
  rpm: number;
  windowMs: number;
  concurrency: number;
  /** When the run began and ended (ISO 8601). */
  startedAt: string;
  endedAt: string;
  elapsedMs: number;
  /** Rows answered by a request (not by the store): what `rowsPerMinute` is of. */
  rowsLookedUp: number;
  /** Time spent looking up: from the first lookup sent to the last answered (ms). */
  lookupMs: number;
  /** Rows looked up per minute of `lookupMs` (0 when none was looked up). */
  rowsPerMinute: number;
  /**
   * Input cells holding bytes that are not valid UTF-8 (in a file read as UTF-8): copied through
   * unchanged into a CSV output and the sidecar; a JSON Lines or workbook output holds text only,
   * each such byte U+FFFD there.
   */
  invalidUtf8Cells: number;
  /** The enriched output's format. */
  outputFormat: 'csv' | 'jsonl' | 'xlsx';
  /** Why lookups stopped early, if they did. */
  stoppedBy: StoppedBy | undefined;
  /**
   * Every --budget (none: empty) as it stands at the end: spent in its UTC day or month by every
   * run on the store or Redis (this run's: its own charges), left; `stopped` on the one that
   * stopped the run, and when its period starts again (`resetsAt`, ISO 8601).
   */
  budgets: SummaryBudget[];
  /** How long the API was unavailable during the run, in all (ms); 0 when it never was. */
  apiUnavailableMs: number;
  /** What the API's last outage began with ("Cannot reach …: connection refused …"), when it was unavailable. */
  apiFailure: string | undefined;
  /** The --patience the run waited with for an API that was down (ms). */
  patienceMs: number;
  shard: Shard | undefined;
  /** The run report written (--report), if any. */
  report: string | undefined;
}

export interface SummaryBudget extends BudgetStanding {
  stopped: boolean;
  resetsAt?: string | undefined;
}

/** @internal The run's snapshot for its progress (not in the published types: RunState is the run's own). */
export function progressOf(run: RunState, metrics: RunMetrics): EnrichProgress {
  const path = run.path.reading();
  return {
    rowsRead: metrics.rowsRead,
    rowsDone: metrics.rows,
    rowsLookedUp: metrics.rowsLookedUp,
    found: metrics.status.found,
    notFound: metrics.status.not_found,
    errors: metrics.status.error,
    skipped: metrics.status.skipped,
    requests: path.requests,
    rateLimited: path.rateLimited,
    creditsSpent: run.credits.spent,
    bytesRead: run.source.bytesRead(),
    totalBytes: run.source.totalBytes,
    ...totalOf(run, metrics),
    lookupsInFlight: path.lookupsInFlight,
    lookupMs: path.lookupMs,
    elapsedMs: metrics.elapsedMs,
    apiUnavailableSince: path.apiUnavailableSince,
    rateLimitedUntil: path.rateLimitedUntil,
  };
}

/**
 * The rows the run will write: the input's records (estimated until it is read to the end), in
 * the share this run writes of those read so far (all of them, but with --shard).
 */
function totalOf(run: RunState, metrics: RunMetrics): { totalRows: number | undefined; totalExact: boolean } {
  const count = run.source.estimatedRecords();
  if (count === undefined) return { totalRows: undefined, totalExact: false };
  const read = metrics.rowsRead;
  const ours = read > 0 ? Math.round((count.records * metrics.rowsPlanned) / read) : count.records;
  return { totalRows: Math.max(ours, metrics.rowsPlanned), totalExact: count.exact && read >= count.records };
}

/** @internal */
export interface FinalFacts {
  files: { output: string | undefined; errors: string | undefined; changes?: string | undefined };
  balanceAfter: number;
  exact: boolean;
  budgets: SummaryBudget[];
}

/** @internal */
export function summaryOf(run: RunState, metrics: RunMetrics, final: FinalFacts): EnrichSummary {
  const { settings, stop } = run;
  const path = run.path.reading();
  const elapsedMs = metrics.elapsedMs;
  const stoppedBy = stop.stoppedBy;
  return {
    input: typeof settings.input === 'string' ? settings.input : '(stream)',
    output: final.files.output ?? (settings.output === '-' ? '-' : typeof settings.output === 'string' ? undefined : '(stream)'),
    errorsFile: final.files.errors,
    lookup: {
      kind: run.targets[0]!.kind,
      column: run.targets[0]!.columnName,
      with: settings.with,
      ...(run.targets.length > 1 ? { waterfall: run.targets.map((t) => ({ kind: t.kind, column: t.columnName })) } : {}),
    },
    foundBy: metrics.foundBy,
    answeredBy: metrics.answeredBy,
    fillRates: Object.fromEntries(Object.entries(metrics.fillRates).map(([name, n]) => [`${settings.prefix}${name}`, n])),
    filled: Object.fromEntries((run.fill?.targets ?? []).map((t) => [t.columnName, metrics.filled.get(t.column) ?? 0])),
    changed: { ...metrics.changed, fields: { ...metrics.changed.fields } },
    carriedOver: { ...(run.listing?.counts ?? { keys: 0, lines: 0, keysNotInFile: 0 }) },
    changesFile: final.files.changes,
    withStatus: metrics.extraStatus,
    rows: metrics.rows,
    limit: run.source.limited?.limit,
    partial: run.source.limited?.more() ?? false,
    status: metrics.status,
    billing: metrics.billing,
    withBilling: metrics.extraBilling,
    errorCodes: metrics.errorCodes,
    skipReasons: metrics.skipReasons,
    fileErrors: metrics.fileErrors,
    stale: { ...metrics.stale, reasons: { ...metrics.stale.reasons } },
    requests: path.requests,
    retries: path.retries,
    rateLimited: path.rateLimited,
    credits: creditsOf(run, final),
    accountRead: run.accountRead,
    rpm: run.rate.rpm,
    windowMs: path.windowMs,
    concurrency: path.concurrency,
    startedAt: new Date(metrics.startedAt).toISOString(),
    endedAt: new Date(metrics.startedAt + elapsedMs).toISOString(),
    elapsedMs,
    rowsLookedUp: metrics.rowsLookedUp,
    lookupMs: path.lookupMs,
    rowsPerMinute: perMinute(metrics.rowsLookedUp, path.lookupMs),
    invalidUtf8Cells: metrics.invalidUtf8Cells,
    outputFormat: settings.format,
    stoppedBy,
    budgets: final.budgets,
    apiUnavailableMs: path.apiUnavailableMs,
    apiFailure: path.apiFailure,
    patienceMs: settings.patience,
    shard: settings.shard,
    report: settings.report,
  };
}

/**
 * The run's own charges, and the balance's fall. When the fall is the smaller (a cost not learned
 * yet, counted at the published upper bound), the fall is what was spent: nothing else can have
 * made the balance fall less than this run's charges.
 */
function creditsOf(run: RunState, final: FinalFacts): EnrichSummary['credits'] {
  const { credits } = run;
  const fell = credits.startBalance - final.balanceAfter;
  const spent = final.exact && fell >= 0 ? Math.min(credits.spent, fell) : credits.spent;
  return { before: credits.startBalance, after: final.balanceAfter, spent, fell, reserve: run.reserve, exact: final.exact };
}

/**
 * Rows per minute over `ms`. A few lookups answered within one millisecond would make a rate of
 * millions: below a second of looking up, the rate is taken over a second.
 */
export function perMinute(rows: number, ms: number): number {
  return rows > 0 ? Math.round((rows * 60_000) / Math.max(ms, 1000)) : 0;
}
