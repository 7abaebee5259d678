// The public options of a run (all optional but the input), as library callers pass them.
// settings.ts turns them into the settings a run uses, each read once, defaults filled in.
import type { Readable, Writable } from 'node:stream';
import type { LeadClient } from '../lookup/lead-client.js';
import type { RunOptionInputs } from '../options/registry.js';
import type { Shard } from '../plan/plan.js';
import type { ResultStore } from '../store/result-store.js';

export type { Extra } from '../core/kinds.js';

/**
 * The options of a run. Those that follow an option's rule, and say what they do on hover, are
 * RunOptionInputs (options/registry.ts, beside the rows that read them); these are the rest.
 */
export interface EnrichOptions extends RunOptionInputs {
  /** CSV or .xlsx path, '-' for stdin (CSV), or a readable stream (CSV). */
  input: string | Readable;
  /**
   * Enriched output: a path, '-' for stdout, or a stream (ended when the outputs are complete).
   * Default: `<input>.enriched.csv` beside the input (`.enriched.xlsx` for an .xlsx input); stdout for stdin; required for a stream input.
   */
  output?: string | Writable | undefined;
  /** Error sidecar: a path or a stream. Default: `<output name>.errors.csv` beside a file output; none for streams. */
  errors?: string | Writable | undefined;
  /** The command line the report names (its passwords masked). Default: this process's, `process.argv.slice(1)`. */
  commandLine?: readonly string[] | undefined;

  /** The API: a ready client, or a base URL and token. */
  client?: LeadClient | undefined;
  /** Names the server in the store, so answers of different services never mix. Default: the base URL. */
  service?: string | undefined;

  /** Result store path, or an open store. Default: the per-user cache (LEAD_ENRICH_STORE). */
  store?: string | ResultStore | undefined;

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
  /**
   * The lines that say the API became unavailable, is back, or was given up on, and the line said
   * when the account stops the run (the credit reserve, a 402, `budget`). Default: onWarning. The
   * command line's `-q` silences them: its one line says why the run stopped.
   */
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
  /** The clock (epoch ms) the day and month budgets and the ledger are read by. Default Date.now. */
  now?: () => number;
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
