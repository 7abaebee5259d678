// How many requests the gate lets be in flight: Little's law (in flight = arrival rate × time in
// system) on the measured latency, doubled for its spread, within --concurrency. And no more than
// the process can use: while its event loop is saturated (a fast server), requests in
// flight beyond what it can process only wait in its queues holding memory (at 10 M RPM on
// loopback 16 in flight ran as fast as 256, at 160 MB peak RSS instead of 200 MB: bench/analysis.md).
// Fed the latencies of finished requests (and, when given, how busy the event loop was), it says
// when the concurrency should change.
import { performance } from 'node:perf_hooks';
import { DEFAULTS } from '../../options/defaults.js';

/** Above this share of busy event loop the process is saturated: halve the concurrency. */
const SATURATED = 0.9;
/** Below it there is room to spare: let the concurrency grow back by a quarter. */
const ROOM = 0.6;
/** The process's own limit never goes below this (nor above what the rate needs). */
const MIN_BUSY_LIMIT = 16;

export interface ConcurrencyModelOptions {
  rpm: number;
  windowMs: number;
  /** --concurrency: an upper bound the user set. */
  maxConcurrency: number | undefined;
  /** A first measure of the latency (the start-up account call), used until requests measure it. */
  latencyHintMs: number | undefined;
  /** The share (0–1) of the time since the last call the event loop was busy (eventLoopBusy()); none: not limited. */
  busy?: (() => number) | undefined;
}

/** The event loop's utilization since the previous call (perf_hooks), for ConcurrencyModel's `busy`. */
export function eventLoopBusy(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    return utilization;
  };
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
  readonly #busy: (() => number) | undefined;
  /** What the process itself can use, from how busy its event loop is (Infinity: not limited). */
  #busyLimit = Infinity;

  constructor(options: ConcurrencyModelOptions) {
    this.#perMs = options.rpm / options.windowMs;
    this.#windowMs = options.windowMs;
    this.#cap = options.maxConcurrency ?? DEFAULTS.maxAutoConcurrency;
    this.#latencyHighMs = Math.max(0, Math.min(options.latencyHintMs ?? 0, options.windowMs / 10));
    this.#busy = options.busy;
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
    if (this.#busy) this.#followBusy(this.#busy());
    const next = Math.max(1, Math.min(this.#for(this.#latencyMs), this.#busyLimit));
    if (next === this.#concurrency) return undefined;
    this.#concurrency = next;
    return next;
  }

  /** Saturated: half the current concurrency (not below MIN_BUSY_LIMIT); room to spare: a quarter more, up to no limit. */
  #followBusy(busy: number): void {
    if (busy > SATURATED) this.#busyLimit = Math.max(MIN_BUSY_LIMIT, Math.floor(this.#concurrency / 2));
    else if (busy < ROOM && this.#busyLimit !== Infinity) {
      this.#busyLimit = Math.ceil(this.#busyLimit * 1.25);
      if (this.#busyLimit >= this.#cap) this.#busyLimit = Infinity;
    }
  }

  #for(latencyMs: number): number {
    const wanted = Math.ceil(this.#perMs * latencyMs * 2) + 2;
    return Math.max(1, Math.min(this.#cap, wanted));
  }
}
