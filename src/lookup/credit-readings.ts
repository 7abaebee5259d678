// Readings of /account/credits during a run: one at a time, through the request path like every
// call (paced by the gate, a 429 counted and waited out), now and then while lookups are made (to
// correct the estimate the reserve guard keeps), when the guard wants to confirm the reserve is
// reached, and once at the end (what the run spent). Owned by the RequestPath.
import type { Credits } from '../api/types.js';
import type { CreditAccount } from './credits.js';

export interface CreditReadingsOptions {
  /** One reading (RequestPath: gated, asked once more after a 429). */
  read(): Promise<Credits>;
  credits: CreditAccount;
  /** Lookups sent so far: a periodic reading is taken only when some were sent since the last. */
  lookupsSent(): number;
  now(): number;
}

export class CreditReadings {
  readonly #options: CreditReadingsOptions;
  #reading: Promise<void> | undefined;
  #lastAt: number;
  #lookupsAtLast = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: CreditReadingsOptions) {
    this.#options = options;
    this.#lastAt = options.now();
  }

  /** A fresh balance, single-flight. */
  refresh(): Promise<void> {
    const { read, credits, lookupsSent, now } = this.#options;
    this.#reading ??= read()
      .then(async (fresh) => {
        await credits.reading(fresh.total_remaining_credits);
        this.#lastAt = now();
        this.#lookupsAtLast = lookupsSent();
      })
      .finally(() => {
        this.#reading = undefined;
      });
    return this.#reading;
  }

  /** Re-reads the balance every `everyMs` while lookups are being made. */
  startPeriodic(everyMs: number): void {
    const { lookupsSent, now } = this.#options;
    this.#timer = setInterval(
      () => {
        if (lookupsSent() > this.#lookupsAtLast && now() - this.#lastAt >= everyMs) this.refresh().catch(() => {});
      },
      Math.min(everyMs, 5_000),
    );
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }
}
