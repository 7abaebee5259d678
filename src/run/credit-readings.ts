// Readings of /account/credits during a run: one at a time, through the rate gate like every
// request, now and then while requests are made (to correct the estimate the reserve guard keeps),
// when the guard wants to confirm the reserve is reached, and once at the end (what the run spent).
import type { LeadClient } from '../api/client.js';
import type { CreditAccount } from '../lookup/credits.js';
import type { RateGate } from '../lookup/rate/rate-gate.js';
import type { RunMetrics } from './metrics.js';

export class CreditReadings {
  readonly #client: LeadClient;
  readonly #gate: RateGate;
  readonly #credits: CreditAccount;
  readonly #metrics: RunMetrics;
  #reading: Promise<void> | undefined;
  #lastAt = Date.now();
  #requestsAtLast = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(client: LeadClient, gate: RateGate, credits: CreditAccount, metrics: RunMetrics) {
    this.#client = client;
    this.#gate = gate;
    this.#credits = credits;
    this.#metrics = metrics;
  }

  /** A fresh balance, single-flight. */
  refresh(): Promise<void> {
    this.#reading ??= this.#gate
      .schedule(() => this.#client.getCredits())
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
