// A 429 when no rate gate paces the calls (the account reads that size the gate, a LeadClient
// without `rpm`): this call waits for the server's window before the retry sends it again. With
// a gate, with-gate.ts pauses every call instead. The one place this wait is computed.
import { RateLimitedError, RateLimitedTooLongError } from '../../api/errors.js';
import { HINT_ROUNDING_MS } from '../../api/limits.js';
import type { Clock } from '../../core/clock.js';
import type { RequestCounts, Send } from './request.js';

/** How long to wait after a 429: the server's hint, at least a second, never longer than one window. */
export function waitAfter429(error: RateLimitedError, now: number, windowMs: number): number {
  const hinted = (error.retryAt?.getTime() ?? 0) - now;
  return Math.min(windowMs, Math.max(HINT_ROUNDING_MS, hinted));
}

export interface PauseSettings {
  counts: RequestCounts;
  clock: Clock;
  windowMs: number;
  /** Cuts the wait short (the run halts, the client closes). */
  signal: AbortSignal;
  /** Whether the retry above sends a call again after a 429: only then is there anything to wait for. */
  wait: boolean;
}

export function withPause(next: Send, settings: PauseSettings): Send {
  const { counts, clock, windowMs, signal, wait } = settings;
  return async (call) => {
    try {
      return await next(call);
    } catch (error) {
      if (error instanceof RateLimitedError) {
        counts.limited();
        if (wait) await clock.sleep(waitAfter429(error, clock.now(), windowMs), signal);
      }
      // A 429 whose wait is too long to honour: counted, not waited for (the retry's backoff applies).
      if (error instanceof RateLimitedTooLongError) counts.limited();
      throw error;
    }
  };
}
