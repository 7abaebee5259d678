// The shapes the request path's parts share. Each part (with-*.ts) takes the next `Send` and
// returns one, the way octokit composes `retry(throttle(request))`; only request-path.ts composes them.
import type { ApiResponse } from '../../api/transport.js';
import type { Operation } from '../../api/types.js';
import type { OperationInput } from '../../api/client.js';
import type { BillableOperation } from '../../core/kinds.js';

/** One call of an operation. */
export interface ApiCall {
  op: Operation;
  input: OperationInput[Operation];
}

/** A call as the circuit breaker let it through (breaker.ts): the probe of an API that is down, or not. */
export type AdmittedCall = ApiCall & { admission?: 'closed' | 'probe' };

/** The probe goes first at the gate: lookups waiting there now would only be held. */
export function isProbe(call: ApiCall): boolean {
  return (call as AdmittedCall).admission === 'probe';
}

/** A call's way down the path: resolves with the API's answer (data and rate headers). */
export type Send = (call: ApiCall) => Promise<ApiResponse<unknown>>;

/** What the request path counts; read-only outside it (RequestPath.counts). */
export interface RequestCounts {
  /** Lookup requests sent (account reads are not counted here). */
  requests: number;
  /** Retries after a transient failure, of any call. */
  retries: number;
  /** 429 answers, to any call (lookups, account reads, the gate's resync). */
  rateLimited: number;
}

/** The API's input for a lookup of `key`. */
export function lookupCall(op: BillableOperation, key: string): ApiCall {
  switch (op) {
    case 'lookup_email':
      return { op, input: { email: key } };
    case 'lookup_url':
      return { op, input: { url: key } };
    case 'lookup_domain':
      return { op, input: { name: key } };
    default:
      return { op, input: { domain: key } };
  }
}
