// The one way a request travels, for every call of a run (lookups, the start-up account reads,
// the balance re-reads, the gate's resync) and every call of a LeadClient. Outermost first:
//
//   reserve check → retry → circuit breaker → rate gate (its 429 pause) → credit reservation → one attempt
//
// The retry sits outside the gate so that each attempt waits for its own slot in the rate window;
// the credit reservation inside it so that a call waiting for its slot reserves nothing; the
// reserve check outside the retries because it asks for a balance reading itself; the breaker
// (lookups, and a run's first account reads: callAtStart) inside the retries, so that a lookup
// held while the API is down uses none of them,
// and outside the gate, so that a held lookup takes no place in the window. Before a gate
// is open (the reads that size it) or without one (a LeadClient with no `rpm`), a 429 makes the
// call itself wait for the server's window (with-pause.ts) instead of pausing a gate.
//
// This file is the only one that composes the parts (with-*.ts, one job each), once, when the path
// is made: the gate and the credit reserve are slots filled later (openGate, guardCredits) and read
// at each call, so the order a caller fills them in does not change the path. It is the only owner
// of the counts the parts keep.
import type { ApiResponse } from '../../api/transport.js';
import { RateLimitedError } from '../../api/errors.js';
import { isUnknownHost } from '../../api/network-errors.js';
import type { Credits, Operation } from '../../api/types.js';
import type { OperationInput } from '../../api/client.js';
import { parseServiceLimits } from '../../api/limits.js';
import { systemClock, type Clock } from '../../core/clock.js';
import type { BillableOperation } from '../../core/kinds.js';
import { CircuitBreaker, type BreakerSettings } from './breaker.js';
import { CreditReadings } from '../credit-readings.js';
import type { CreditAccount } from '../credits.js';
import type { Budgets } from '../budget.js';
import { GateStoppedError, RateGate, type RateGateOptions } from '../rate/rate-gate.js';
import { lookupCall, RequestCounts, type ApiCall, type PathReading, type Send } from './request.js';
import type { RetryPolicy } from './retry-policy.js';
import type { RequestTimeline } from './request-timeline.js';
import { withBreaker, withBreakerCheck } from './with-breaker.js';
import { withCredits, withReserveCheck } from './with-credits.js';
import { withGate } from './with-gate.js';
import { withPause } from './with-pause.js';
import { withRetry } from './with-retry.js';

/** One attempt at a call: the API client's single, ungated request. */
export type Attempt = (op: Operation, input: OperationInput[Operation]) => Promise<ApiResponse<unknown>>;

/** Resolves in the check phase of this turn of the event loop, after its I/O callbacks and their promises. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export interface RequestPathSettings {
  /** Transient failures of a call (lookups, account reads, a LeadClient's calls). */
  retry: RetryPolicy;
  /** The server's rate window (docs/api-behaviour-notes.md: 60 s): the longest a 429 without a gate waits. */
  windowMs: number;
  /** Aborted once no call may start or be retried any more (the gate's queue is dropped). */
  noMoreRequests: AbortSignal;
  /** Aborted once the run halts (interrupt, 401): a grant that comes after it is not sent. */
  halt: AbortSignal;
  /** Aborted once no lookup may start (any stop of a run): the calls waiting for the gate then are dropped, later ones still go. */
  noMoreLookups?: AbortSignal | undefined;
  /** Lookups through a circuit breaker (a run's; a LeadClient's calls are not held). */
  breaker?: Omit<BreakerSettings, 'clock'> | undefined;
  /** Lookup requests per rate window, for the run's report. */
  timeline?: RequestTimeline | undefined;
  /**
   * Called before each lookup request goes out: the run keeps the answers received so far before
   * it spends more (the store's commit). When it returns a promise the request waits for it; a
   * rejection fails the call, which is then not sent.
   */
  beforeSend?: (() => Promise<void> | undefined) | undefined;
  clock?: Clock;
}

/** The credit reserve on the path: the run's (a LeadClient has none). */
export interface CreditGuarding {
  credits: CreditAccount;
  /** The reserve was reached (confirmed by a fresh reading): no more lookups. */
  onReserveReached(): void;
  /** Balance re-reads while lookups are made. */
  refreshEveryMs: number;
  /** How a balance re-read is retried (the path's own policy by default). */
  readingRetry?: RetryPolicy | undefined;
  /** --budget and the ledger: every charge is recorded there, and no call passes a budget. */
  budgets?: Budgets | undefined;
}

export class RequestPath {
  readonly #settings: RequestPathSettings;
  readonly #clock: Clock;
  readonly #counts = new RequestCounts();
  /** One attempt, refused once no call may start. */
  readonly #attempt: Send;
  readonly #breaker: CircuitBreaker | undefined;
  /** Calls down the path, one per retry policy (the path's own, the balance re-reads'). */
  readonly #calls = new Map<RetryPolicy, Send>();
  /** The first account reads' way: the path's retries around the breaker (callAtStart). */
  #atStart: Send | undefined;
  /** The whole lookup path, composed once: its slots below are read at each call, so the order they are filled in does not matter. */
  readonly #lookup: Send;
  /** Slot: the rate gate, once open (before it, a 429 pauses its own call). */
  #gate: RateGate | undefined;
  /** Slots: the credit reserve's two steps (the reservation inside the gate, the reserve check outside the retries), once guarded. */
  #reserving: Send | undefined;
  #checkingReserve: Send | undefined;
  #readings: CreditReadings | undefined;
  /** The steps the reserve's slots wrap: the counted send, and the retried lookup. */
  readonly #counted: Send;
  readonly #retried: Send;
  /** Lookup attempts sent and not answered yet; when the first was sent and the last answered. */
  #inFlight = 0;
  #firstSentAt: number | undefined;
  #lastSettledAt: number | undefined;
  /** See #noteAnswerThisTurn: a send then waits for the turn's end before it asks `beforeSend`. */
  #answerThisTurn = false;

  constructor(attempt: Attempt, settings: RequestPathSettings) {
    this.#settings = settings;
    this.#clock = settings.clock ?? systemClock;
    const { noMoreRequests } = settings;
    this.#attempt = (call) => (noMoreRequests.aborted ? Promise.reject(new GateStoppedError()) : attempt(call.op, call.input));
    this.#breaker = settings.breaker && new CircuitBreaker({ ...settings.breaker, clock: this.#clock });
    this.#counted = this.#countedSend();
    this.#retried = this.#retriedLookup(this.#counted);
    this.#lookup = (call) => (this.#checkingReserve ?? this.#retried)(call);
  }

  /** Whether the API is up, and how long it was down: the run's, when it has one. */
  get breaker(): CircuitBreaker | undefined {
    return this.#breaker;
  }

  get windowMs(): number {
    return this.#settings.windowMs;
  }

  /** What the path has counted so far. */
  get counts(): Readonly<Pick<RequestCounts, 'requests' | 'retries' | 'rateLimited'>> {
    return this.#counts;
  }

  /** Lookup attempts sent and not answered yet: what a run is spending credits on before its rows are written. */
  get lookupsInFlight(): number {
    return this.#inFlight;
  }

  /**
   * How long the run has been looking up: from its first lookup sent to the last answered (to now
   * while some are in flight); 0 before the first. A rate over this time is of the lookups alone,
   * not of the start-up or of rows the store answered.
   */
  lookupMs(): number {
    if (this.#firstSentAt === undefined) return 0;
    const end = this.#inFlight > 0 ? this.#clock.now() : (this.#lastSettledAt ?? this.#clock.now());
    return Math.max(0, end - this.#firstSentAt);
  }

  /** The counts, the time spent looking up, the gate's and the breaker's facts, at this moment. */
  reading(): PathReading {
    const gate = this.#gate;
    const { requests, retries, rateLimited } = this.#counts;
    return {
      requests,
      retries,
      rateLimited,
      lookupsInFlight: this.#inFlight,
      lookupMs: this.lookupMs(),
      apiUnavailableSince: this.#breaker?.unavailableSince,
      apiUnavailableMs: this.#breaker?.downMs ?? 0,
      apiFailure: this.#breaker?.failure,
      rateLimitedUntil: gate?.pausedUntil,
      windowMs: gate?.windowMs ?? this.#settings.windowMs,
      concurrency: gate?.stats.concurrency ?? 0,
    };
  }

  /** The gate, once open: its concurrency and stats are the run's. */
  get gate(): RateGate | undefined {
    return this.#gate;
  }

  /** The balance re-reads of a run that guards the reserve. */
  get readings(): CreditReadings | undefined {
    return this.#readings;
  }

  /**
   * Any call, retried as `policy` says (the path's own by default), paced once a gate is open. A
   * host that does not exist is not retried: an address to fix (docs/cli-contract.md, "Every night,
   * unattended"), said at once by `account`, a dry run, a LeadClient's call.
   */
  call<Op extends Operation>(op: Op, input: OperationInput[Op], policy: RetryPolicy = this.#settings.retry): Promise<ApiResponse<unknown>> {
    let send = this.#calls.get(policy);
    if (!send) {
      send = withRetry(this.#pace(this.#attempt, policy), policy, this.#counts, this.#settings.noMoreRequests, isUnknownHost);
      this.#calls.set(policy, send);
    }
    return send({ op, input } as ApiCall);
  }

  /**
   * A call the run makes before anything else (its first account reads), as call() but through the
   * breaker: an API down then is waited for as one down mid-run (the read is the probe), and after
   * the patience the call rejects with ApiUnavailableError. A host that does not exist is no
   * outage then, nor worth a retry, as for call(). Mid-run, a lookup that meets it meets a DNS
   * that failed for a while (the host answered the start): retried, and an outage when it lasts.
   * Without a breaker (a LeadClient's path), call().
   */
  callAtStart<Op extends Operation>(op: Op, input: OperationInput[Op]): Promise<ApiResponse<unknown>> {
    const { retry, noMoreRequests } = this.#settings;
    if (!this.#breaker) return this.call(op, input);
    this.#atStart ??= withRetry(
      withBreaker(this.#pace(this.#attempt, retry), this.#breaker, noMoreRequests, true),
      retry,
      this.#counts,
      noMoreRequests,
      isUnknownHost,
    );
    return this.#atStart({ op, input } as ApiCall);
  }

  /** A lookup of `key`: the whole path, the credit reserve included once it is guarded; `soon`: it finishes a row already begun. */
  async lookup(op: BillableOperation, key: string, soon = false): Promise<unknown> {
    return (await this.#lookup(lookupCall(op, key, soon))).data;
  }

  /**
   * One attempt, outside the gate and the retries, its 429 counted: the gate's question "when does
   * the window reset?" after a 429 that said nothing, asked while the gate holds everything else.
   */
  async probe<Op extends Operation>(op: Op, input: OperationInput[Op]): Promise<ApiResponse<unknown>> {
    try {
      return await this.#attempt({ op, input } as ApiCall);
    } catch (error) {
      if (error instanceof RateLimitedError) this.#counts.limited();
      throw error;
    }
  }

  /** Fills the gate's slot: every later call is paced through it; its queue is dropped when no call may start any more. */
  openGate(options: Omit<RateGateOptions, 'resync'>): RateGate {
    const gate = new RateGate({ ...options, resync: async () => parseServiceLimits((await this.probe('limits', {})).data as never).resetAt });
    this.#gate = gate;
    const { noMoreRequests, noMoreLookups } = this.#settings;
    if (noMoreRequests.aborted) void gate.stop();
    else noMoreRequests.addEventListener('abort', () => void gate.stop(), { once: true });
    if (noMoreLookups?.aborted) gate.dropWaiting();
    else noMoreLookups?.addEventListener('abort', () => gate.dropWaiting(), { once: true });
    return gate;
  }

  /** Fills the credit reserve's slots for every later lookup, and keeps the balance fresh while they are made. */
  guardCredits(guarding: CreditGuarding): CreditReadings {
    const readingRetry = guarding.readingRetry ?? this.#settings.retry;
    const readings = new CreditReadings({
      read: async () => (await this.call('credits', {}, readingRetry)).data as Credits,
      credits: guarding.credits,
      lookupsSent: () => this.#counts.requests,
      now: () => this.#clock.now(),
    });
    this.#readings = readings;
    this.#reserving = withCredits(this.#counted, guarding.credits, guarding.budgets);
    this.#checkingReserve = withReserveCheck(this.#retried, guarding.credits, () => readings.refresh(), guarding.onReserveReached);
    readings.startPeriodic(guarding.refreshEveryMs);
    return readings;
  }

  /** Stops the balance re-reads and the gate (calls still waiting for it reject with GateStoppedError). */
  async close(): Promise<void> {
    this.#readings?.stop();
    await this.#gate?.stop();
  }

  /** The gate once it is open (its slot read at each call); before (or without) one, a 429 waits here when `policy` will send the call again. */
  #pace(next: Send, policy: RetryPolicy): Send {
    const { halt, windowMs } = this.#settings;
    const gated = withGate(next, () => this.#gate!, this.#counts, halt);
    const paused = withPause(next, { counts: this.#counts, clock: this.#clock, windowMs, signal: halt, wait: policy.retriesRateLimited });
    return (call) => (this.#gate ? gated(call) : paused(call));
  }

  /** A lookup settled in this turn of the event loop (until its check phase). */
  #noteAnswerThisTurn(): void {
    if (this.#answerThisTurn) return;
    this.#answerThisTurn = true;
    setImmediate(() => {
      this.#answerThisTurn = false;
    });
  }

  /** The lookup's last step before the attempt: counted, timed, and sent once the answers so far are kept. */
  #countedSend(): Send {
    const timeline = this.#settings.timeline;
    const sent: Send = (call) => {
      this.#counts.sent();
      timeline?.note(this.#clock.now());
      this.#inFlight += 1;
      this.#firstSentAt ??= this.#clock.now();
      const settled = () => {
        this.#inFlight -= 1;
        this.#lastSettledAt = this.#clock.now();
        this.#noteAnswerThisTurn();
      };
      const attempt = this.#attempt(call);
      attempt.then(settled, settled);
      return attempt;
    };
    const before = this.#settings.beforeSend;
    if (!before) return sent;
    return (call) => {
      // An answer that came in this turn may not be kept yet (the caller keeps it a few promise
      // hops up the chain, after this slot was freed): ask what to wait for once the turn ends.
      const ready = this.#answerThisTurn ? nextTurn().then(before) : before();
      return ready ? ready.then(() => sent(call)) : sent(call);
    };
  }

  /** The lookup from the retry down: each step in place, the reservation's slot read at each call. */
  #retriedLookup(counted: Send): Send {
    const { retry, noMoreRequests, noMoreLookups } = this.#settings;
    const reserved: Send = (call) => (this.#reserving ?? counted)(call);
    const paced = this.#pace(this.#breaker ? withBreakerCheck(reserved, this.#breaker) : reserved, retry);
    // A lookup held while the API is down goes when the run stops looking up, unsent (with-breaker.ts).
    const released = noMoreLookups ? AbortSignal.any([noMoreRequests, noMoreLookups]) : noMoreRequests;
    const held = this.#breaker ? withBreaker(paced, this.#breaker, noMoreRequests, false, released) : paced;
    return withRetry(held, retry, this.#counts, noMoreRequests);
  }
}
