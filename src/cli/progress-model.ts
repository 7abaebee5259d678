// What the progress shows, from the run's snapshots (EnrichProgress): the numbers only, kept
// honest over time (a figure that jumps back or a total that lies is worse than none);
// progress-line.ts lays them out. Rules:
// - the total is the reader's estimate from the input's size (never fewer than the rows seen),
//   exact once the input is read to its end; none for stdin or a gzipped file until then;
// - the percentage never goes back (an estimate that grows holds it), is below 100 until the
//   last row is written, and 100 then;
// - the ETA is the rows left at the pace of the last half minute of rows written, always a
//   duration with a unit, or nothing while it cannot be told (no total, no rows moving);
// - the rate is of rows looked up over the time spent looking up, not of rows the store answered.
import type { EnrichProgress } from '../run/enrich-options.js';

export interface ProgressFrame {
  done: number;
  /** The rows of the run, estimated unless `exact`; undefined while nothing tells. */
  total: number | undefined;
  exact: boolean;
  /** Whole percent, never less than shown before; undefined without a total. */
  percent: number | undefined;
  /** Time left (ms), undefined while it cannot be told. */
  etaMs: number | undefined;
  /** Rows looked up per second of looking up. */
  rowsPerSecond: number;
  inFlight: number;
  found: number;
  notFound: number;
  errors: number;
  skipped: number;
  credits: number;
  apiUnavailableSince: number | undefined;
  rateLimitedUntil: number | undefined;
}

/** The pace of the ETA: rows written over this long a window. */
const PACE_WINDOW_MS = 30_000;
/** Less than this much time in the window says too little about the pace. */
const MIN_PACE_SPAN_MS = 1_000;

export class ProgressModel {
  #percent = 0;
  readonly #samples: Array<{ at: number; done: number }> = [];
  readonly #now: () => number;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  frame(p: EnrichProgress): ProgressFrame {
    const now = this.#now();
    const done = p.rowsDone;
    const total = p.totalRows === undefined ? undefined : Math.max(p.totalRows, p.rowsRead, done);
    const exact = total !== undefined && (p.totalExact ?? false);
    return {
      done,
      total,
      exact,
      percent: this.#percentOf(done, total, exact),
      etaMs: this.#etaOf(now, done, total, exact),
      rowsPerSecond: rowsPerSecond(p.rowsLookedUp, p.lookupMs ?? p.elapsedMs),
      inFlight: p.lookupsInFlight ?? 0,
      found: p.found,
      notFound: p.notFound,
      errors: p.errors,
      skipped: p.skipped,
      credits: p.creditsSpent,
      apiUnavailableSince: p.apiUnavailableSince,
      rateLimitedUntil: p.rateLimitedUntil,
    };
  }

  #percentOf(done: number, total: number | undefined, exact: boolean): number | undefined {
    if (total === undefined) return undefined;
    const finished = exact && done >= total;
    // An estimate may be a little short: 100 % is for the last row written, not before.
    const percent = finished ? 100 : Math.min(99, Math.floor((100 * done) / Math.max(total, 1)));
    this.#percent = Math.max(this.#percent, percent);
    return this.#percent;
  }

  #etaOf(now: number, done: number, total: number | undefined, exact: boolean): number | undefined {
    const samples = this.#samples;
    // Until the first row is written, the time waited is the start-up's, not the pace's (a run
    // with --with writes its first row after a few answers): the pace is measured from the first row.
    if (samples.length > 0 && samples[0]!.done === done) samples.length = 0;
    samples.push({ at: now, done });
    while (samples.length > 2 && now - samples[1]!.at >= PACE_WINDOW_MS) samples.shift();
    if (total === undefined) return undefined;
    if (exact && done >= total) return 0;
    const first = samples[0]!;
    const span = now - first.at;
    const moved = done - first.done;
    if (span < MIN_PACE_SPAN_MS || moved <= 0) return undefined;
    // Whole seconds, at least one: an estimate to the millisecond only looks precise.
    return Math.max(1, Math.round((Math.max(0, total - done) * span) / moved / 1000)) * 1000;
  }
}

/** Rows per second over `ms`; below a second of looking up, over a second (a few fast answers are no rate). */
export function rowsPerSecond(rows: number, ms: number): number {
  return rows > 0 ? (rows * 1000) / Math.max(ms, 1000) : 0;
}
