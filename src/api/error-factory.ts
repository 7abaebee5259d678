// What an HTTP answer means when it is not the API's data: the one factory from a status, headers
// and body to one error class of errors.ts, beside them (docs/api-behaviour-notes.md, "Error
// bodies"). The API's own code decides before the status (the same code comes at 200, 400, 403 or
// 429); the status decides when no known code does; a 2xx body that is not the interface's is
// refused. transport.ts parses the body once and throws what this returns; failures before an
// answer (a timeout, a refused connection) are network-errors.ts's.
import http from 'node:http';
import { said, TOKEN_GIVEN } from './caller-words.js';
import {
  ApiFailedError,
  BadRequestError,
  BadResponseError,
  DailyLimitError,
  ForbiddenError,
  type LeadEnrichError,
  NotFoundError,
  PaymentRequiredError,
  RateLimitedError,
  RateLimitedTooLongError,
  ServerError,
  UnauthorizedError,
  type ValidationReason,
} from './errors.js';
import { MAX_RATE_WAIT_MS, retryAtFrom } from './limits.js';
import type { ErrorBody } from './types.js';

/** An HTTP answer as the transport received it: `body` is `text` parsed as JSON, undefined when it is not. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: unknown;
  path: string;
  now: number;
}

/** The error class an answer means, or undefined when it is the API's data: a 2xx with a `data` object that did not fail. */
export function errorFromAnswer(answer: HttpAnswer): LeadEnrichError | undefined {
  const { status, headers, text, path, now } = answer;
  const body = answer.body as (ErrorBody & { data?: unknown }) | undefined;
  const isObject = body !== undefined && body !== null && typeof body === 'object' && !Array.isArray(body);
  // Only a 2xx can be data: there, the body's "failed" decides; any other status fails by itself.
  const failed = isObject && body.status === 'failed';
  const apiCode = isObject && typeof body.error?.code === 'number' ? body.error.code : undefined;
  const serverMessage = isObject && typeof body.error?.message === 'string' ? body.error.message : undefined;
  const details = { status, ...(apiCode === undefined ? {} : { apiCode }) };

  if (status >= 200 && status < 300 && !failed) {
    if (!isObject) {
      return new BadResponseError(`Response from ${path} is not a JSON object (${text.length === 0 ? 'empty body' : 'unparseable body'})`, details);
    }
    if (body.data === null || typeof body.data !== 'object' || Array.isArray(body.data)) {
      return new BadResponseError(`Response from ${path} has no data object`, details);
    }
    return undefined;
  }

  const said = serverMessage ? `: ${serverMessage}` : '';
  const failure: FailedAnswer = { status, path, said, details, headers, serverMessage, now };
  // The API's code decides before the HTTP status: the same code comes at 200, 400, 403 or 429.
  const byCode = apiCode === undefined ? undefined : meaningOfCode(apiCode, failure);
  if (byCode) return byCode;
  if (status === 400) {
    const reasons = Array.isArray(body?.error?.reasons) ? (body.error.reasons as ValidationReason[]) : [];
    const reasonText = reasons.flatMap((r) => r.messages ?? []).join('; ');
    const message = reasonText || serverMessage || 'bad request';
    return new BadRequestError(`The API rejected the input: ${message}`, reasons, details);
  }
  if (status >= 200 && status < 300) {
    // "status":"failed" at HTTP 200 with a code we don't know: the server says it failed; retryable.
    return new ApiFailedError(`The API answered "failed"${apiCode === undefined ? '' : ` (code ${apiCode})`}${said}`, details);
  }
  if (status >= 500 || status === 408) {
    const what = isObject ? said : text.length === 0 ? ' (no body)' : ' (non-JSON body)';
    return new ServerError(`Server error ${describeStatus(status)} from ${path}${what}`, details);
  }
  // A 404 in the API's own error body (not a router's, which repeats the status as its code) is
  // the service saying the key was not found; any other is a path that does not exist.
  if (status === 404 && isObject && body.status === 'failed' && apiCode !== 404) {
    return new NotFoundError(`Not found (${describeStatus(status)}${said})`, details);
  }
  return (
    meaningOfStatus(failure) ??
    new BadRequestError(`HTTP ${describeStatus(status)} from ${path}${said}${status === 404 ? '; check the base URL (it must end with /v2)' : ''}`, [], details)
  );
}

interface FailedAnswer {
  status: number;
  path: string;
  said: string;
  details: { status: number; apiCode?: number };
  headers: Record<string, string | string[] | undefined>;
  serverMessage: string | undefined;
  now: number;
}

/** What the API's own error codes mean (docs/api-behaviour-notes.md, the service's documentation), or undefined for a code not known. */
function meaningOfCode(code: number, a: FailedAnswer): LeadEnrichError | undefined {
  if (code === 1000) return unauthorized(a);
  if (code === 1008) return forbidden(a);
  if (code === 1017 || code === 1032) {
    return new DailyLimitError(
      `The account's daily limit was reached (${describeStatus(a.status)}${a.said}); run the same command again the next day`,
      a.details,
    );
  }
  if (code === 1027) return new NotFoundError(`Not found (${describeStatus(a.status)}${a.said})`, a.details);
  if (code === 1002 || code === 1028 || code === 1031) return paymentRequired(a);
  if (code === 1030) return rateLimited(a);
  return meaningOfStatus(a);
}

/** What an HTTP status means when no known code says otherwise: the refusals that are not about the request's key. */
function meaningOfStatus(a: FailedAnswer): LeadEnrichError | undefined {
  if (a.status === 401) return unauthorized(a);
  if (a.status === 403 || a.status === 415) return forbidden(a);
  if (a.status === 402) return paymentRequired(a);
  if (a.status === 429) return rateLimited(a);
  return undefined;
}

const unauthorized = (a: FailedAnswer): LeadEnrichError =>
  new UnauthorizedError(`The API rejected the token (${describeStatus(a.status)}${a.said}); give a valid token (${said(TOKEN_GIVEN)})`, a.details);
const paymentRequired = (a: FailedAnswer): LeadEnrichError => new PaymentRequiredError(`Out of credits (${describeStatus(a.status)}${a.said})`, a.details);
/** A 429; one whose wait lies past the 1-hour bound is taken as the API being unavailable. */
function rateLimited(a: FailedAnswer): LeadEnrichError {
  const retryAt = retryAtFrom(a.headers, a.serverMessage, a.now);
  const waitMs = (retryAt?.getTime() ?? a.now) - a.now;
  if (waitMs > MAX_RATE_WAIT_MS) {
    const hours = waitMs / 3_600_000;
    const wait = hours < 48 ? `${Math.round(hours)} hours` : `${Math.round(hours / 24)} days`;
    return new RateLimitedTooLongError(
      `Rate limited (${describeStatus(a.status)}${a.said}) for ${wait}, past the 1-hour bound: taken as the API being unavailable`,
      a.details,
    );
  }
  return new RateLimitedError(`Rate limited (${describeStatus(a.status)}${a.said})`, retryAt, a.details);
}
const forbidden = (a: FailedAnswer): LeadEnrichError =>
  new ForbiddenError(
    `The API refused the operation ${a.path} (${describeStatus(a.status)}${a.said}); this token or its plan cannot use it: check the plan in the account's settings or use another token`,
    a.details,
  );

function describeStatus(status: number): string {
  return `${status} ${http.STATUS_CODES[status] ?? ''}`.trim();
}
