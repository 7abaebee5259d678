// The window arithmetic of the rate gate, with no timers and no engine: where the server's
// windows begin and end, what a refill at an edge may allow, and what a 429 teaches. Every
// method takes the time it is asked at, so it is tested without a clock (test/rate-window.test.ts).
// The server counts requests in fixed windows of `windowMs` (docs/api-behaviour-notes.md, "Rate limiting")
// whose edges are its `next_limit_reset`, not our start.
import { HINT_ROUNDING_MS } from '../../api/limits.js';

export interface RateWindowOptions {
  windowMs: number;
  /** Requests per window this run may use (the rpm). */
  allowance: number;
  /** Refills wait this long after an edge; starts this close before it count in the new window. */
  marginMs: number;
  /** The server's next reset, if it said. */
  resetAt: number | undefined;
  now: number;
}

/** Starts kept at most before the list is pruned (high rates). */
const MAX_RECENT_STARTS = 4096;

export class RateWindow {
  readonly windowMs: number;
  readonly marginMs: number;
  /** Requests per window the server takes: the rpm, or less once a 429 without a hint showed it. */
  #allowance: number;
  #windowEnd: number;
  /** Start of the window whose accepted requests are being counted. */
  #windowStart = 0;
  #acceptedInWindow = 0;
  /**
   * Accepted requests answered after the edge but before its refill (which comes `marginMs`
   * later, or after a pause): the new window's count starts with them.
   */
  #acceptedAfterEdge = 0;
  /** When a 429 without a hint came; the allowance is learned at the end of its window. */
  #learnAfter: number | undefined;
  #pausedUntil = 0;
  /** Start times of recent requests, oldest first; pruned at each refill. */
  #recentStarts: number[] = [];

  constructor(options: RateWindowOptions) {
    this.windowMs = options.windowMs;
    this.marginMs = options.marginMs;
    this.#allowance = options.allowance;
    this.#windowEnd = firstEdge(options.resetAt, options.now, options.windowMs);
  }

  get windowEnd(): number {
    return this.#windowEnd;
  }

  get pausedUntil(): number {
    return this.#pausedUntil;
  }

  get allowance(): number {
    return this.#allowance;
  }

  /** A request left at `at`. */
  started(at: number): void {
    this.#recentStarts.push(at);
    // Only the starts since shortly before the next edge matter; keep the list short at high rates.
    if (this.#recentStarts.length > MAX_RECENT_STARTS) this.#recentStarts = this.#recentStarts.filter((t) => t >= at - 3 * this.marginMs);
  }

  /** A start that sent nothing after all (NotSentError): it no longer counts. */
  unstarted(at: number): void {
    const index = this.#recentStarts.lastIndexOf(at);
    if (index >= 0) this.#recentStarts.splice(index, 1);
  }

  /**
   * A request that left at `startedAt` was answered at `settledAt`: the server counted it, unless
   * it refused it (429), in the window it reached, somewhere between the two. It is counted in
   * every window that span touches: better to learn a few too many (the next refused window
   * lowers the allowance again) than too few (an allowance learned is never raised: a run that
   * learned 3 of 30 crawled), and on a busy machine a request can reach the server long after it
   * left, or be answered long after it arrived.
   */
  settled(startedAt: number, refused: boolean, settledAt: number): void {
    if (refused) return;
    if (startedAt < this.#windowEnd && settledAt >= this.#windowStart) this.#acceptedInWindow += 1;
    if (settledAt >= this.#windowEnd) this.#acceptedAfterEdge += 1;
  }

  /**
   * A 429 with no hint at all: what the server accepted in this window is the best measure of
   * what it allows (--rpm may say more than the account has). Learned at the next edge, when the
   * window's answers are all in (accepted ones may arrive after the first 429). A 429 between an
   * edge and its refill belongs to the new window: it is learned at the end of that one.
   */
  learnAtNextEdge(now: number): void {
    this.#learnAfter ??= now;
  }

  /** Where a pause with no usable hint ends: at least our own edge, and never a hot loop. */
  pauseWithoutHint(now: number): number {
    return Math.max(this.#windowEnd, now + Math.min(this.windowMs, HINT_ROUNDING_MS));
  }

  /**
   * Holds requests until `until`. False when an earlier pause already lasts longer. A hint within a
   * second after one of our edges confirms the server's windows are where we think; any other is
   * the server's own reset: its windows start there.
   */
  pauseUntil(until: number): boolean {
    if (until <= this.#pausedUntil) return false;
    this.#pausedUntil = until;
    const afterEdge = (((until - this.#windowEnd) % this.windowMs) + this.windowMs) % this.windowMs;
    if (afterEdge > HINT_ROUNDING_MS + this.marginMs) this.#windowEnd = until;
    return true;
  }

  /** Moves to the window `now` is in, and returns its edge (a pause may have skipped several). */
  enterWindow(now: number): number {
    while (this.#windowEnd <= now) this.#windowEnd += this.windowMs;
    return this.#windowEnd - this.windowMs;
  }

  /**
   * The refill at an edge (called `marginMs` after it): how many requests the new window may still
   * start. Starts since shortly before the edge may be counted by the server in the new window,
   * and so may grants the engine made that still wait for their turn at the pace (`waitingGrants`).
   */
  refill(now: number, waitingGrants: number): number {
    const edge = this.enterWindow(now - this.marginMs);
    this.#recentStarts = this.#recentStarts.filter((t) => t >= edge - this.marginMs);
    if (this.#learnAfter !== undefined && this.#learnAfter < edge) {
      this.#learnAfter = undefined;
      // Later windows are filled to that, instead of sending the whole queue to be refused again.
      this.#allowance = Math.min(this.#allowance, Math.max(1, this.#acceptedInWindow));
    }
    this.#acceptedInWindow = this.#acceptedAfterEdge;
    this.#acceptedAfterEdge = 0;
    this.#windowStart = edge;
    return Math.max(0, this.#allowance - this.#recentStarts.length - waitingGrants);
  }
}

/**
 * The server's next reset. One that passed while the run was starting (a slow start, a Redis
 * connection) moves on by whole windows: the edges stay the server's, and with Redis every
 * worker names the same edges. One absurdly far ahead or long past (clock skew) is replaced by
 * one window from now.
 */
export function firstEdge(resetAt: number | undefined, now: number, windowMs: number): number {
  if (resetAt === undefined || resetAt > now + windowMs + 1000 || resetAt <= now - 10 * windowMs) return now + windowMs;
  if (resetAt > now) return resetAt;
  return resetAt + (Math.floor((now - resetAt) / windowMs) + 1) * windowMs;
}
