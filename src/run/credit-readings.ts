// Readings of /account/credits during a run: one at a time, through the rate gate like every
// request, now and then while requests are made (to correct the estimate the reserve guard keeps),
// when the guard wants to confirm the reserve is reached, and once at the end (what the run spent).
import type { Credits } from '../api/types.js';
import type { CreditAccount } from '../lookup/credits.js';
import type { RunMetrics } from './metrics.js';

export class CreditReadings {
  /**
   * One reading through the request path's retry and rate gate (prepare.ts): its 429s are counted
   * and pause the run, and a refused reading is asked once more after the pause, so the last one of
   * a run that used its whole window still makes "credits after" exact.
   */
  readonly #read: () => Promise<Credits>;
  readonly #credits: CreditAccount;
  readonly #metrics: RunMetrics;
  #reading: Promise<void> | undefined;
  #lastAt = Date.now();
  #requestsAtLast = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(read: () => Promise<Credits>, credits: CreditAccount, metrics: RunMetrics) {
    this.#read = read;
    this.#credits = credits;
    this.#metrics = metrics;
  }

  /** A fresh balance, single-flight. */
  refresh(): Promise<void> {
    this.#reading ??= this.#read()
      .then(async (fresh) => {
        await this.#credits.reading(fresh.total_remaining_credits);
        this.#lastAt = Date.now();
        this.#requestsAtLast = this.#metrics.requests;
      })
      .finally(() => {
        this.#reading = undefined;
      });
    return this.#reading;
  }

  /** Re-reads the balance every `everyMs` while requests are being made. */
  startPeriodic(everyMs: number): void {
    this.#timer = setInterval(() => {
      if (this.#metrics.requests > this.#requestsAtLast && Date.now() - this.#lastAt >= everyMs) this.refresh().catch(() => {});
    }, Math.min(everyMs, 5_000));
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }
}
