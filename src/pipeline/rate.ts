// The one rate limiter every request of a run goes through (lookups, MX, Whois and the account
// re-reads alike), built on Bottleneck:
// - `minTime` paces requests evenly across the window, so no burst lands at a window edge;
// - the reservoir holds what the server's current window still allows. Bottleneck's own refresh
//   is NOT used: its clock starts when the limiter is made, not at the server's reset (#153),
//   and `updateSettings()` stops it for good (#185). Our timer refills at the server's
//   `next_limit_reset`, then every window;
// - a 429 empties the reservoir until the server's `retryAt` (a pause for the whole run);
// - `maxConcurrent` follows Little's law: rate × measured latency, with headroom.
import Bottleneck from 'bottleneck';
import type { RateLimitFacts } from '../api/limits.js';

export interface RateGateOptions {
  /** Requests per window this run may use. */
  rpm: number;
  /** Length of the server's rate window (behaviour notes: 60 s). Tests shorten it. */
  windowMs?: number;
  /** What the server said about its current window at start. */
  facts?: Pick<RateLimitFacts, 'remaining' | 'resetAt'>;
  /** Upper bound on requests in flight (--concurrency). */
  maxConcurrency?: number;
  /**
   * Refills wait this long after the window edge, and starts made within this long before it are
   * counted against the new window: a request sent just before the edge may arrive just after it.
   */
  edgeMarginMs?: number;
  /** Asked for a fresh reset time after a 429 that carried no usable hint. */
  resync?: () => Promise<Date | undefined>;
  now?: () => number;
}

export interface RateGateStats {
  started: number;
  pauses: number;
  concurrency: number;
}

const DEFAULT_LATENCY_GUESS_MS = 1000;

export class RateGate {
  readonly rpm: number;
  readonly windowMs: number;
  readonly #limiter: Bottleneck;
  readonly #margin: number;
  readonly #maxConcurrency: number;
  readonly #resync: (() => Promise<Date | undefined>) | undefined;
  readonly #now: () => number;
  /** Start times of recent requests, oldest first; pruned at each refill. */
  #recentStarts: number[] = [];
  #windowEnd: number;
  #timer: NodeJS.Timeout | undefined;
  #pausedUntil = 0;
  #latencyMs = DEFAULT_LATENCY_GUESS_MS;
  #completions = 0;
  #stopped = false;
  readonly stats: RateGateStats = { started: 0, pauses: 0, concurrency: 0 };

  constructor(options: RateGateOptions) {
    if (!(Number.isInteger(options.rpm) && options.rpm > 0)) throw new RangeError(`rpm must be a positive integer, got ${options.rpm}`);
    this.rpm = options.rpm;
    this.windowMs = options.windowMs ?? 60_000;
    this.#now = options.now ?? Date.now;
    this.#margin = Math.min(options.edgeMarginMs ?? 250, this.windowMs / 20);
    this.#maxConcurrency = options.maxConcurrency ?? Number.POSITIVE_INFINITY;
    this.#resync = options.resync;
    const now = this.#now();
    const resetAt = options.facts?.resetAt?.getTime();
    // A reset time in the past or absurdly far ahead (clock skew) is replaced by one window from now.
    this.#windowEnd = resetAt !== undefined && resetAt > now && resetAt <= now + this.windowMs + 1000 ? resetAt : now + this.windowMs;
    const initial = Math.min(this.rpm, options.facts?.remaining ?? this.rpm);
    this.stats.concurrency = this.#concurrencyFor(this.#latencyMs);
    this.#limiter = new Bottleneck({
      reservoir: Math.max(0, initial),
      minTime: this.windowMs / this.rpm,
      maxConcurrent: this.stats.concurrency,
    });
    // Bottleneck reports job errors here too; ours are handled where schedule() is awaited.
    this.#limiter.on('error', () => {});
    this.#armRefill(this.#windowEnd + this.#margin);
  }

  /** Runs `task` when the rate allows. Rejects with GateStoppedError once stop() was called. */
  async schedule<T>(task: () => Promise<T>): Promise<T> {
    if (this.#stopped) throw new GateStoppedError();
    try {
      return await this.#limiter.schedule(() => {
        const started = this.#now();
        this.#recentStarts.push(started);
        this.stats.started += 1;
        return task().finally(() => this.#observe(this.#now() - started));
      });
    } catch (error) {
      // A job dropped by stop() rejects with Bottleneck's own error: report it as ours.
      if (this.#stopped && error instanceof Bottleneck.BottleneckError) throw new GateStoppedError();
      throw error;
    }
  }

  /**
   * The server said "too many": hold every request until `until` (or a fresh reset time), then
   * start again with what the new window allows. Many 429s at once extend one pause.
   */
  pause(until: Date | undefined): void {
    if (this.#stopped) return;
    const now = this.#now();
    this.stats.pauses += 1;
    this.#limiter.updateSettings({ reservoir: 0 });
    if (until && until.getTime() > now) {
      this.#pauseUntil(until.getTime());
      return;
    }
    // No usable hint: wait at least to our own window edge, and ask the server when it resets.
    this.#pauseUntil(Math.max(this.#windowEnd, now + Math.min(this.windowMs, 1000)));
    void this.#resync?.().then(
      (resetAt) => {
        if (resetAt && resetAt.getTime() > this.#now()) this.#pauseUntil(resetAt.getTime());
      },
      () => {},
    );
  }

  #pauseUntil(until: number): void {
    if (until <= this.#pausedUntil) return;
    this.#pausedUntil = until;
    this.#windowEnd = until;
    this.#armRefill(until + this.#margin);
  }

  #armRefill(at: number): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = setTimeout(() => this.#refill(), Math.max(0, at - this.#now()));
    this.#timer.unref();
  }

  #refill(): void {
    if (this.#stopped) return;
    const now = this.#now();
    const edge = this.#windowEnd;
    // Starts since shortly before the edge may be counted by the server in the new window.
    this.#recentStarts = this.#recentStarts.filter((t) => t >= edge - this.#margin);
    const allowed = Math.max(0, this.rpm - this.#recentStarts.length);
    while (this.#windowEnd <= now) this.#windowEnd += this.windowMs;
    this.#limiter.updateSettings({ reservoir: allowed });
    this.#armRefill(this.#windowEnd + this.#margin);
  }

  #concurrencyFor(latencyMs: number): number {
    const perMs = this.rpm / this.windowMs;
    // Little's law: in flight = arrival rate × time in system; doubled for latency spread.
    const wanted = Math.ceil(perMs * latencyMs * 2) + 2;
    return Math.max(1, Math.min(this.#maxConcurrency, wanted));
  }

  #observe(latencyMs: number): void {
    this.#latencyMs = this.#latencyMs * 0.9 + latencyMs * 0.1;
    this.#completions += 1;
    if (this.#completions % 16 !== 0 || this.#stopped) return;
    const next = this.#concurrencyFor(this.#latencyMs);
    if (next !== this.stats.concurrency) {
      this.stats.concurrency = next;
      this.#limiter.updateSettings({ maxConcurrent: next });
    }
  }

  /** Requests queued or running. */
  get pending(): number {
    const counts = this.#limiter.counts();
    return (counts.RECEIVED ?? 0) + (counts.QUEUED ?? 0) + (counts.RUNNING ?? 0) + (counts.EXECUTING ?? 0);
  }

  /** Drops queued jobs (they reject with GateStoppedError); running ones finish. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#limiter.stop({ dropWaitingJobs: true });
  }
}

export class GateStoppedError extends Error {
  constructor() {
    super('the run is stopping; request not started');
    this.name = 'GateStoppedError';
  }
}
