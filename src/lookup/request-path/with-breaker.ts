// The circuit breaker on the request path (breaker.ts), in two parts. withBreaker sits inside
// the retries, so that a lookup held while the API is down uses none of them, and outside the
// gate, so that a held lookup takes no place in the rate window. withBreakerCheck sits inside the
// gate: a lookup admitted while the API was up may have waited for its slot while it went down,
// and is then held before it is sent. Lookups, and a run's first account reads (an API down when
// the run starts is the same outage): a LeadClient's single calls are not held.
import { GateStoppedError } from '../rate/gate-errors.js';
import { HeldError, type CircuitBreaker } from './breaker.js';
import type { AdmittedCall, Send } from './request.js';

/**
 * `alone`: the calls are all the run sends (its first account reads): one that fails opens the
 * breaker by itself (breaker.failed). `released`: aborted when no call of this kind may start any
 * more (for lookups, any stop of the run: the reserve, a budget, the daily limit); a call held
 * while the API is down is then let go unsent, as one the gate dropped, and its row takes the
 * stop's word at once, not --patience later (nor exit 2 for an API that was back by then).
 */
export function withBreaker(next: Send, breaker: CircuitBreaker, signal: AbortSignal, alone = false, released: AbortSignal = signal): Send {
  return async (call) => {
    for (;;) {
      // Rejects with ApiUnavailableError once the API was given up on.
      const admission = await breaker.admit(released);
      if (released.aborted && breaker.unavailableSince !== undefined && admission !== 'probe') throw new GateStoppedError();
      try {
        const response = await next({ ...call, admission } as AdmittedCall);
        breaker.answered();
        return response;
      } catch (error) {
        // Stopped at the gate's end: the API went down meanwhile; wait for a turn again, unless
        // the run is stopping: then it is a request that was never sent, as one the gate dropped.
        if (error instanceof HeldError) {
          if (released.aborted) throw new GateStoppedError();
          continue;
        }
        // The run is stopping: the failure stands (the stop decides what the row becomes).
        if (signal.aborted || breaker.failed(admission, error, keyOf(call), alone) === 'retry') throw error;
        // Held: the API is down; this lookup waits for its turn again.
      }
    }
  };
}

/** Which key a lookup is for: failures of many keys, not one key's retries, open the breaker. */
function keyOf(call: AdmittedCall): string {
  return `${call.op}\u0000${JSON.stringify(call.input)}`;
}

export function withBreakerCheck(next: Send, breaker: CircuitBreaker): Send {
  return (call) => (breaker.holds((call as AdmittedCall).admission ?? 'closed') ? Promise.reject(new HeldError()) : next(call));
}
