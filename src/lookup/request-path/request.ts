// The request path is a chain of small wrappers around one function, the way octokit composes
// `retry(throttle(request))` (request-path.ts composes them). Each takes the next `Send` and
// returns one.
import type { LeadClient, OperationInput } from '../../api/client.js';
import type { BillableOperation } from '../credits.js';

export interface LookupRequest {
  op: BillableOperation;
  /** The normalized key (plan phase). */
  key: string;
}

/** Sends a request and resolves with the answer's `data` (the library's LeadClient sends its own request type). */
export type Send<Request = LookupRequest> = (request: Request) => Promise<unknown>;

/** The counters the request path keeps; the progress line and the summary read them. */
export interface RequestCounters {
  requests: number;
  retries: number;
  rateLimited: number;
}

function inputFor(op: BillableOperation, key: string): OperationInput[BillableOperation] {
  switch (op) {
    case 'lookup_email':
      return { email: key };
    case 'lookup_url':
      return { url: key };
    case 'lookup_domain':
      return { name: key };
    default:
      return { domain: key };
  }
}

/** The innermost step: one HTTP request through the client, counted. */
export function sendWith(client: LeadClient, counters: RequestCounters): Send {
  return async ({ op, key }) => {
    counters.requests += 1;
    const response = await client.call(op, inputFor(op, key) as never);
    return response.data as unknown;
  };
}
