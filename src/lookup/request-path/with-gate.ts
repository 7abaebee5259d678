// Every call waits for the rate gate, and the gate's 429 policy applies here: a 429 pauses the
// whole run until the server's reset (RateGate.pause), then with-retry sends the call again.
import { RateLimitedError, RateLimitedTooLongError } from '../../api/errors.js';
import { GateStoppedError, type RateGate } from '../rate/rate-gate.js';
import { priorityOf, type RequestCounts, type Send } from './request.js';

/** `gateOf`: the gate, read at each call (the path's slot, filled once the gate is open). */
export function withGate(next: Send, gateOf: () => RateGate, counts: RequestCounts, halt: AbortSignal): Send {
  return async (call) => {
    const gate = gateOf();
    try {
      return await gate.schedule(() => {
        // Granted after the run halted: not sent.
        if (halt.aborted) throw new GateStoppedError();
        return next(call);
      }, priorityOf(call));
    } catch (error) {
      if (error instanceof RateLimitedError) {
        counts.limited();
        gate.pause(error.retryAt);
      }
      // A 429 all the same, counted as one; its wait is too long to pause for (the breaker decides).
      if (error instanceof RateLimitedTooLongError) counts.limited();
      throw error;
    }
  };
}
