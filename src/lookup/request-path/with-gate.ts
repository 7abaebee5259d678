// Every request waits for the rate gate, and the gate's 429 policy applies here: a 429 pauses
// the whole run until the server's reset (RateGate.pause), then with-retry sends the request again.
import { RateLimitedError } from '../../api/errors.js';
import { GateStoppedError, type RateGate } from '../rate/rate-gate.js';
import type { RequestCounters, Send } from './request.js';

export function withGate<Request>(next: Send<Request>, gate: RateGate, counters: RequestCounters, halt: AbortSignal): Send<Request> {
  return async (request) => {
    try {
      return await gate.schedule(() => {
        // Granted after the run halted: not sent.
        if (halt.aborted) throw new GateStoppedError();
        return next(request);
      });
    } catch (error) {
      if (error instanceof RateLimitedError) {
        counters.rateLimited += 1;
        gate.pause(error.retryAt);
      }
      throw error;
    }
  };
}
