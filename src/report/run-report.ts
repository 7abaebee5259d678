// The run report's figures (docs/cli-contract.md, "Report"), as the JSON report holds them and the HTML
// report shows them. These keys are stable: scripts read them (docs/reference.md, "Run report"). Add keys
// freely; never rename or remove one (a change of meaning bumps reportVersion).
//
// A rate is a share from 0 to 1, or null when its denominator is 0 (no row looked up, none found).
// Times are ISO 8601; durations and offsets milliseconds.
import type { StoppedBy } from '../lookup/stops.js';

export type Status = 'found' | 'not_found' | 'error' | 'skipped';
export type BillingWord = 'charged' | 'free' | 'cached' | 'duplicate' | 'stale' | 'none';

export interface RunReport {
  reportVersion: 1;
  tool: { name: string; version: string };
  /** The command line, its passwords masked (never the token: it is never on it). */
  commandLine: string;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  /** The exit status the command line ends with (docs/cli-contract.md, "Exit status"). */
  exitStatus: number;
  /** Why lookups stopped early: credits, interrupt, max_errors, api_unavailable, redis; null when they did not. */
  stoppedBy: StoppedBy | null;
  /** Absolute paths (the input as typed when it was stdin or a stream). */
  files: { input: string; output: string | null; errors: string | null };
  /** The outcome in words, for a reader who does not know exit statuses. */
  outcome: string;
  rows: {
    total: number;
    byStatus: Record<Status, number>;
    /** The sidecar's error_code, for the rows in error or skipped. */
    byErrorCode: Record<string, number>;
    /** Of those, the skipped rows' codes (no_key, complete, credit_reserve, ...): reasons, not errors. */
    bySkipReason: Record<string, number>;
    /**
     * The rows written with a stored answer older than --max-age that the run could not refresh
     * (`lead_billing` `stale`, or a --with lookup's): how many, how many because the refresh failed
     * (errors), and the code of what stopped the refresh → rows. Under `byStatus` as their answer's.
     */
    stale: { rows: number; errors: number; byReason: Record<string, number> };
  };
  /** found ÷ looked up, where looked up = rows with an answer (found or not_found). */
  matchRate: {
    lookedUp: number;
    found: number;
    rate: number | null;
    /** Per lookup kind, in the order tried (a waterfall's); a row counts under each kind that answered it. */
    byKind: Array<{ kind: string; column: string; lookedUp: number; found: number; rate: number | null }>;
  };
  /** Per added column an answer fills: the share of found rows where it is not empty. */
  fillRates: { foundRows: number; columns: Array<{ column: string; filled: number; rate: number | null }> };
  /**
   * What changed since the earlier answers: of the rows whose key was looked up again (`compared`:
   * older than --max-age, or --refresh), the rows that changed, and per field (`status`, or a
   * column's name as --fields names it) how many rows it changed in, most first.
   */
  changes: { compared: number; rows: number; fields: Array<{ field: string; rows: number }> };
  /** --fill: per input column, the fields that fill it and the cells filled. Empty without --fill. */
  filledCells: Array<{ column: string; fields: string[]; filled: number }>;
  /** Per --with operation, of the rows whose own lookup answered: statuses and billing. */
  with: Array<{ operation: string; byStatus: Record<Status, number>; billing: Record<BillingWord, number> }>;
  /** lead_billing of the rows. */
  billing: Record<BillingWord, number>;
  /** `exact` is false when the last balance could not be read: `after` and `spent` are estimates. */
  credits: { before: number; after: number; spent: number; reserve: number; exact: boolean };
  /**
   * Every --budget (none: empty), at the end: `spent` in its UTC day or month (`period`) by every
   * run on the store or Redis, this run's own for a budget of the run (`per` 'run', `period` null);
   * `stopped` on the one that stopped the run, and when its period starts again.
   */
  budgets: Array<{
    budget: string;
    per: 'run' | 'day' | 'month';
    credits: number;
    spent: number;
    left: number;
    period: string | null;
    stopped: boolean;
    resetsAt: string | null;
  }>;
  requests: { total: number; retries: number; rateLimited: number; apiUnavailableMs: number };
  rate: {
    /** The server's rate window (60 000 in production: per minute). */
    windowMs: number;
    /** The account's limit, requests per window; `used` is the run's own (below it with --rpm). */
    limit: number;
    used: number;
    /** Lookup requests per bucket of `bucketMs` (one window; more for a run of very many windows), from the start. */
    bucketMs: number;
    /** `spanMs`: how long of the bucket requests were sent (less than a bucket at the run's start and end). */
    perWindow: Array<{ startMs: number; requests: number; spanMs: number }>;
    /** The most requests in one bucket, as requests per window, over the time of it requests were sent. */
    peak: number;
  };
}
