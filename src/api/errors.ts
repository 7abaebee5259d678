// One error class per failure kind, each with a stable lower-case `code` that scripts can rely on
// (the same words appear in the sidecar's `error_code`). Messages never contain the token: they
// are built here from status, API code and server message only, never from request options.

/**
 * Every code the program writes, to a sidecar's `error_code` or a fatal line's `(code: …)`: a
 * closed set (docs/reference.md lists each; test/unit/vocabulary.test.ts holds it to that list).
 */
export const ERROR_CODES = [
  'bad_request',
  'unauthorized',
  'forbidden',
  'daily_limit',
  'not_found',
  'payment_required',
  'rate_limited',
  'server_error',
  'api_failed',
  'timeout',
  'network',
  'tls',
  'proxy',
  'bad_response',
  'invalid_input',
  'config',
  'unreadable_input',
  'unwritable_output',
  'output_locked',
  'store_failed',
  'redis_unavailable',
  'client_closed',
  // Why a row was not looked up (the sidecar's words, docs/cli-contract.md "The error sidecar").
  'no_key',
  'credit_reserve',
  'interrupted',
  'max_errors',
  'api_unavailable',
  'budget',
  'complete',
  // A row whose request the API refused with a 4xx other than 400 (a 404: usually a wrong base URL).
  'request_rejected',
  // The command line's own failures, on its fatal line only: a command line yargs refuses, a
  // Node.js too old, a costly run nobody confirmed, and a failure lead-enrich did not foresee.
  'usage',
  'unsupported_node',
  'not_confirmed',
  'unexpected',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/**
 * What a failure of a class means, declared by the class: whether a run or a command retries it,
 * waits it out, stops for it, and the exit status of a command that ends with it
 * (docs/cli-contract.md, "Exit status of `enrich`" and "Every night, unattended").
 */
export interface ErrorPolicy {
  /** The same request may succeed sent again later: retried with backoff. */
  readonly transient: boolean;
  /** Says the API itself is down (not this answer): the breaker waits these out. */
  readonly outage: boolean;
  /** The stop a run makes when a lookup meets it (lookup/stops.ts): no later request could pass. */
  readonly stops?: 'unauthorized' | 'forbidden' | 'failed' | 'daily_limit' | 'credits' | 'api_unavailable';
  /** The exit status of a command that ends with it: 2 for an API that is down (waiting may mend it), never 1. */
  readonly exit: 1 | 2 | 3 | 130;
}

const FATAL: ErrorPolicy = { transient: false, outage: false, exit: 1 };
const OUTAGE: ErrorPolicy = { transient: true, outage: true, exit: 2 };

export interface ErrorDetails {
  cause?: unknown;
  /** HTTP status, when the failure came with one. */
  status?: number;
  /** The server's numeric `error.code`, when it sent one. */
  apiCode?: number;
}

export class LeadEnrichError extends Error {
  /** What a failure of this class means (each class declares its own). */
  static readonly policy: ErrorPolicy = FATAL;
  readonly code: ErrorCode;
  readonly status: number | undefined;
  readonly apiCode: number | undefined;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.code = code;
    this.status = details.status;
    this.apiCode = details.apiCode;
  }

  /** Its class's policy. */
  get policy(): ErrorPolicy {
    return (this.constructor as typeof LeadEnrichError).policy;
  }
}

/**
 * The base class under the name the library contract uses (docs/cli-contract.md, "Library": "every
 * error a caller can get is a `LeadError` subclass"). One class, two names: `instanceof` either works.
 */
export { LeadEnrichError as LeadError };

export interface ValidationReason {
  field?: string[];
  location?: string;
  messages?: string[];
  types?: string[];
}

/** 400: the server rejected the input. Permanent: never retried. */
export class BadRequestError extends LeadEnrichError {
  readonly reasons: ValidationReason[];
  constructor(message: string, reasons: ValidationReason[] = [], details: ErrorDetails = {}) {
    super('bad_request', message, details);
    this.reasons = reasons;
  }
}

/**
 * A row's request that the API refused with a 4xx other than 400 (a 404 without the API's body:
 * usually a base URL that is not the API): the request's problem, not the key's (`status` says which).
 */
export class RequestRejectedError extends LeadEnrichError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('request_rejected', message, details);
  }
}

/** 401: the token was rejected. Fatal for a run. */
export class UnauthorizedError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = { ...FATAL, stops: 'unauthorized' };
  constructor(message: string, details: ErrorDetails = {}) {
    super('unauthorized', message, details);
  }
}

/**
 * 403 (code 1008) or 415: this token, or this client, cannot use the operation. Every later call
 * of the same operation would be refused too: fatal for a run, like a rejected token.
 */
export class ForbiddenError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = { ...FATAL, stops: 'forbidden' };
  constructor(message: string, details: ErrorDetails = {}) {
    super('forbidden', message, details);
  }
}

/**
 * Codes 1017 and 1032 (at any HTTP status): the account's daily limit is used up. Nothing sent
 * before the next day can pass, so it is never retried and a run stops sending at once.
 */
export class DailyLimitError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = { ...FATAL, stops: 'daily_limit' };
  constructor(message: string, details: ErrorDetails = {}) {
    super('daily_limit', message, details);
  }
}

/**
 * Code 1027, or a 404 carrying the API's own error body: the key was looked up and nothing was
 * found. The client turns it into a not-found answer for the lookups; it only reaches a caller
 * from an operation that has no such answer.
 */
export class NotFoundError extends LeadEnrichError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('not_found', message, details);
  }
}

/** 402 (codes 1002, 1028, 1031): no credits left to pay for the call. */
export class PaymentRequiredError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = { ...FATAL, stops: 'credits' };
  constructor(message: string, details: ErrorDetails = {}) {
    super('payment_required', message, details);
  }
}

/** 429 (code 1030): wait until `retryAt` (undefined when the server said nothing usable). */
export class RateLimitedError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = { ...FATAL, transient: true };
  readonly retryAt: Date | undefined;
  constructor(message: string, retryAt: Date | undefined, details: ErrorDetails = {}) {
    super('rate_limited', message, details);
    this.retryAt = retryAt;
  }
}

/**
 * A 429 whose wait is past MAX_RATE_WAIT_MS (limits.ts): no window lasts that long, so the server
 * is taken as unavailable. Transient like a 5xx: retried with backoff, and a run's circuit breaker
 * holds the rows and gives up after --patience instead of sleeping for years.
 */
export class RateLimitedTooLongError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = OUTAGE;
  constructor(message: string, details: ErrorDetails = {}) {
    super('rate_limited', message, details);
  }
}

/** 5xx, 524 and unknown statuses: the server failed; worth retrying. */
export class ServerError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = OUTAGE;
  constructor(message: string, details: ErrorDetails = {}) {
    super('server_error', message, details);
  }
}

/** `"status":"failed"` in a body with an API code we do not know (often at HTTP 200). */
export class ApiFailedError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = OUTAGE;
  constructor(message: string, details: ErrorDetails = {}) {
    super('api_failed', message, details);
  }
}

export class TimeoutError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = OUTAGE;
  constructor(message: string, details: ErrorDetails = {}) {
    super('timeout', message, details);
  }
}

/** The connection failed or was reset. */
export class NetworkError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = OUTAGE;
  constructor(message: string, details: ErrorDetails = {}) {
    super('network', message, details);
  }
}

/** The body was not JSON, was cut short, too large, or of the wrong shape. */
export class BadResponseError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = { ...FATAL, transient: true };
  constructor(message: string, details: ErrorDetails = {}) {
    super('bad_response', message, details);
  }
}

/** A value the user gave (a key, a timeout) is malformed; no request was made. */
export class InvalidInputError extends LeadEnrichError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('invalid_input', message, details);
  }
}

/** Bad flags, environment or config file. */
export class ConfigError extends LeadEnrichError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('config', message, details);
  }
}

/** The input file cannot be read or parsed as CSV. */
export class UnreadableInputError extends LeadEnrichError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('unreadable_input', message, details);
  }
}

/** An output or sidecar cannot be created or written (a bad path, a full disk, a failing Writable). */
export class UnwritableOutputError extends LeadEnrichError {
  constructor(message: string, details: ErrorDetails = {}) {
    super('unwritable_output', message, details);
  }
}

/**
 * The API's certificate is not one this machine trusts (unknown issuer, self-signed, expired, for
 * another host), or the server does not speak TLS: no retry helps; the run ends (api/network-errors.ts).
 */
export class TlsError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = { ...FATAL, stops: 'failed' };
  constructor(message: string, details: ErrorDetails = {}) {
    super('tls', message, details);
  }
}

/** The proxy refused the request (407, a policy) or cannot be reached: no retry helps; the run ends. */
export class ProxyError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = { ...FATAL, stops: 'failed' };
  constructor(message: string, details: ErrorDetails = {}) {
    super('proxy', message, details);
  }
}

/** Another run is writing the same output or sidecar file (docs/cli-contract.md, "Durability"). */
export class OutputLockedError extends LeadEnrichError {
  constructor(message: string) {
    super('output_locked', message);
  }
}

/**
 * The result store could not be written or read during a run: a full disk, a damaged file, an I/O
 * error. The message names the file, the cause and what to do (store/open-database.ts, diagnose).
 */
export class StoreFailedError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = { ...FATAL, stops: 'failed' };
  constructor(message: string, details: ErrorDetails = {}) {
    super('store_failed', message, details);
  }
}

/**
 * Why one row of `enrichRows` was not looked up, for the codes that have no class of their own
 * (`no_key`, `complete`, `credit_reserve`, `budget`, `max_errors`): its `code` is the sidecar's
 * `error_code`; `cause`, the failure a try met before a stop cut its retries short. A row's other
 * codes are errors of their own class (run/row-error.ts).
 */
export class RowError extends LeadEnrichError {
  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(code, message, details);
  }
}

/** A day or month budget refused a single call (`lookup`, `mx`, `whois`): nothing was sent; what a run stopped by it exits with. */
export class BudgetRefusedError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = { ...FATAL, exit: 3 };
  constructor(message: string) {
    super('budget', message);
  }
}

/** The API stayed down longer than the patience (--patience): the run gave up on it; nothing was sent for this row (`cause`: what the last try met). */
export class ApiUnavailableError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = { ...FATAL, stops: 'api_unavailable' };
  constructor(message: string, details: ErrorDetails = {}) {
    super('api_unavailable', message, details);
  }
}

/**
 * The run was stopped (SIGINT, SIGTERM, the caller's AbortSignal) before it had anything to write:
 * exit 130. A row of enrichRows not looked up because the run was stopped is one too.
 */
export class InterruptedError extends LeadEnrichError {
  static override readonly policy: ErrorPolicy = { ...FATAL, exit: 130 };
  constructor(message: string, details: ErrorDetails = {}) {
    super('interrupted', message, details);
  }
}

/**
 * Redis went away during a run (--redis): lookups stop, what is done is written. Here with the
 * others, not beside the Redis client: the library's public types then need none of ioredis's.
 */
export class CoordinationLostError extends LeadEnrichError {
  constructor(message: string, cause?: unknown) {
    super('redis_unavailable', message, { cause });
  }
}

/** A call on a LeadClient that close() was called on, or still waiting for its turn then: not sent. */
export class ClientClosedError extends LeadEnrichError {
  constructor() {
    super('client_closed', 'The LeadClient was closed before this call was sent; make a new client to go on');
  }
}

/** Failures that may succeed if the same request is sent again later. */
export function isTransient(error: unknown): boolean {
  return error instanceof LeadEnrichError && error.policy.transient;
}

/**
 * Failures that say the API itself is down (a 5xx, "failed" at 200, a reset or refused connection,
 * a timeout), not that this answer went wrong: a 429 is the rate gate's, and a body that is not
 * what the interface says (bad_response) is the request's own. The breaker waits these out; a
 * command that ends with one exits 2, never 1 (docs/cli-contract.md, "Every night, unattended").
 */
export function isOutage(error: unknown): boolean {
  return error instanceof LeadEnrichError && error.policy.outage;
}
