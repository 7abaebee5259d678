// What an HTTP answer means (docs/api-behaviour-notes.md, "Error bodies"; docs/lead-api-interface.md):
// a status, headers and body to data or to one error class (api/error-factory.ts), through the
// transport's parseResponse, without HTTP.
// The API's own code decides before the status (the same code comes at 200, 400, 403 or 429);
// the status decides when no known code does; a body that is not the interface's is refused.
import { describe, expect, it } from 'vitest';
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
} from '../../src/api/errors.js';
import { parseResponse } from '../../src/api/transport.js';

const NOW = Date.parse('2026-03-14T10:00:00Z');
const failed = (code?: number, message?: string, extra: object = {}) =>
  JSON.stringify({ status: 'failed', error: { ...(code === undefined ? {} : { code }), ...(message === undefined ? {} : { message }), ...extra } });

function failure(status: number, text: string, headers: Record<string, string> = {}): LeadEnrichError {
  try {
    parseResponse(status, headers, text, '/person/email', NOW);
  } catch (error) {
    return error as LeadEnrichError;
  }
  throw new Error(`no failure for ${status} ${text}`);
}

describe('a success', () => {
  it('is its data object, with the status and the rate headers', () => {
    expect(parseResponse(200, { 'x-ratelimit-remaining': '3' }, '{"status":"success","data":{"lead":{}}}', '/x', NOW)).toEqual({
      data: { lead: {} },
      status: 200,
      rate: { limit: undefined, remaining: 3, resetAt: undefined },
    });
    expect(parseResponse(204, {}, '{"data":{}}', '/x', NOW).status).toBe(204);
    expect(parseResponse(299, {}, '{"data":{}}', '/x', NOW).status).toBe(299);
  });

  it.each([
    ['', 'Response from /person/email is not a JSON object (empty body)'],
    ['   ', 'Response from /person/email is not a JSON object (unparseable body)'],
    ['{"data":', 'Response from /person/email is not a JSON object (unparseable body)'],
    ['[1,2]', 'Response from /person/email is not a JSON object (unparseable body)'],
    ['null', 'Response from /person/email is not a JSON object (unparseable body)'],
    ['"text"', 'Response from /person/email is not a JSON object (unparseable body)'],
    ['{"status":"success"}', 'Response from /person/email has no data object'],
    ['{"data":null}', 'Response from /person/email has no data object'],
    ['{"data":[]}', 'Response from /person/email has no data object'],
    ['{"data":"x"}', 'Response from /person/email has no data object'],
  ])('a 200 whose body is %j is a bad response', (text, message) => {
    const error = failure(200, text);
    expect(error).toBeInstanceOf(BadResponseError);
    expect(error.message).toBe(message);
    expect(error.status).toBe(200);
  });
});

describe('the API’s own codes decide before the status', () => {
  it.each([
    [1000, 200, UnauthorizedError],
    [1008, 400, ForbiddenError],
    [1017, 429, DailyLimitError],
    [1032, 400, DailyLimitError],
    [1027, 403, NotFoundError],
    [1002, 400, PaymentRequiredError],
    [1028, 200, PaymentRequiredError],
    [1031, 403, PaymentRequiredError],
    [1030, 400, RateLimitedError],
  ])('code %i at HTTP %i', (code, status, kind) => {
    const error = failure(status, failed(code, 'said so'));
    expect(error).toBeInstanceOf(kind);
    expect(error.apiCode).toBe(code);
    expect(error.status).toBe(status);
  });

  it('each says what happened and what to do, in words', () => {
    expect(failure(400, failed(1017, 'daily limit')).message).toBe(
      "The account's daily limit was reached (400 Bad Request: daily limit); run the same command again the next day",
    );
    expect(failure(403, failed(1027, 'Email address not found')).message).toBe('Not found (403 Forbidden: Email address not found)');
    expect(failure(402, failed(1002)).message).toBe('Out of credits (402 Payment Required)');
    expect(failure(403, failed(1008, 'no')).message).toBe(
      "The API refused the operation /person/email (403 Forbidden: no); this token or its plan cannot use it: check the plan in the account's settings or use another token",
    );
    expect(failure(401, failed(1000, 'bad token')).message).toMatch(/^The API rejected the token \(401 Unauthorized: bad token\); give a valid token \(/);
  });

  it('a code it does not know leaves the status to decide', () => {
    expect(failure(401, failed(4242))).toBeInstanceOf(UnauthorizedError);
    expect(failure(200, failed(4242, 'odd'))).toBeInstanceOf(ApiFailedError);
    expect(failure(200, failed(4242, 'odd')).message).toBe('The API answered "failed" (code 4242): odd');
    expect(failure(200, failed(undefined, 'odd')).message).toBe('The API answered "failed": odd');
    expect(failure(200, failed()).message).toBe('The API answered "failed"');
    // A code that is not a number is no code.
    expect(failure(200, JSON.stringify({ status: 'failed', error: { code: '1000' } })).apiCode).toBeUndefined();
  });
});

describe('the status decides when no known code does', () => {
  it.each([
    [401, UnauthorizedError],
    [403, ForbiddenError],
    [415, ForbiddenError],
    [402, PaymentRequiredError],
    [429, RateLimitedError],
    [500, ServerError],
    [503, ServerError],
    [524, ServerError],
    [408, ServerError],
  ])('HTTP %i with no body', (status, kind) => {
    expect(failure(status, '')).toBeInstanceOf(kind);
  });

  it('a server error says whether its body was empty, not JSON, or what the server said', () => {
    expect(failure(503, '').message).toBe('Server error 503 Service Unavailable from /person/email (no body)');
    expect(failure(502, '<html>').message).toBe('Server error 502 Bad Gateway from /person/email (non-JSON body)');
    expect(failure(500, failed(undefined, 'db down')).message).toBe('Server error 500 Internal Server Error from /person/email: db down');
    expect(failure(599, '{}').message).toBe('Server error 599 from /person/email');
  });

  it('a 400 is a bad request with the reasons the server gave, or its message, or none', () => {
    const reasons = [{ field: ['email'], messages: ['"email" is required', 'must be text'] }, { messages: ['second'] }];
    const withReasons = failure(400, failed(undefined, 'validation failed', { reasons })) as BadRequestError;
    expect(withReasons).toBeInstanceOf(BadRequestError);
    expect(withReasons.message).toBe('The API rejected the input: "email" is required; must be text; second');
    expect(withReasons.reasons).toEqual(reasons);
    expect(failure(400, failed(undefined, 'validation failed')).message).toBe('The API rejected the input: validation failed');
    expect((failure(400, failed(undefined, 'v', { reasons: 'not a list' })) as BadRequestError).reasons).toEqual([]);
    expect(failure(400, '').message).toBe('The API rejected the input: bad request');
  });

  it("a 404 in the API's own error body is a key not found; a router's 404 is a wrong base URL", () => {
    expect(failure(404, failed(undefined, 'no such person'))).toBeInstanceOf(NotFoundError);
    expect(failure(404, failed(undefined, 'no such person')).message).toBe('Not found (404 Not Found: no such person)');
    const router = failure(404, failed(404, 'Cannot GET /v1/person'));
    expect(router).toBeInstanceOf(BadRequestError);
    expect(router.message).toBe('HTTP 404 Not Found from /person/email: Cannot GET /v1/person; check the base URL (it must end with /v2)');
    expect(failure(404, '{"error":{}}').message).toBe('HTTP 404 Not Found from /person/email; check the base URL (it must end with /v2)');
    expect(failure(404, 'Not Found')).toBeInstanceOf(BadRequestError);
    expect(failure(410, '').message).toBe('HTTP 410 Gone from /person/email');
  });

  it('only a 2xx is data: a success body at 1xx or 3xx is refused by its status', () => {
    const success = '{"status":"success","data":{"lead":{}}}';
    for (const status of [199, 300, 304]) {
      const error = failure(status, success) as BadRequestError;
      expect(error).toBeInstanceOf(BadRequestError);
      expect(error.message).toMatch(new RegExp(`^HTTP ${status}\\b.* from /person/email$`));
      expect(error.reasons).toEqual([]);
    }
    // "failed" with a code nobody knows: at a 2xx the server's failure, worth a retry; at a 3xx, the status's.
    expect(failure(299, failed(4242))).toBeInstanceOf(ApiFailedError);
    expect(failure(300, failed(4242))).toBeInstanceOf(BadRequestError);
    expect(failure(300, failed(4242))).not.toBeInstanceOf(ApiFailedError);
    expect(failure(199, failed(4242))).not.toBeInstanceOf(ApiFailedError);
  });

  it('a 400 without an error object, or with reasons that carry no messages, is worded by what it has', () => {
    expect(failure(400, '{"status":"failed"}').message).toBe('The API rejected the input: bad request');
    const silent = failure(400, failed(undefined, 'validation failed', { reasons: [{ field: ['email'] }] })) as BadRequestError;
    expect(silent.message).toBe('The API rejected the input: validation failed');
    expect(silent.reasons).toEqual([{ field: ['email'] }]);
    expect(failure(400, failed(undefined, undefined, { reasons: [{ field: ['email'] }, { messages: ['must be text'] }] })).message).toBe(
      'The API rejected the input: must be text',
    );
  });

  it('an error body at a 4xx counts as failed even without "status":"failed"; at a 2xx only "failed" does', () => {
    expect(failure(402, JSON.stringify({ error: { message: 'pay' } }))).toBeInstanceOf(PaymentRequiredError);
    expect(parseResponse(200, {}, JSON.stringify({ data: { a: 1 }, error: { code: 1000 } }), '/x', NOW).data).toEqual({ a: 1 });
  });
});

describe('a 429', () => {
  it('carries when to try again: Retry-After in seconds or as a date', () => {
    expect((failure(429, '', { 'retry-after': '30' }) as RateLimitedError).retryAt).toEqual(new Date(NOW + 30_000));
    expect((failure(429, '', { 'retry-after': 'Sat, 14 Mar 2026 10:05:00 GMT' }) as RateLimitedError).retryAt).toEqual(new Date('2026-03-14T10:05:00Z'));
    expect((failure(429, '') as RateLimitedError).retryAt).toBeUndefined();
    expect(failure(429, failed(undefined, 'slow down')).message).toBe('Rate limited (429 Too Many Requests: slow down)');
  });

  it('a wait of exactly an hour is waited; one past it is the API taken as unavailable, said in hours or days', () => {
    expect(failure(429, '', { 'retry-after': '3600' })).toBeInstanceOf(RateLimitedError);
    const hours = failure(429, '', { 'retry-after': '3601' });
    expect(hours).toBeInstanceOf(RateLimitedTooLongError);
    expect(hours.message).toBe('Rate limited (429 Too Many Requests) for 1 hours, past the 1-hour bound: taken as the API being unavailable');
    expect(failure(429, '', { 'retry-after': String(47 * 3600) }).message).toContain('for 47 hours');
    expect(failure(429, '', { 'retry-after': String(48 * 3600) }).message).toContain('for 2 days');
    expect(failure(429, '', { 'retry-after': String(10 * 24 * 3600) }).message).toContain('for 10 days');
  });
});
