// The shapes the request path's parts share. Each part (with-*.ts) takes the next `Send` and
// returns one, the way octokit composes `retry(throttle(request))`; only request-path.ts composes them.
import type { ApiResponse } from '../../api/transport.js';
import type { Operation } from '../../api/types.js';
import type { OperationInput } from '../../api/client.js';
import type { BillableOperation } from '../../core/kinds.js';
import type { GatePriority } from '../rate/engines.js';

/** One call of an operation. */
export interface ApiCall {
  op: Operation;
  input: OperationInput[Operation];
  /** A lookup that finishes a row already begun (its --with lookups, a waterfall's next kind): queued ahead of new rows. */
  soon?: boolean | undefined;
}

/** A call as the circuit breaker let it through (breaker.ts): the probe of an API that is down, or not. */
export type AdmittedCall = ApiCall & { admission?: 'closed' | 'probe' };

/** The account's reads: they decide whether lookups may be sent or paid for. */
const ACCOUNT_READS: ReadonlySet<Operation> = new Set(['credits', 'limits', 'myplans']);

/**
 * Where a call queues at the gate: the probe and the account's reads first (lookups waiting there
 * now would only be held, or, once the run stops looking up, dropped), then rows already begun.
 */
export function priorityOf(call: ApiCall): GatePriority {
  if ((call as AdmittedCall).admission === 'probe' || ACCOUNT_READS.has(call.op)) return 'first';
  return call.soon ? 'soon' : 'normal';
}

/** A call's way down the path: resolves with the API's answer (data and rate headers). */
export type Send = (call: ApiCall) => Promise<ApiResponse<unknown>>;

/** What the request path counts, each count moved by its one method; read-only outside the path (RequestPath.counts). */
export class RequestCounts {
  /** Lookup requests sent (account reads are not counted here). */
  requests = 0;
  /** Retries after a transient failure, of any call. */
  retries = 0;
  /** 429 answers, to any call (lookups, account reads, the gate's resync). */
  rateLimited = 0;

  sent(): void {
    this.requests += 1;
  }

  retried(): void {
    this.retries += 1;
  }

  limited(): void {
    this.rateLimited += 1;
  }
}

/** Where a path stands, as progress and the summary read it: its counts, its gate's and its breaker's facts in one object. */
export interface PathReading {
  requests: number;
  retries: number;
  rateLimited: number;
  lookupsInFlight: number;
  lookupMs: number;
  /** Since when the API is unavailable, while it is. */
  apiUnavailableSince: number | undefined;
  /** How long the API was unavailable in all. */
  apiUnavailableMs: number;
  /** What its last outage began with. */
  apiFailure: string | undefined;
  /** The gate's 429 pause, while it lasts. */
  rateLimitedUntil: number | undefined;
  /** The gate's window (the path's own before a gate is open). */
  windowMs: number;
  /** The gate's concurrency now; 0 without a gate. */
  concurrency: number;
}

/** The API's input for a lookup of `key`. */
export function lookupCall(op: BillableOperation, key: string, soon = false): ApiCall {
  const call = (input: OperationInput[Operation]): ApiCall => (soon ? { op, input, soon } : { op, input });
  switch (op) {
    case 'lookup_email':
      return call({ email: key });
    case 'lookup_url':
      return call({ url: key });
    case 'lookup_domain':
      return call({ name: key });
    default:
      return call({ domain: key });
  }
}
