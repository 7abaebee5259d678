// How many requests the gate lets be in flight: Little's law (in flight = arrival rate × time in
// system) on the measured latency, doubled for its spread, within --concurrency. Pure: fed the
// latencies of finished requests, it says when the concurrency should change.
import { DEFAULTS } from '../../options/defaults.js';

export interface ConcurrencyModelOptions {
  rpm: number;
  windowMs: number;
  /** --concurrency: an upper bound the user set. */
  maxConcurrency: number | undefined;
  /** A first measure of the latency (the start-up account call), used until requests measure it. */
  latencyHintMs: number | undefined;
}

export class ConcurrencyModel {
  readonly #perMs: number;
  readonly #cap: number;
  readonly #windowMs: number;
  #latencyMs = DEFAULTS.latencyGuessMs;
  /** A high estimate of the latency: follows a slower answer at once, a faster one slowly. */
  #latencyHighMs: number;
  #completions = 0;
  #concurrency: number;

  constructor(options: ConcurrencyModelOptions) {
    this.#perMs = options.rpm / options.windowMs;
    this.#windowMs = options.windowMs;
    this.#cap = options.maxConcurrency ?? DEFAULTS.maxAutoConcurrency;
    this.#latencyHighMs = Math.max(0, Math.min(options.latencyHintMs ?? 0, options.windowMs / 10));
    this.#concurrency = this.#for(this.#latencyMs);
  }

  get concurrency(): number {
    return this.#concurrency;
  }

  /** The high latency estimate, for the cluster's edge arithmetic. */
  get latencyHighMs(): number {
    return this.#latencyHighMs;
  }

  /** A request took `latencyMs`. Returns the new concurrency when it changed (checked every 16 answers). */
  observe(latencyMs: number): number | undefined {
    this.#latencyMs = this.#latencyMs * 0.9 + latencyMs * 0.1;
    // Capped at a tenth of the window: a request that hung until its timeout says nothing about
    // the others, and must not hold back most of a window.
    const capped = Math.min(latencyMs, this.#windowMs / 10);
    this.#latencyHighMs = capped >= this.#latencyHighMs ? capped : this.#latencyHighMs * 0.98 + capped * 0.02;
    this.#completions += 1;
    if (this.#completions % 16 !== 0) return undefined;
    const next = this.#for(this.#latencyMs);
    if (next === this.#concurrency) return undefined;
    this.#concurrency = next;
    return next;
  }

  #for(latencyMs: number): number {
    const wanted = Math.ceil(this.#perMs * latencyMs * 2) + 2;
    return Math.max(1, Math.min(this.#cap, wanted));
  }
}
