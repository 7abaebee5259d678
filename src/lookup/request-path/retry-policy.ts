// The one retry policy of the project (got's own retry is off, transport.ts).
// - 429: not a failure of the request: the gate pauses everyone until the server's reset
//   (with-gate.ts; without a gate, with-pause.ts waits), then the same request is sent again.
//   Bounded so a server that never lets go cannot loop forever.
// - Transient failures (5xx, resets, timeouts, truncated or unparseable bodies, "failed" at 200):
//   exponential backoff with full jitter, a bounded number of times.
// - Everything else (400, 401, 402, ...) is permanent and returned at once: retrying would waste
//   requests and, for 402, could not succeed.
import { RateLimitedError, isTransient } from '../../api/errors.js';
import { systemClock, type Clock } from '../../core/clock.js';
import { DEFAULTS } from '../../options/defaults.js';

export interface RetryPolicyOptions {
  /** Retries after the first attempt for transient failures. Defaults: options/defaults.ts. */
  retries?: number;
  /** First backoff in ms; doubles each time. Default 500. */
  baseDelayMs?: number;
  /** Longest backoff in ms. Default 30000. */
  maxDelayMs?: number;
  /** 429s tolerated for one request before it is given up as `rate_limited`. Default 20. */
  maxRateLimited?: number;
  random?: () => number;
  /** Waits the backoff. Default: real timers. */
  clock?: Clock;
}

export interface RetryHooks {
  /** Called before each backoff wait. */
  onRetry?(error: unknown, attempt: number): void;
  /** Resolves early when the run is being interrupted. */
  signal?: AbortSignal;
  /** A transient failure that no wait mends on this call's way (a host that does not exist at a run's start): thrown at once. */
  final?(error: unknown): boolean;
}

export class RetryPolicy {
  readonly retries: number;
  readonly #base: number;
  readonly #max: number;
  readonly #maxRateLimited: number;
  readonly #random: () => number;
  readonly #clock: Clock;

  constructor(options: RetryPolicyOptions = {}) {
    this.retries = options.retries ?? DEFAULTS.retries;
    this.#base = options.baseDelayMs ?? DEFAULTS.retryBaseDelayMs;
    this.#max = options.maxDelayMs ?? DEFAULTS.retryMaxDelayMs;
    this.#maxRateLimited = options.maxRateLimited ?? DEFAULTS.maxRateLimited;
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock ?? systemClock;
  }

  /** Whether a call refused with 429 is sent again (after the pause). */
  get retriesRateLimited(): boolean {
    return this.#maxRateLimited > 0;
  }

  /** Backoff before retry number `attempt` (1-based): full jitter over an exponential ceiling. */
  delayFor(attempt: number): number {
    const ceiling = Math.min(this.#max, this.#base * 2 ** (attempt - 1));
    return Math.round(ceiling / 2 + (this.#random() * ceiling) / 2);
  }

  async run<T>(attempt: () => Promise<T>, hooks: RetryHooks = {}): Promise<T> {
    let failures = 0;
    let rateLimited = 0;
    for (;;) {
      try {
        return await attempt();
      } catch (error) {
        if (hooks.signal?.aborted) throw error;
        if (error instanceof RateLimitedError) {
          rateLimited += 1;
          // Sent again at once: the part below (the rate gate, or the pause without one) held it
          // until the server's window allowed it.
          if (rateLimited > this.#maxRateLimited) throw error;
          continue;
        }
        if (!isTransient(error) || hooks.final?.(error) || failures >= this.retries) throw error;
        failures += 1;
        hooks.onRetry?.(error, failures);
        await this.#clock.sleep(this.delayFor(failures), hooks.signal);
      }
    }
  }
}
