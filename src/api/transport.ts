// The one place that speaks HTTP: got with bearer auth, a per-request timeout, a cap on body
// size, keep-alive agents, and every failure mapped to one error class (errors.ts): an answer's by
// error-factory.ts, a connection's by network-errors.ts.
// got's own retry is off: retrying belongs to the pipeline's single retry policy (retry.ts).
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import got, { type Got, type Response } from 'got';
import { BASE_URL_GIVEN, said, TOKEN_GIVEN } from './caller-words.js';
import { maskToken } from './mask-token.js';
import { networkFailure } from './network-errors.js';
import { proxySetup, type ProxySetup } from './proxy.js';
import { BadRequestError, BadResponseError, ClientClosedError, ConfigError, type LeadEnrichError, TimeoutError } from './errors.js';
import { errorFromAnswer } from './error-factory.js';
import { rateHeadersFrom, type RateHeaders } from './limits.js';
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
    // After close() the agents refuse to connect (refusingOnceClosed): a ClientClosedError all the same.
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
      let request: { destroy(error?: Error): unknown; res?: { complete: boolean } | null } | undefined;
      pending.on('request', (made) => {
        request = made;
      });
      pending.on('downloadProgress', (progress) => {
        if (progress.transferred > this.#maxBodyBytes && !oversize) {
          oversize = true;
          // Only a body still arriving is cut off: one that has all arrived is refused below (on
          // Node 22, destroying the request of a complete response raised an error that got no
          // longer listened for, and the process ended on it).
          if (request?.res?.complete !== true) request?.destroy(new Error('response body too large'));
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
    // got gives every ReadError a code (ECONNRESET, a length mismatch, or its own).
    if (err.name === 'ReadError') return new BadResponseError(`Response from ${path} was cut short (${err.code})`, { cause });
    // The system error underneath got's (its host, address and port say which end failed); none
    // (undefined or null) spreads as nothing.
    const system = { ...(err.cause as object | undefined), code: err.code, message: err.message };
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
 * whole URL in a refused tunnel's message), as typed and as decoded. Exported for its own tests:
 * the Node releases CI runs (22.23, 24.22, 26.12) no longer write it, so no request shows it.
 */
export function withoutSecret(error: Error, password: string | undefined): Error {
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

/**
 * name, message, code and stack of an error (and of its own causes, three deep), nothing else.
 * Exported for its own tests: no real request fails with a chain that deep or a code not a string.
 */
export function safeCause(error: unknown, depth = 0): Error {
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
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** An HTTP answer to its data, or thrown as the error it means (error-factory.ts); its body parsed once. */
export function parseResponse<T>(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
  path: string,
  now: number = Date.now(),
): ApiResponse<T> {
  const body = parseJson(text);
  const error = errorFromAnswer({ status, headers, text, body, path, now });
  if (error) return fail(error);
  return { data: (body as { data: T }).data, status, rate: rateHeadersFrom(headers, now) };
}

function fail(error: LeadEnrichError): never {
  throw error;
}
