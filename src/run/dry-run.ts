// `enrich --dry-run`: reads and plans every row and checks the store, then says what a real run
// would cost and how long it would take, against the balance and the reserve. It makes no lookup:
// only the two account calls.
import { ApiClient } from '../api/client.js';
import type { BillableOperation } from '../core/kinds.js';
import { PUBLISHED_FOUND_COST } from '../lookup/credits.js';
import { RequestPath } from '../lookup/request-path/request-path.js';
import { RetryPolicy } from '../lookup/request-path/retry-policy.js';
import type { EnrichOptions, Extra } from './enrich-options.js';
import { rateFor } from '../lookup/rate/rate-plan.js';
import { readOptionsOf, resolveOptions, transportOf, type EnrichSettings } from './settings.js';
import { fromBytes, openSource } from '../read/index.js';
import { readAccount } from '../lookup/account.js';
import { ResultStore } from '../store/result-store.js';
import { ANSWER_CELLS } from '../write/columns.js';
import { KeyCensus, noteExtras, type RowExtras } from '../plan/key-census.js';
import { isComplete } from '../plan/complete-row.js';
import { runColumns } from './prepare.js';
import { keyColumns } from '../plan/key-columns.js';
import { domainColumnFor } from '../plan/targets.js';
import { keyWarning } from '../plan/key-warning.js';
import { LOOKUP_OPERATION, planWaterfallRow, type LookupKind } from '../plan/plan.js';

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
    const account = await readAccount(path, settings.rpm);
    const counted = await countRows(settings, store, settings.service ?? client.baseUrl);
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
    };
  } finally {
    if (!(settings.store instanceof ResultStore)) store.close();
    if (!settings.client) client.close();
  }
}

type RowCounts = Pick<
  DryRunPlan,
  'rows' | 'invalidRows' | 'noKeyRows' | 'completeRows' | 'lookupsSaved' | 'lookup' | 'distinctKeys' | 'alreadyKnown' | 'lookupsToMake' | 'lookupsExpected' | 'warning'
>;

/** Reads and plans every row as the run would, and checks each distinct key against the store. */
async function countRows(settings: EnrichSettings, store: ResultStore, service: string): Promise<RowCounts> {
  const read = await openSource(settings.input, readOptionsOf(settings));
  const inputName = typeof settings.input === 'string' ? settings.input : 'the input stream';
  const { targets, headerLine, source } = await keyColumns(read, { by: settings.by, columns: settings.columns, header: settings.header, inputName, warn: settings.warn });
  const extras = settings.extras;
  const domainColumn = headerLine ? domainColumnFor(source.header.map(fromBytes), targets, extras) : undefined;
  const census = new KeyCensus(store, service, settings.maxAgeMs, settings.refresh);
  // --fill / --only-missing: the rows complete already are counted apart; what they save is what a
  // census of every row would look up beyond the census of the rows looked up.
  const { complete } = runColumns(settings, targets, source.header.map(fromBytes));
  const everyRow = complete ? new KeyCensus(store, service, settings.maxAgeMs, settings.refresh) : undefined;
  const counts = { rows: 0, invalidRows: 0, noKeyRows: 0, completeRows: 0 };
  for await (const batch of source.batches) {
    for (const cells of batch) {
      const planned = planWaterfallRow(cells, targets, source.header.length, settings.shard);
      if (planned.kind === 'elsewhere') continue;
      counts.rows += 1;
      const isDone = complete !== undefined && isComplete(cells, complete);
      if (isDone) counts.completeRows += 1;
      if (planned.kind !== 'keys') {
        if (isDone) continue;
        if (planned.kind === 'invalid') counts.invalidRows += 1;
        else counts.noKeyRows += 1;
        continue;
      }
      const row = { extras, keys: planned.keys, domainCell: domainColumn ? fromBytes(cells[domainColumn.columnIndex] ?? '') : undefined };
      for (const each of isDone ? [everyRow!] : everyRow ? [census, everyRow] : [census]) walkRow(each, row);
    }
  }
  return {
    ...counts,
    lookup: {
      kind: targets[0]!.kind,
      column: targets[0]!.columnName,
      with: extras,
      order: targets.map((t) => ({ kind: t.kind, column: t.columnName })),
    },
    distinctKeys: census.distinct(),
    alreadyKnown: census.known,
    lookupsToMake: census.worst,
    lookupsSaved: everyRow ? everyRow.worst - census.worst : 0,
    lookupsExpected: census.expected,
    warning: keyWarning(counts, source, targets),
  };
}

/** A row's keys through the census (the store's answers first), --with included. */
function walkRow(census: KeyCensus, row: RowExtras): void {
  const answering = census.walk(row.keys.map((attempt) => ({ op: LOOKUP_OPERATION[attempt.target.kind] as BillableOperation, key: attempt.key, attempt })));
  if (row.extras.length > 0) noteExtras(census, row, answering);
}
