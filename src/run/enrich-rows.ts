// enrichRows: the run's phases over rows that are already in memory or in a cursor (docs/cli-contract.md,
// "Library"), as an async iterable of results in input order. Same store, rate limit, credit
// reserve, waterfall, --with and --max-errors as `enrich`; rows are pulled only as results are
// consumed; breaking out of the loop stops the lookups and releases everything.
import type { AnyLead, DomainLead, MxResult, WhoisResult } from '../api/types.js';
import { ConfigError, type LeadEnrichError } from '../api/errors.js';
import type { EnrichOptions } from './enrich-options.js';
import { enrichOptionNames, resolveOptions, unknownOption, type EnrichSettings } from './settings.js';
import type { LookupKind } from '../plan/plan.js';
import { domainColumnFor, detectTargets } from '../plan/targets.js';
import { fromBytes } from '../read/byte-string.js';
import { RowsSource, type InputRow } from '../read/rows-source.js';
import { ConsumerSink } from './consumer-sink.js';
import { finish } from './finish.js';
import type { Billing, FinishedRow } from '../core/rows.js';
import { RunMetrics } from './metrics.js';
import { openRun, type RunState } from './open-run.js';
import { runColumns } from './run-columns.js';
import { Resources } from './resources.js';
import { rowError } from './row-error.js';
import { loopOf, runRows } from './run-rows.js';

/** The options of enrich() that mean something for rows in memory, and the names of array rows' cells. */
export type EnrichRowsOptions = Omit<
  EnrichOptions,
  'input' | 'output' | 'errors' | 'changes' | 'format' | 'delimiter' | 'encoding' | 'header' | 'sheet' | 'skipLines' | 'limit' | 'stdout'
> & {
  /** The names of the cells when rows are arrays (objects name their own). */
  header?: readonly string[] | undefined;
};

/** What every result has, whatever its status. `T` is the caller's own row type. */
interface RowResultBase<T> {
  /** 1-based position of the row in the input. */
  row: number;
  /** The row as it was given (the same object). */
  input: T;
  /** The lookup kind that answered (or, in a waterfall, the last one tried). */
  source: LookupKind | undefined;
  /** With `with: ['company']`: the company behind the row's domain (several, when the domain matches several). */
  company: DomainLead | undefined;
  mx: MxResult | undefined;
  whois: WhoisResult | undefined;
  /** The CLI's `lead_billing` word: `stale` for a stored answer older than `maxAge` that the run could not look up again. */
  billing: Billing;
  /**
   * Why a stale answer this result carries (`billing: 'stale'`, or a `with` lookup's) was not
   * refreshed: a LeadError of the code's class (`budget`, `api_unavailable`, a `ServerError`
   * whose retries failed, ...), as the sidecar lists it; undefined when none is stale.
   */
  stale: LeadEnrichError | undefined;
  /** With `fill`: the cells the answer filled, by column name (`{ Title: 'CTO' }`); undefined when none. `input` stays as given. */
  filled: Record<string, string> | undefined;
  /**
   * Present when this run looked the row's key up again (its stored answer was older than
   * `maxAge`, or `refresh`): what changed since the earlier answer, `[]` when nothing did
   * (docs/library.md, "What changed"). Absent for a row answered from the store or looked up for
   * the first time.
   */
  changes?: RowChange[];
}

/**
 * One changed field: `status` (found became not found, or the reverse), else the name of the
 * column as `fields` names it (`lead_title`), with its cell before and after.
 */
export interface RowChange {
  field: string;
  before: string;
  after: string;
}

/**
 * One row's result, discriminated by `status` so that a caller's `if (r.status === 'found')` is
 * enough for the compiler to know that `lead` is there, and `error` for `error` and `skipped`.
 */
export type RowResult<T = InputRow> =
  | (RowResultBase<T> & { status: 'found'; lead: AnyLead; error: undefined })
  /** `lead` is the API's own answer to a miss: an empty object, or nothing, as the service sent it. */
  | (RowResultBase<T> & { status: 'not_found'; lead: AnyLead | undefined; error: undefined })
  /** Why there is no answer: a LeadError of the class docs/library.md lists for the sidecar's code. */
  | (RowResultBase<T> & { status: 'error' | 'skipped'; lead: undefined; error: LeadEnrichError });

/** enrich()'s options that are about files and streams: refused by enrichRows with why. */
const FILE_OPTIONS = ['input', 'output', 'errors', 'changes', 'format', 'delimiter', 'encoding', 'sheet', 'skipLines', 'limit', 'stdout'];
const ROWS_OPTIONS = [...enrichOptionNames().filter((name) => !FILE_OPTIONS.includes(name)), 'header'];

/**
 * `T` is inferred from the rows, so `result.input` is the caller's type. `object` rather than an
 * index signature: an array of an `interface` (which has none) must be accepted as it is.
 */
export function enrichRows<T extends object = InputRow>(
  rows: Iterable<T> | AsyncIterable<T>,
  options: EnrichRowsOptions = {},
): AsyncIterableIterator<RowResult<T>> {
  for (const [key, value] of Object.entries(options as object)) {
    if (value === undefined) continue;
    if (FILE_OPTIONS.includes(key))
      throw new ConfigError(`Invalid option ${key}: not an option of enrichRows (its rows come from the iterable, its results from the loop)`);
    if (!ROWS_OPTIONS.includes(key)) throw unknownOption(key, 'enrichRows', 'EnrichRowsOptions', ROWS_OPTIONS);
  }
  const { header, ...rest } = options;
  // Validated now, before the first result is asked for: a wrong option throws at the call.
  const settings = resolveOptions({ ...rest, input: '-', output: '-' });
  // The rows are read as objects or arrays whatever their declared type; only the results carry T.
  const source = new RowsSource(rows as Iterable<InputRow> | AsyncIterable<InputRow>, header);
  return results<T>(source, settings);
}

async function* results<T>(source: RowsSource, settings: EnrichSettings): AsyncGenerator<RowResult<T>> {
  const startedAt = Date.now();
  const resources = new Resources();
  resources.defer(() => source.destroy());
  const sink = new ConsumerSink();
  let failed = true;
  let running: Promise<unknown> | undefined;
  let run: RunState | undefined;
  try {
    run = await openRows(source, settings, resources, sink);
    running = start(run, startedAt, sink);
    for (let row = await sink.next(); row !== undefined; row = await sink.next()) yield resultOf<T>(row, source, run);
    await running;
    failed = false;
  } finally {
    // The caller broke out (or the run failed): stop at once, stop reading, let the run wind down.
    run?.stop.quit();
    source.destroy();
    sink.close();
    await running?.catch(() => {});
    await resources.release(failed);
  }
}

/** The rows' header and key columns, then the run opened with the caller's loop as its writer. */
async function openRows(source: RowsSource, settings: EnrichSettings, resources: Resources, sink: ConsumerSink): Promise<RunState> {
  await source.start();
  const header = source.header.map(fromBytes);
  const targets = detectTargets(header, settings.by, settings.column);
  const input = {
    source,
    targets,
    domainColumn: domainColumnFor(header, targets, settings.with),
    headerLine: true,
    ...runColumns(settings, targets, header),
  };
  return openRun(settings, resources, { input, storedForm: 'data', writer: () => sink });
}

/** The run in the background: its rows go to the sink; a failure reaches the caller's next(). */
function start(run: RunState, startedAt: number, sink: ConsumerSink): Promise<unknown> {
  const metrics = new RunMetrics(run.targets.length === 1 ? run.targets[0]!.kind : undefined, startedAt, run.fillRates);
  const done = runRows(loopOf(run, metrics, sink)).then(() => finish(run, metrics));
  done.catch((error: unknown) => sink.fail(error));
  return done;
}

function resultOf<T>(row: FinishedRow, source: RowsSource, run: RunState): RowResult<T> {
  // The union's pairing (found ⇒ lead, error/skipped ⇒ error) is what the run produces, not
  // something the compiler can see in FinishedRow: hence the one assertion.
  return {
    row: row.row,
    input: (source.take(row.row) ?? []) as T,
    status: row.status,
    source: row.source ?? (run.targets.length === 1 ? run.targets[0]!.kind : undefined),
    lead: row.data.lead,
    company: row.data.company,
    mx: row.data.mx,
    whois: row.data.whois,
    billing: row.billing,
    error: row.errorCode === undefined || row.unrefreshed ? undefined : rowError(row.errorCode, row.errorMessage ?? row.errorCode, row.failure),
    stale: row.unrefreshed && row.errorCode !== undefined ? rowError(row.errorCode, row.errorMessage ?? row.errorCode, row.failure) : undefined,
    filled: row.filled ? Object.fromEntries([...row.filled].map(([column, value]) => [fromBytes(source.header[column] ?? ''), value])) : undefined,
    ...(row.changes ? { changes: row.changes.map(({ field, before, after }) => ({ field, before, after })) } : {}),
  } as RowResult<T>;
}
