// The one place that retries: transient failures with backoff, 429s at once (the gate below holds
// them until the server's pause ends). Permanent failures pass through (retry-policy.ts).
import { GateStoppedError } from '../rate/rate-gate.js';
import type { RetryPolicy } from './retry-policy.js';
import type { RequestCounters, Send } from './request.js';

export function withRetry<Request>(next: Send<Request>, policy: RetryPolicy, counters: RequestCounters, signal: AbortSignal): Send<Request> {
  const hooks = {
    signal,
    onRetry: () => {
      counters.retries += 1;
    },
  };
  return async (request) => {
    // A retry the gate refuses (the run is stopping) leaves the row with the failure it had: it
    // was looked up, and failed; it is not a row that was never tried.
    let failure: unknown;
    const attempt = async (): Promise<unknown> => {
      try {
        return await next(request);
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
