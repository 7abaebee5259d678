// Whether, and why, a run stops looking up: the one object every part of a run asks, instead of
// each keeping its own flag. The reasons, and what each does (docs/cli-contract.md, exit statuses):
// - interrupt (SIGINT/SIGTERM, the caller's AbortSignal): no new request; requests in flight get a
//   drain time; the rows not looked up are `skipped`/`interrupted`; exit 130. A second interrupt
//   ends the drain at once.
// - unauthorized (401) and forbidden (403/1008, 415: the token may not use the operation): as an
//   interrupt, then the run fails (exit 1) once what was paid for is stored.
// - redis (the coordinator lost Redis): queued requests are dropped; the rows not looked up are
//   `error`/`redis_unavailable`.
// - credits (the reserve was reached, or 402): no new paid request; requests in flight finish,
//   answers the store knows are still written; the rows not looked up are `skipped`/`credit_reserve`.
// - budget (the next request could spend past --budget): as credits; `skipped`/`budget`; exit 3.
// - daily_limit (codes 1017/1032): no new request and no retry: nothing can pass before the next
//   day; the rows not looked up are `skipped`/`daily_limit`; exit 3.
// - max_errors (--max-errors): no new request; those in flight finish; `skipped`/`max_errors`.
// - api_unavailable (the API stayed down past --patience): no new request; the rows not looked up
//   are `skipped`/`api_unavailable`; exit 2.
// - failed (the store or an output could not be written: a full disk, a damaged store): as an
//   interrupt, so that the answers in flight still reach the store where it has room, then the run
//   fails (exit 1) and leaves no output behind.
import { setMaxListeners } from 'node:events';
import type { LeadEnrichError } from '../api/errors.js';
import { API_UNAVAILABLE, BUDGET, DAILY_LIMIT, INTERRUPTED, MAX_ERRORS, RESERVE, type Unanswered } from '../lookup/outcome.js';
import type { StopControl, StoppedBy, StopReason } from '../lookup/stop-control.js';

export type { StoppedBy, StopReason } from '../lookup/stop-control.js';
export { API_UNAVAILABLE, BUDGET, DAILY_LIMIT, INTERRUPTED, MAX_ERRORS, RESERVE } from '../lookup/outcome.js';

/** Reasons after which no queued request may start (the gate drops its queue). */
const DROPS_QUEUE: ReadonlySet<StopReason> = new Set(['interrupt', 'unauthorized', 'forbidden', 'redis', 'daily_limit', 'max_errors', 'api_unavailable', 'failed']);
/** Reasons after which requests in flight give up their retries and rows in flight are drained. */
const HALTS: ReadonlySet<StopReason> = new Set(['interrupt', 'unauthorized', 'forbidden', 'failed']);

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
    if (DROPS_QUEUE.has(reason)) this.#noMoreRequests.abort();
    if (HALTS.has(reason)) this.#halt.abort();
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
   * lost first (the run cannot say which key another worker took), then a halt, then the limits.
   */
  refusal(): Unanswered | undefined {
    if (this.#reasons.size === 0) return undefined;
    const lost = this.redisLost;
    if (lost) return { kind: 'error', code: lost.code, message: lost.message, billing: 'none' };
    if (this.halted) return INTERRUPTED;
    if (this.#reasons.has('daily_limit')) return DAILY_LIMIT;
    if (this.#reasons.has('max_errors')) return MAX_ERRORS;
    if (this.#reasons.has('api_unavailable')) return API_UNAVAILABLE;
    if (this.#reasons.has('credits')) return this.turnAway('credits');
    if (this.#reasons.has('budget')) return this.turnAway('budget');
    return undefined;
  }

  turnAway(reason: 'credits' | 'budget'): Unanswered {
    this.#turnedAway[reason] += 1;
    return reason === 'budget' ? BUDGET : RESERVE;
  }

  /**
   * Why lookups stopped early, the one answer the summary and the exit status read: Redis lost,
   * an interrupt, --max-errors, or the credits, when they turned at least one row away (a run at
   * the reserve whose rows the store all answers did not stop early).
   */
  get stoppedBy(): StoppedBy | undefined {
    if (this.redisLost) return 'redis';
    if (this.#reasons.has('interrupt')) return 'interrupt';
    if (this.#reasons.has('daily_limit')) return 'daily_limit';
    if (this.#reasons.has('max_errors')) return 'max_errors';
    if (this.#reasons.has('api_unavailable')) return 'api_unavailable';
    if (this.#turnedAway.credits > 0) return 'credits';
    if (this.#turnedAway.budget > 0) return 'budget';
    return undefined;
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
