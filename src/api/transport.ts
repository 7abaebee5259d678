// The one place that speaks HTTP: got with bearer auth, a per-request timeout, a cap on body
// size, keep-alive agents, and every failure mapped to one error class (errors.ts).
// got's own retry is off: retrying belongs to the pipeline's single retry policy (retry.ts).
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import got, { type Got, type Response } from 'got';
import { BASE_URL_GIVEN, said, TOKEN_GIVEN } from './caller-words.js';
import { maskToken } from './mask-token.js';
import { networkFailure } from './network-errors.js';
import { proxySetup, type ProxySetup } from './proxy.js';
import {
  ApiFailedError,
  BadRequestError,
  BadResponseError,
  ClientClosedError,
  ConfigError,
  DailyLimitError,
  ForbiddenError,
  LeadEnrichError,
  NotFoundError,
  PaymentRequiredError,
  RateLimitedError,
  RateLimitedTooLongError,
  ServerError,
  TimeoutError,
  UnauthorizedError,
  type ValidationReason,
} from './errors.js';
import { MAX_RATE_WAIT_MS, rateHeadersFrom, retryAtFrom, type RateHeaders } from './limits.js';
import type { ErrorBody } from './types.js';
import { validateBaseUrl } from './base-url.js';
import { ACCEPT_ENCODING, BodyDecodeError, decodeBody } from './decode-body.js';
import { maskSecret } from './mask-secret.js';
import { DEFAULT_TIMEOUT_MS } from './request-timeout.js';

export interface TransportOptions {
  /** Ends with `/v2` (interface part 9). */
  baseUrl: string;
  token: string;
  /** Whole-request timeout in ms, body included (a trickling body times out too). Default DEFAULT_TIMEOUT_MS. */
  timeoutMs?: number;
  /** Larger bodies, as they arrive or once decoded, are cut off and reported as a bad response. Default 8 MiB. */
  maxBodyBytes?: number;
  userAgent?: string;
  /** A proxy URL (the config file's `proxy`); without it HTTPS_PROXY / HTTP_PROXY / NO_PROXY apply (proxy.ts). */
  proxy?: string | undefined;
}

export interface ApiResponse<T> {
  data: T;
  status: number;
  rate: RateHeaders | undefined;
}

export interface RequestSpec {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
  /** Overrides the transport's timeout (MX/Whois wait up to 110 s server-side). */
  timeoutMs?: number;
}

export class Transport {
  readonly baseUrl: string;
  readonly #token: string;
  readonly #timeoutMs: number;
  readonly #maxBodyBytes: number;
  readonly #userAgent: string;
  readonly #proxy: ProxySetup;
  readonly #agents: { http: http.Agent; https: https.Agent };
  #closed = false;
  /**
   * got with every option that never changes set once: got validates and merges each option it
   * is given on every request, which was the largest cost per lookup in the no-limit benchmark.
   */
  readonly #got: Got;

  constructor(options: TransportOptions) {
    if (!options.baseUrl) throw new ConfigError(`No API base URL: give ${said(BASE_URL_GIVEN)} (the service's address, ending in /v2)`);
    this.baseUrl = validateBaseUrl(options.baseUrl);
    const token = withoutScheme(options.token);
    if (!token || /\s/.test(token)) {
      throw new ConfigError(`No usable API token: ${said({ cli: `set ${TOKEN_GIVEN.cli}`, library: `give ${TOKEN_GIVEN.library}` })}`);
    }
    // Node refuses such a header value at send time (ERR_INVALID_CHAR), which would surface as a
    // transient NetworkError on every row instead of one configuration error. The token itself
    // is never quoted.
    if (/[^\x21-\x7e\x80-\xff]/.test(token)) {
      throw new ConfigError(
        `Invalid API token: it contains a control character or a character outside Latin-1, which cannot be sent in an HTTP header; check ${said(TOKEN_GIVEN)}`,
      );
    }
    this.#token = token;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#maxBodyBytes = options.maxBodyBytes ?? 8 * 1024 * 1024;
    this.#userAgent = options.userAgent ?? 'lead-enrich';
    this.#proxy = proxySetup(this.baseUrl, options.proxy);
    // Node's own agents tunnel through the proxy (proxyEnv: Node 22.21 and 24.5 on), keep-alive kept.
    const agentOptions = { keepAlive: true, keepAliveMsecs: 1000, ...(this.#proxy.env ? { proxyEnv: this.#proxy.env } : {}) };
    this.#agents = {
      http: refusingOnceClosed(new http.Agent(agentOptions), () => this.#closed),
      https: refusingOnceClosed(new https.Agent(agentOptions), () => this.#closed),
    };
    this.#got = got.extend({
      headers: { authorization: `Bearer ${this.#token}`, 'user-agent': this.#userAgent, accept: 'application/json', 'accept-encoding': ACCEPT_ENCODING },
      timeout: { request: this.#timeoutMs },
      retry: { limit: 0 },
      throwHttpErrors: false,
      followRedirect: false,
      // Decoded here, within the body cap (decode-body.ts).
      decompress: false,
      responseType: 'buffer',
      agent: this.#agents,
    });
  }

  async request<T>(spec: RequestSpec): Promise<ApiResponse<T>> {
    if (this.#closed) throw new ClientClosedError();
    const url = new URL(this.baseUrl + spec.path);
    for (const [name, value] of Object.entries(spec.query ?? {})) url.searchParams.set(name, value);
    let oversize = false;
    let response: Response<Uint8Array>;
    try {
      const pending = this.#got(url, {
        method: spec.method,
        ...(spec.body ? { json: spec.body } : {}),
        ...(spec.timeoutMs === undefined ? {} : { timeout: { request: spec.timeoutMs } }),
      });
      // got 15 dropped cancel(): the oversize body is cut off at its socket's request instead
      // (an AbortController per request would cost every lookup for a case that is rare).
      let request: { destroy(error?: Error): unknown } | undefined;
      pending.on('request', (made) => {
        request = made;
      });
      pending.on('downloadProgress', (progress) => {
        if (progress.transferred > this.#maxBodyBytes && !oversize) {
          oversize = true;
          request?.destroy(new Error('response body too large'));
        }
      });
      response = (await pending) as unknown as Response<Uint8Array>;
      // A body that arrived whole before the cut-off took effect is refused all the same.
      if (oversize) throw new Error('response body too large');
    } catch (error) {
      // Refused at the closed agent (got copies the cause's code); one cut off in flight by
      // close() stays the network failure it is.
      if ((error as { code?: unknown }).code === 'client_closed') throw new ClientClosedError();
      throw this.#scrub(this.#failure(error, url, spec.path, oversize));
    }
    try {
      const text = UTF8.decode(await this.#decoded(response, spec.path));
      const answer = parseResponse<T>(response.statusCode, response.headers, text, spec.path);
      answer.data = maskSecret(answer.data, text, this.#token);
      return answer;
    } catch (error) {
      throw this.#scrub(error);
    }
  }

  async #decoded(response: Response<Uint8Array>, path: string): Promise<Uint8Array> {
    try {
      return await decodeBody(response.body, response.headers['content-encoding'], this.#maxBodyBytes);
    } catch (error) {
      if (!(error instanceof BodyDecodeError)) throw error;
      const details = { status: response.statusCode };
      if (error.kind === 'too_large') {
        return fail(new BadResponseError(`Response from ${path} exceeded ${this.#maxBodyBytes} bytes once decoded (${error.message}); refused`, details));
      }
      return fail(new BadResponseError(`Response from ${path} could not be decoded: ${error.message}`, details));
    }
  }

  #failure(error: unknown, url: URL, path: string, oversize: boolean): LeadEnrichError {
    // got's errors hold the request options, Authorization header included: util.inspect(error),
    // console.error(error) or a logger that walks `cause` would print the token. Only a copy
    // without the options is kept as the cause.
    const cause = withoutSecret(safeCause(error), this.#proxy.proxy?.url.password);
    if (oversize) return new BadResponseError(`Response from ${path} exceeded ${this.#maxBodyBytes} bytes; refused`, { cause });
    const err = error as { name?: string; code?: string; message?: string; cause?: unknown };
    if (err.name === 'TimeoutError') return new TimeoutError(`No complete answer from ${path} within the timeout`, { cause });
    if (err.name === 'ReadError') return new BadResponseError(`Response from ${path} was cut short (${err.code ?? 'read error'})`, { cause });
    // The system error underneath got's (its host, address and port say which end failed).
    const system = { ...(typeof err.cause === 'object' && err.cause !== null ? err.cause : {}), code: err.code, message: err.message };
    const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
    return networkFailure(system, { host: url.hostname, port, path }, this.#proxy.proxy, cause);
  }

  /** Names the account without revealing the token: a SHA-256 of it (for Redis key names). */
  tokenFingerprint(): string {
    return createHash('sha256').update(this.#token).digest('hex');
  }

  /** A server that echoes the token back in its error message must not make us print it. */
  #scrub<E>(error: E): E {
    if (error instanceof Error) error.message = maskToken(error.message, this.#token);
    if (error instanceof BadRequestError) {
      for (const reason of error.reasons) {
        if (Array.isArray(reason.messages)) reason.messages = reason.messages.map((m) => maskToken(String(m), this.#token));
      }
    }
    return error;
  }

  /** Ends the connections; a request not on the wire yet (got makes it a few ticks later) is never sent. */
  close(): void {
    this.#closed = true;
    this.#agents.http.destroy();
    this.#agents.https.destroy();
  }
}

/** As got decoded text: a byte-order mark dropped, a malformed sequence replaced. */
const UTF8 = new TextDecoder();

/**
 * The token as pasted, less a leading `Bearer ` or `Bearer:`: the service's pages show all three
 * forms, and the header adds the scheme itself. Its form is never checked (they are not JWTs).
 */
function withoutScheme(token: string | undefined): string {
  return typeof token === 'string' ? token.replace(/^\s*bearer(?:\s+|\s*:\s*)/i, '') : '';
}

/**
 * After close() the agent opens no connection: got puts a request on the wire a few ticks after
 * it is asked for, and a destroyed agent would still open a new socket for it, so a lookup the
 * caller no longer waits for (enrichRows' break) would be sent, and paid, after all.
 */
function refusingOnceClosed<A extends http.Agent>(agent: A, closed: () => boolean): A {
  const open = agent.createConnection.bind(agent) as (options: object, callback: (error: Error | null, socket?: unknown) => void) => unknown;
  (agent as unknown as { createConnection: typeof open }).createConnection = (options, callback) => {
    if (!closed()) return open(options, callback);
    callback(new ClientClosedError());
    return undefined;
  };
  return agent;
}

/**
 * A proxy's password out of an error's messages and stacks (Node 22.21 and 24.5 put the proxy's
 * whole URL in a refused tunnel's message), as typed and as decoded.
 */
function withoutSecret(error: Error, password: string | undefined): Error {
  if (!password) return error;
  const secrets = [...new Set([password, decodeURIComponent(password)])];
  // In a URL it stands between the user name's colon and the host's @.
  const clean = (text: string) => secrets.reduce((out, secret) => out.split(`:${secret}@`).join(':***@'), text);
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    e.message = clean(e.message);
    if (e.stack) e.stack = clean(e.stack);
  }
  return error;
}

/** name, message, code and stack of an error (and of its own causes), nothing else. */
function safeCause(error: unknown, depth = 0): Error {
  const source = (error ?? {}) as { name?: unknown; message?: unknown; code?: unknown; stack?: unknown; cause?: unknown };
  const message = typeof source.message === 'string' ? source.message : String(error);
  const inner = depth < 3 && source.cause !== undefined && source.cause !== null ? safeCause(source.cause, depth + 1) : undefined;
  const copy = new Error(message, inner === undefined ? undefined : { cause: inner }) as Error & { code?: string };
  if (typeof source.name === 'string') copy.name = source.name;
  if (typeof source.code === 'string') copy.code = source.code;
  if (typeof source.stack === 'string') copy.stack = source.stack;
  return copy;
}

function parseJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function describeStatus(status: number): string {
  return `${status} ${http.STATUS_CODES[status] ?? ''}`.trim();
}

/** The single factory from an HTTP answer to data or to one error class (docs/api-behaviour-notes.md, "Error bodies"). */
export function parseResponse<T>(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
  path: string,
  now: number = Date.now(),
): ApiResponse<T> {
  const body = parseJson(text) as (ErrorBody & { data?: unknown }) | undefined;
  const rate = rateHeadersFrom(headers, now);
  const isObject = body !== undefined && body !== null && typeof body === 'object' && !Array.isArray(body);
  const failed = isObject && (body.status === 'failed' || (status >= 400 && body.error !== undefined));
  const apiCode = isObject && typeof body.error?.code === 'number' ? body.error.code : undefined;
  const serverMessage = isObject && typeof body.error?.message === 'string' ? body.error.message : undefined;
  const details = { status, ...(apiCode === undefined ? {} : { apiCode }) };

  if (status >= 200 && status < 300 && !failed) {
    if (!isObject) {
      throw new BadResponseError(`Response from ${path} is not a JSON object (${text.length === 0 ? 'empty body' : 'unparseable body'})`, details);
    }
    if (body.data === null || typeof body.data !== 'object' || Array.isArray(body.data)) {
      throw new BadResponseError(`Response from ${path} has no data object`, details);
    }
    return { data: body.data as T, status, rate };
  }

  const said = serverMessage ? `: ${serverMessage}` : '';
  const answer: FailedAnswer = { status, path, said, details, headers, serverMessage, now };
  // The API's code decides before the HTTP status: the same code comes at 200, 400, 403 or 429.
  const byCode = apiCode === undefined ? undefined : meaningOfCode(apiCode, answer);
  if (byCode) return fail(byCode);
  if (status === 400) {
    const reasons = Array.isArray(body?.error?.reasons) ? (body.error.reasons as ValidationReason[]) : [];
    const reasonText = reasons.flatMap((r) => r.messages ?? []).join('; ');
    const message = reasonText || serverMessage || 'bad request';
    return fail(new BadRequestError(`The API rejected the input: ${message}`, reasons, details));
  }
  if (status >= 200 && status < 300) {
    // "status":"failed" at HTTP 200 with a code we don't know: the server says it failed; retryable.
    return fail(new ApiFailedError(`The API answered "failed"${apiCode === undefined ? '' : ` (code ${apiCode})`}${said}`, details));
  }
  if (status >= 500 || status === 408) {
    const what = isObject ? said : text.length === 0 ? ' (no body)' : ' (non-JSON body)';
    return fail(new ServerError(`Server error ${describeStatus(status)} from ${path}${what}`, details));
  }
  // A 404 in the API's own error body (not a router's, which repeats the status as its code) is
  // the service saying the key was not found; any other is a path that does not exist.
  if (status === 404 && isObject && body.status === 'failed' && apiCode !== 404) {
    return fail(new NotFoundError(`Not found (${describeStatus(status)}${said})`, details));
  }
  return fail(
    meaningOfStatus(answer) ??
      new BadRequestError(
        `HTTP ${describeStatus(status)} from ${path}${said}${status === 404 ? '; check the base URL (it must end with /v2)' : ''}`,
        [],
        details,
      ),
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

function fail(error: LeadEnrichError): never {
  throw error;
}
