// The one place that retries: transient failures with backoff, 429s at once (the part below, the
// gate or the pause, held them until the server's window allows). Permanent failures pass
// through (retry-policy.ts).
import { GateStoppedError } from '../rate/rate-gate.js';
import type { RetryPolicy } from './retry-policy.js';
import type { RequestCounts, Send } from './request.js';

/** `final`: the failures that end the call at once on this way (RetryHooks.final). */
export function withRetry(next: Send, policy: RetryPolicy, counts: RequestCounts, signal: AbortSignal, final?: (error: unknown) => boolean): Send {
  const hooks = {
    signal,
    onRetry: () => {
      counts.retried();
    },
    ...(final ? { final } : {}),
  };
  return async (call) => {
    // A retry the gate refuses (the run is stopping) leaves the call with the failure it had: it
    // was made, and failed; it is not a call that was never tried.
    let failure: unknown;
    const attempt = async () => {
      try {
        return await next(call);
      } catch (error) {
        if (!(error instanceof GateStoppedError)) failure = error;
        throw error;
      }
    };
    try {
      return await policy.run(attempt, hooks);
    } catch (error) {
      throw error instanceof GateStoppedError && failure !== undefined ? failure : error;
    }
  };
}
