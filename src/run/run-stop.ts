// Whether, and why, a run stops looking up: the one object every part of a run asks, instead of
// each keeping its own flag. What each reason does (its rows, its exit status, whether the queue
// is dropped and the run halts) is its row of lookup/stops.ts. An interrupt gives the requests in
// flight a drain time; a second interrupt ends the drain at once.
import { setMaxListeners } from 'node:events';
import type { LeadEnrichError } from '../api/errors.js';
import { BUDGET, RESERVE, stoppedRow, type Unanswered } from '../lookup/outcome.js';
import type { StopControl } from '../lookup/stop-control.js';
import { STOP_ORDER, stopOf, type StoppedBy, type StopReason } from '../lookup/stops.js';

export type { StoppedBy, StopReason } from '../lookup/stops.js';
export { API_UNAVAILABLE, BUDGET, DAILY_LIMIT, INTERRUPTED, MAX_ERRORS, RESERVE } from '../lookup/outcome.js';

/** The reasons whose stop turns a lookup away with a row of its own (credits and budget count the rows too). */
const TURNS_AWAY = STOP_ORDER.filter((reason) => reason !== 'redis' && !stopOf(reason).halts);

export class RunStop implements StopControl {
  readonly #reasons = new Set<StopReason>();
  readonly #halt = new AbortController();
  readonly #noMoreRequests = new AbortController();
  readonly #noMoreLookups = new AbortController();
  readonly #errors = new Map<StopReason, LeadEnrichError>();
  /** Rows the credit reserve turned away: only then did credits stop the run early. */
  readonly #turnedAway = { credits: 0, budget: 0 };
  #quit: (() => void) | undefined;
  readonly #listeners: Array<(reason: StopReason) => void> = [];
  #quitting = false;
  #drain: Promise<void> | undefined;

  constructor() {
    // Every waiting retry, claim and row listens to it: many at once is normal, not a leak.
    setMaxListeners(0, this.#halt.signal, this.#noMoreRequests.signal, this.#noMoreLookups.signal);
  }

  /**
   * Aborted at the first stop, whatever its reason (the reserve's and --budget's too): no lookup
   * starts any more, so those waiting for the gate are dropped at once instead of being paced out
   * only to be refused; the calls after it (the last balance reading) still go.
   */
  get lookupsSignal(): AbortSignal {
    return this.#noMoreLookups.signal;
  }

  /**
   * Aborted once no queued or retried request may be sent (every reason but credits): a retry
   * waiting for its backoff gives up at once instead of holding the run's end.
   */
  get requestsSignal(): AbortSignal {
    return this.#noMoreRequests.signal;
  }

  /** Aborted once the run halts (interrupt, 401): retries stop waiting, rows in flight drain. */
  get signal(): AbortSignal {
    return this.#halt.signal;
  }

  /** A second interrupt: wind down at once. */
  get quitting(): boolean {
    return this.#quitting;
  }

  get halted(): boolean {
    return this.#halt.signal.aborted;
  }

  get requestsStopped(): boolean {
    return this.#noMoreRequests.signal.aborted;
  }

  get lookupsStopped(): boolean {
    return this.#noMoreLookups.signal.aborted;
  }

  /** The failure that ends the run with an error once it is wound down (401, a store or output that failed). */
  get fatal(): LeadEnrichError | undefined {
    return this.#errors.get('unauthorized') ?? this.#errors.get('forbidden') ?? this.#errors.get('failed');
  }

  get apiUnavailable(): boolean {
    return this.#reasons.has('api_unavailable');
  }

  /** Why Redis was lost, with --redis. */
  get redisLost(): LeadEnrichError | undefined {
    return this.#errors.get('redis');
  }

  stop(reason: StopReason, error?: LeadEnrichError): void {
    if (reason === 'interrupt' && this.#reasons.has('interrupt')) {
      this.#quitting = true;
      this.#quit?.();
      return;
    }
    if (this.#reasons.has(reason)) return;
    this.#reasons.add(reason);
    if (error) this.#errors.set(reason, error);
    // The request path drops the gate's queue and sends nothing more when this aborts.
    if (stopOf(reason).queue === 'drop') this.#noMoreRequests.abort();
    if (stopOf(reason).halts) this.#halt.abort();
    this.#noMoreLookups.abort();
    for (const listener of this.#listeners) listener(reason);
  }

  /** Told of each reason once, as the run stops for it (the line that says so at once). */
  onStop(listener: (reason: StopReason) => void): void {
    this.#listeners.push(listener);
  }

  /** An interrupt that does not wait for the drain (the first one, if not given already, and a second). */
  quit(): void {
    this.stop('interrupt');
    this.stop('interrupt');
  }

  /**
   * What a lookup that may not start now becomes, or undefined while lookups may start. Redis
   * lost first (the run cannot say which key another worker took), then a halt, then the limits,
   * in the stops table's order.
   */
  refusal(): Unanswered | undefined {
    if (this.#reasons.size === 0) return undefined;
    const lost = this.redisLost;
    if (lost) return { kind: 'error', code: lost.code, message: lost.message, billing: 'none' };
    if (this.halted) return stoppedRow('interrupt');
    const reason = TURNS_AWAY.find((r) => this.#reasons.has(r));
    if (reason === 'credits' || reason === 'budget') return this.turnAway(reason);
    return reason === undefined ? undefined : stoppedRow(reason);
  }

  turnAway(reason: 'credits' | 'budget'): Unanswered {
    this.#turnedAway[reason] += 1;
    return reason === 'budget' ? BUDGET : RESERVE;
  }

  /**
   * Why lookups stopped early, the one answer the summary and the exit status read: the first, in
   * the stops table's order, of the reasons that have words; the credits and the budget only when
   * they turned at least one row away (a run at the reserve whose rows the store all answers did
   * not stop early).
   */
  get stoppedBy(): StoppedBy | undefined {
    return STOP_ORDER.find((reason): reason is StoppedBy => {
      if (reason === 'redis') return this.redisLost !== undefined;
      if (reason === 'credits' || reason === 'budget') return this.#turnedAway[reason] > 0;
      return 'words' in stopOf(reason) && this.#reasons.has(reason);
    });
  }

  /**
   * Resolves when rows still in flight after a halt must be given up: `drainMs` after the first
   * call, or at once on a second interrupt. Unref'd: it never keeps the process alive.
   */
  drainDeadline(drainMs: number): Promise<void> {
    this.#drain ??= new Promise<void>((resolve) => {
      if (this.#quitting) return resolve();
      const timer = setTimeout(resolve, drainMs);
      timer.unref();
      this.#quit = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    return this.#drain;
  }
}
