// The public options of a run (all optional but the input), as library callers pass them.
// resolve-options.ts turns them into the settings a run uses, validated once, defaults filled
// from defaults.ts.
import type { Readable, Writable } from 'node:stream';
import type { LeadClient } from '../lookup/lead-client.js';
import type { Extra, LookupKind } from '../core/kinds.js';
import type { Shard } from '../plan/plan.js';
import type { ResultStore } from '../store/result-store.js';

export type { Extra } from '../core/kinds.js';

export interface EnrichOptions {
  /** CSV or .xlsx path, '-' for stdin (CSV), or a readable stream (CSV). */
  input: string | Readable;
  /** The input's field delimiter: one character, or 'tab'. Default: detected (, ; tab |). */
  delimiter?: string | undefined;
  /** The input's encoding: any WHATWG label. Default: detected (BOM, else UTF-8 if valid, else windows-1252). */
  encoding?: string | undefined;
  /** The first line is a header (default true). false: it is data, and `column` is a 1-based position. */
  header?: boolean | undefined;
  /**
   * Enriched output: a path, '-' for stdout, or a stream (ended when the outputs are complete).
   * Default: `<input>.enriched.csv` beside the input (`.enriched.xlsx` for an .xlsx input); stdout for stdin; required for a stream input.
   */
  output?: string | Writable | undefined;
  /** Error sidecar: a path or a stream. Default: `<output name>.errors.csv` beside a file output; none for streams. */
  errors?: string | Writable | undefined;
  /** Which lookup: one kind, or a waterfall tried in order (`['email', 'url']` or 'email,url'). Default: detected. */
  by?: LookupKind | LookupKind[] | string | undefined;
  /** The key column: one name, or one per kind of a waterfall, in the same order. Default: detected. */
  column?: string | string[] | undefined;
  with?: Extra[] | undefined;
  /** 'xlsx': an Excel workbook. Default: what the output's name says, else a workbook for an .xlsx input written beside it, else CSV. */
  format?: 'csv' | 'jsonl' | 'xlsx' | undefined;
  /** The worksheet of an .xlsx input: its name, or its 1-based position. Default: the first. */
  sheet?: string | number | undefined;
  /** Put this before the name of every added column (`lead_status` too), e.g. to enrich an enriched file again. */
  prefix?: string | undefined;
  /** Keep only these added columns (`lead_status` is always kept), in this order: a list, or a comma-separated string. */
  fields?: string[] | string | undefined;
  /**
   * Fill blank cells of the input's own columns from the answer: `'Title=lead_title,Company=lead_company_name'`,
   * a list of such pairs, `{ Title: 'lead_title' }`, or `[{ column: 'Title', field: 'lead_title' }]`. A field is any added column's name (as `fields`
   * names them). Only `lead_status` is added then, unless `fields` names more. A row whose cells in
   * these columns all hold values is not looked up (`skipped`, `complete`).
   */
  fill?: string | string[] | Record<string, string> | ReadonlyArray<{ column: string; field: string }> | undefined;
  /** With `fill`: replace cells that hold a value too (such rows are looked up). */
  overwrite?: boolean | undefined;
  /** Look up only rows where at least one of these input columns is blank; the others are `skipped`, `complete`. */
  onlyMissing?: string | string[] | undefined;
  /** Write a run report here at the end of the run (also a stopped one): HTML or JSON by the extension. */
  report?: string | undefined;
  /** Lines above the header that are not the table (a report's title lines). Default: detected. */
  skipLines?: number | undefined;
  /** Only the first N data rows (a try before the whole file); the summary says the run is partial. */
  limit?: number | undefined;
  /** The command line the report names (its passwords masked). Default: this process's, `process.argv.slice(1)`. */
  commandLine?: readonly string[] | undefined;

  /** The API: a ready client, or a base URL and token. */
  client?: LeadClient | undefined;
  baseUrl?: string | undefined;
  token?: string | undefined;
  /** Per-request timeout in ms of the client the run makes from baseUrl and token (default 30000). */
  timeoutMs?: number | undefined;
  /** A proxy URL for the client the run makes; default: HTTPS_PROXY / HTTP_PROXY / NO_PROXY. */
  proxy?: string | undefined;
  /** Names the server in the store, so answers of different services never mix. Default: the base URL. */
  service?: string | undefined;

  /** Requests per minute; default sized from /account/limits. */
  rpm?: number | undefined;
  /** Most requests in flight; default sized from rate and latency. */
  concurrency?: number | undefined;
  /** Credits never to spend; default low_credit_balance_min_threshold. */
  minCredits?: number | undefined;
  /** Spend at most this many credits in this run (all operations); the rows not looked up then are `skipped`/`budget`. */
  budget?: number | undefined;
  /** Retries of a transient failure. Default 4. */
  retries?: number | undefined;

  /** Result store path, or an open store. Default: the per-user cache (LEAD_ENRICH_STORE). */
  store?: string | ResultStore | undefined;
  /** Stored answers older than this are fetched again: a duration ('30d', '12h'). Default 30 days. */
  maxAge?: string | undefined;
  /** The same in milliseconds (the older spelling; `maxAge` wins when both are given). */
  maxAgeMs?: number | undefined;
  /** Ignore answers stored by earlier runs. */
  refresh?: boolean | undefined;

  /**
   * Stop looking up once more than this many looked-up rows are `error` (a number, or a
   * percentage such as '5%' of the rows looked up, judged after 50): the rest are `skipped`
   * with `max_errors`, and the summary's stoppedBy is 'max_errors'.
   */
  maxErrors?: number | string | { count: number } | { percent: number } | undefined;

  /**
   * How long to wait for an API that is down before giving up on it: a duration ('10m', '30s').
   * Default 10m. Then the rows not looked up are `skipped` with `api_unavailable` (docs/cli-contract.md,
   * "An API that fails"), and the summary's stoppedBy is 'api_unavailable'.
   */
  patience?: string | undefined;

  /** Share the rate limit, credit reserve and answers with other workers through this Redis. */
  redis?: string | undefined;
  /** Process only the rows whose key hashes to shard `index` (1-based) of `count`. */
  shard?: Shard | undefined;

  /** Aborting stops new lookups; the remaining rows are written as skipped/interrupted. */
  signal?: AbortSignal | undefined;
  /**
   * Aborting it (a second Ctrl-C) stops at once: requests still in flight are not waited for,
   * their rows are written as skipped/interrupted too. The outputs are still complete.
   */
  quit?: AbortSignal | undefined;
  onProgress?: ((progress: EnrichProgress) => void) | undefined;
  onWarning?: ((line: string) => void) | undefined;
  /** The lines that say the API became unavailable, is back, or was given up on. Default: onWarning. */
  onAvailability?: ((line: string) => void) | undefined;
  /**
   * Lines about what the run left out or needed not do, no fault of anyone's: title lines above
   * the header, a report's footer, the rows past `limit`, a run with nothing to look up (default:
   * onWarning). The command line's `-q` silences them: a cron job that ends well says nothing.
   */
  onNotice?: ((line: string) => void) | undefined;
  stdout?: Writable | undefined;
  /** Knobs for tests and benchmarks. */
  tuning?: EnrichTuning | undefined;
}

export interface EnrichTuning {
  /** The server's rate window (60 s in production). */
  windowMs?: number;
  progressIntervalMs?: number;
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  creditsRefreshMs?: number;
  /** How long in-flight requests may finish after an interrupt. */
  drainTimeoutMs?: number;
  edgeMarginMs?: number;
  reorderWindow?: number;
  storeFlushIntervalMs?: number;
}

export interface EnrichProgress {
  /** Rows read so far (ahead of rowsDone by the rows in flight). */
  rowsRead: number;
  rowsDone: number;
  /** Rows written whose answer came from a request (not from the store): what the rate is of. */
  rowsLookedUp: number;
  found: number;
  notFound: number;
  errors: number;
  skipped: number;
  requests: number;
  rateLimited: number;
  creditsSpent: number;
  bytesRead: number;
  totalBytes: number | undefined;
  /**
   * The rows this run will write, estimated from the share of the input parsed so far (never
   * fewer than the rows read); exact (`totalExact`) once the input is read to its end. Undefined
   * while it cannot be told: stdin, a gzipped file, a stream, before the first rows.
   */
  totalRows?: number | undefined;
  totalExact?: boolean | undefined;
  /** Lookup requests sent and not answered yet (rows are written in input order, so answers may wait). */
  lookupsInFlight?: number | undefined;
  /** How long the run has been looking up (first lookup sent to the last answered): the time rowsLookedUp took. */
  lookupMs?: number | undefined;
  elapsedMs: number;
  /** While the API is down: since when (epoch ms); undefined while it answers. */
  apiUnavailableSince?: number | undefined;
  /** While a 429 pauses the run (the rate limit's window is used up): until when (epoch ms). */
  rateLimitedUntil?: number | undefined;
  /** The last snapshot, sent once the run's figures are final (its credits are the summary's). */
  final?: boolean | undefined;
}
