// A row's `error` in enrichRows (and `stale`: why a stale answer was not refreshed): an error of
// the class docs/library.md lists for its code ("Errors": "one subclass per kind, so `instanceof`
// works too, whatever step threw it"), with the `status` and `apiCode` the API gave, in the row's
// own words. `RowError` only for the codes that have no class of their own (no_key, complete,
// credit_reserve, budget, max_errors); the failure a try met before a stop is its `cause`.
import {
  ApiFailedError,
  ApiUnavailableError,
  BadRequestError,
  BadResponseError,
  CoordinationLostError,
  DailyLimitError,
  ForbiddenError,
  InterruptedError,
  InvalidInputError,
  NetworkError,
  ProxyError,
  RateLimitedError,
  RequestRejectedError,
  RowError,
  ServerError,
  StoreFailedError,
  TimeoutError,
  TlsError,
  UnauthorizedError,
  type ErrorCode,
  type ErrorDetails,
  type LeadEnrichError,
} from '../api/errors.js';
import { restated } from '../api/restated.js';

type Make = (message: string, details: ErrorDetails) => LeadEnrichError;

/** The class of each code a row may carry that has one. */
const CLASSES: Readonly<Partial<Record<ErrorCode, Make>>> = {
  invalid_input: (m, d) => new InvalidInputError(m, d),
  // A key refused before, answered by the store: a 400 all the same.
  bad_request: (m, d) => new BadRequestError(m, [], { status: 400, ...d }),
  request_rejected: (m, d) => new RequestRejectedError(m, d),
  daily_limit: (m, d) => new DailyLimitError(m, d),
  api_unavailable: (m, d) => new ApiUnavailableError(m, d),
  interrupted: (m, d) => new InterruptedError(m, d),
  redis_unavailable: (m, d) => new CoordinationLostError(m, d.cause),
  server_error: (m, d) => new ServerError(m, d),
  api_failed: (m, d) => new ApiFailedError(m, d),
  timeout: (m, d) => new TimeoutError(m, d),
  network: (m, d) => new NetworkError(m, d),
  bad_response: (m, d) => new BadResponseError(m, d),
  rate_limited: (m, d) => new RateLimitedError(m, undefined, d),
  unauthorized: (m, d) => new UnauthorizedError(m, d),
  forbidden: (m, d) => new ForbiddenError(m, d),
  tls: (m, d) => new TlsError(m, d),
  proxy: (m, d) => new ProxyError(m, d),
  store_failed: (m, d) => new StoreFailedError(m, d),
};

/** The codes whose row answers a request the API refused: they keep its status and apiCode. */
const ANSWERED: ReadonlySet<ErrorCode> = new Set(['request_rejected', 'daily_limit']);

/**
 * The error a row carries for `code`: `failure` itself said again in the row's words when it is of
 * that code (its class, status, apiCode, reasons, retryAt kept), else an error of the code's class
 * whose cause is `failure`.
 */
export function rowError(code: ErrorCode, message: string, failure: LeadEnrichError | undefined): LeadEnrichError {
  if (failure?.code === code) return restated(failure, message);
  const details: ErrorDetails =
    failure === undefined ? {} : ANSWERED.has(code) ? { cause: failure, status: failure.status, apiCode: failure.apiCode } : { cause: failure };
  return CLASSES[code]?.(message, details) ?? new RowError(code, message, details);
}
