// The request path of a lookup, outermost first:
//   reserve check → retry → rate gate (429 pause) → credit ticket → HTTP request
// The retry sits outside the gate so that each attempt waits for its own slot in the rate window;
// the credit ticket sits inside it so that a request waiting for its slot reserves nothing; the
// reserve check sits outside the retries because it asks the gate for a balance reading itself.
import type { LeadClient } from '../../api/client.js';
import type { RunStop } from '../../run/run-stop.js';
import type { CreditAccount } from '../credits.js';
import type { RateGate } from '../rate/rate-gate.js';
import { sendWith, type RequestCounters, type Send } from './request.js';
import type { RetryPolicy } from './retry-policy.js';
import { withCredits, withReserveCheck } from './with-credits.js';
import { withGate } from './with-gate.js';
import { withRetry } from './with-retry.js';

export interface RequestPathDeps {
  client: LeadClient;
  gate: RateGate;
  retry: RetryPolicy;
  credits: CreditAccount;
  counters: RequestCounters;
  stop: RunStop;
  /** A fresh balance reading (single-flight, through the gate). */
  refreshCredits(): Promise<void>;
}

export function requestPath(deps: RequestPathDeps): Send {
  const { client, gate, retry, credits, counters, stop } = deps;
  const send = withCredits(sendWith(client, counters), credits);
  const gated = withGate(send, gate, counters, stop.signal);
  const retried = withRetry(gated, retry, counters, stop.requestsSignal);
  return withReserveCheck(retried, credits, deps.refreshCredits, () => stop.stop('credits'));
}
