// The sandbox server: a local, deterministic implementation of the Lead Lookup interface
// (../../../shared/spec/lead-api-interface.md) that behaves like the production server as the
// behaviour notes describe it (error bodies, 401 before the path, 429 with code 1030, 402 on
// credits, empty leads for misses). Used by `--sandbox`, by every test and by the benchmarks.
// node:http only: it must serve a few thousand requests per second on 100+ keep-alive sockets.
//
// Per request, in this order (the order the production server is documented to follow):
//   1. fault injection (seeded): a faulted request is not processed, not charged, not accepted;
//   2. auth: `Authorization` must be exactly `Bearer <token>`, else 401 — before the path;
//   3. rate window: fixed windows of `windowMs` from server start; every authenticated request
//      counts; once `rpm` were accepted in the window -> 429 until the window ends;
//   4. unknown path (or wrong method) -> 404;
//   5. validation -> 400 with `reasons` (data.ts decides for the key itself);
//   6. credits -> 402 when the balance is <= 0, or when a found answer costs more than is left;
//   7. the answer (data.ts), charging the cost of a found result.
// Latency (seeded, uniform in `latencyMs`) is counted from the request's arrival and applied
// before the response is written; the request is processed (and charged) on arrival.

import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { inspect } from 'node:util';
import { OPERATION_PATHS, type Operation } from '../api/types.js';
import {
  DEFAULT_NOT_FOUND_RATE,
  DEFAULT_SANDBOX_COSTS,
  isSandboxKeyOperation,
  normalizeSandboxKey,
  SANDBOX_KEY_PARAMS,
  sandboxAnswer,
  sandboxCost,
  sandboxCredits,
  sandboxLimits,
  sandboxPlans,
  validationReason,
  type SandboxCosts,
  type SandboxKeyOperation,
  type ValidationReason,
} from './data.js';
import { applyFault, emptyFaultCounts, pickFault, validateFaults, type FaultKind, type FaultRates } from './faults.js';
import { createRandom, deriveSeed } from './random.js';

export type { FaultKind } from './faults.js';

export interface SandboxOptions {
  /** Interface to listen on. Default '127.0.0.1'. */
  host?: string;
  /** Port; 0 (the default) picks a free ephemeral port. */
  port?: number;
  /** The only accepted bearer token. Default: a fresh random JWT-shaped token. */
  token?: string;
  /** Starting credit balance. Default 10000. */
  credits?: number;
  /** `low_credit_balance_min_threshold` reported by /account/credits. Default 100. */
  threshold?: number;
  /** Requests accepted per fixed window. Default 600. */
  rpm?: number;
  /** Window length in ms. Default 60000 (tests shorten it). */
  windowMs?: number;
  /** Uniform random latency per request, [min, max] ms. Default [0, 0]. */
  latencyMs?: [number, number];
  /** Credits per FOUND lookup. Defaults person 4, company 1, mx 1, whois 1; a miss costs 0. */
  costs?: Partial<SandboxCosts>;
  /** Fraction of ordinary reverse-lookup keys that are (deterministically) not found. Default 0.1. */
  notFoundRate?: number;
  /** Per-request fault probabilities (sum <= 1). Default all 0. */
  faults?: Partial<Record<FaultKind, number>>;
  /** Seeds the PRNG for latency and faults. Default 1. */
  seed?: number;
  /** How 429s look. Defaults: retryAfter 'none', rateLimitHeaders true, message 'code1030'. */
  rateLimitStyle?: {
    retryAfter?: 'none' | 'seconds' | 'http-date';
    rateLimitHeaders?: boolean;
    /** 'plain': code 1030 with no date in the message, so that only the headers (if any) tell when. */
    message?: 'code1030' | 'legacy' | 'plain';
  };
}

export interface SandboxWindowStats {
  /** Window start, epoch ms. */
  start: number;
  /** Every request received during the window (faulted and unauthorized ones included). */
  requests: number;
  /** Requests that passed the rate check. */
  accepted: number;
  /** 429s sent. */
  limited: number;
}

export interface SandboxStats {
  /** Every HTTP request received. */
  requests: number;
  /** By Operation (src/api/types.ts), plus 'unknown' for any other method/path. */
  byOperation: Record<string, number>;
  rateLimited: number;
  unauthorized: number;
  paymentRequired: number;
  creditsCharged: number;
  /** `${operation}:${normalizedKey}` -> number of found (billable) answers sent for it. */
  charges: Map<string, number>;
  faults: Record<FaultKind, number>;
  /** One entry per fixed rate window that received at least one request, oldest first. */
  windows: SandboxWindowStats[];
}

export interface Sandbox {
  /** e.g. http://127.0.0.1:PORT/v2 */
  readonly baseUrl: string;
  readonly token: string;
  /** Live object: updated as requests arrive. */
  readonly stats: SandboxStats;
  /** Current balance. */
  readonly credits: number;
  setCredits(n: number): void;
  /** From now on every request gets 401. */
  revokeToken(): void;
  /** Replaces the fault probabilities (kinds not named become 0). */
  setFaults(f: Partial<Record<FaultKind, number>>): void;
  /** Stops listening and destroys every open socket (hanging and keep-alive ones included). */
  close(): Promise<void>;
}

/** SandboxOptions with every default filled in (the one place defaults live). */
export interface ResolvedSandboxOptions {
  host: string;
  port: number;
  token: string;
  credits: number;
  threshold: number;
  rpm: number;
  windowMs: number;
  latencyMs: [number, number];
  costs: SandboxCosts;
  notFoundRate: number;
  faults: FaultRates;
  seed: number;
  rateLimitStyle: {
    retryAfter: 'none' | 'seconds' | 'http-date';
    rateLimitHeaders: boolean;
    message: 'code1030' | 'legacy' | 'plain';
  };
}

// ---------------------------------------------------------------------------------------------
// Options

function invalid(name: string, rule: string, got: unknown): Error {
  return new Error(`Invalid sandbox option ${name}: ${rule}, got ${inspect(got)}`);
}

function intOption(name: string, value: unknown, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const rule =
      max === Number.MAX_SAFE_INTEGER
        ? min === 0
          ? 'must be a non-negative integer'
          : `must be an integer >= ${min}`
        : `must be an integer between ${min} and ${max}`;
    throw invalid(name, rule, value);
  }
  return value;
}

function checkKeys(name: string, value: object, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw invalid(`${name}.${key}`, `unknown option (expected one of ${allowed.join(', ')})`, key);
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const OPTION_KEYS = [
  'host', 'port', 'token', 'credits', 'threshold', 'rpm', 'windowMs', 'latencyMs', 'costs',
  'notFoundRate', 'faults', 'seed', 'rateLimitStyle',
] as const;

function generateToken(): string {
  const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
  const header = b64({ alg: 'HS256', typ: 'JWT' });
  const payload = b64({ sub: 'lead-enrich-sandbox', iat: Math.floor(Date.now() / 1000), jti: randomBytes(8).toString('hex') });
  return `${header}.${payload}.${randomBytes(32).toString('base64url')}`;
}

/** Fills defaults and validates, in one place. Messages name the option, the rule and the value. */
export function resolveSandboxOptions(options: SandboxOptions = {}): ResolvedSandboxOptions {
  if (!isPlainObject(options)) throw invalid('options', 'must be an object', options);
  checkKeys('options', options, OPTION_KEYS);
  const o = options as Record<string, unknown>;

  const host = o.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host === '') throw invalid('host', 'must be a non-empty string', host);

  const token = o.token ?? generateToken();
  if (typeof token !== 'string' || token === '' || /[\s\x00-\x1f\x7f]/.test(token)) {
    throw invalid('token', 'must be a non-empty string without whitespace or control characters', token);
  }

  const latency = o.latencyMs ?? [0, 0];
  if (
    !Array.isArray(latency) ||
    latency.length !== 2 ||
    !latency.every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0) ||
    (latency[0] as number) > (latency[1] as number)
  ) {
    throw invalid('latencyMs', 'must be [min, max] with 0 <= min <= max (ms)', latency);
  }

  const costsIn = o.costs ?? {};
  if (!isPlainObject(costsIn)) throw invalid('costs', 'must be an object', costsIn);
  checkKeys('costs', costsIn, ['person', 'company', 'mx', 'whois']);
  const costs: SandboxCosts = {
    person: intOption('costs.person', costsIn.person, DEFAULT_SANDBOX_COSTS.person, 0),
    company: intOption('costs.company', costsIn.company, DEFAULT_SANDBOX_COSTS.company, 0),
    mx: intOption('costs.mx', costsIn.mx, DEFAULT_SANDBOX_COSTS.mx, 0),
    whois: intOption('costs.whois', costsIn.whois, DEFAULT_SANDBOX_COSTS.whois, 0),
  };

  const notFoundRate = o.notFoundRate ?? DEFAULT_NOT_FOUND_RATE;
  if (typeof notFoundRate !== 'number' || !Number.isFinite(notFoundRate) || notFoundRate < 0 || notFoundRate > 1) {
    throw invalid('notFoundRate', 'must be a number between 0 and 1', notFoundRate);
  }

  const seed = o.seed ?? 1;
  if (typeof seed !== 'number' || !Number.isInteger(seed)) throw invalid('seed', 'must be an integer', seed);

  const styleIn = o.rateLimitStyle ?? {};
  if (!isPlainObject(styleIn)) throw invalid('rateLimitStyle', 'must be an object', styleIn);
  checkKeys('rateLimitStyle', styleIn, ['retryAfter', 'rateLimitHeaders', 'message']);
  const retryAfter = styleIn.retryAfter ?? 'none';
  if (retryAfter !== 'none' && retryAfter !== 'seconds' && retryAfter !== 'http-date') {
    throw invalid('rateLimitStyle.retryAfter', "must be 'none', 'seconds' or 'http-date'", retryAfter);
  }
  const rateLimitHeaders = styleIn.rateLimitHeaders ?? true;
  if (typeof rateLimitHeaders !== 'boolean') throw invalid('rateLimitStyle.rateLimitHeaders', 'must be a boolean', rateLimitHeaders);
  const message = styleIn.message ?? 'code1030';
  if (message !== 'code1030' && message !== 'legacy' && message !== 'plain') {
    throw invalid('rateLimitStyle.message', "must be 'code1030', 'legacy' or 'plain'", message);
  }

  return {
    host,
    port: intOption('port', o.port, 0, 0, 65535),
    token,
    credits: intOption('credits', o.credits, 10000, 0),
    threshold: intOption('threshold', o.threshold, 100, 0),
    rpm: intOption('rpm', o.rpm, 600, 1),
    windowMs: intOption('windowMs', o.windowMs, 60000, 1),
    latencyMs: [latency[0] as number, latency[1] as number],
    costs,
    notFoundRate,
    faults: validateFaults(o.faults),
    seed,
    rateLimitStyle: { retryAfter, rateLimitHeaders, message },
  };
}

// ---------------------------------------------------------------------------------------------
// Routing and fixed bodies

const BASE_PATH = '/v2';
const ROUTES = new Map<string, Operation>(
  (Object.entries(OPERATION_PATHS) as Array<[Operation, { method: string; path: string }]>).map(([op, r]) => [
    `${r.method} ${BASE_PATH}${r.path}`,
    op,
  ]),
);

const JSON_TYPE = 'application/json; charset=utf-8';
const BODY_401 = JSON.stringify({
  status: 'failed',
  error: { code: 1000, message: 'Invalid API Token, please generate new token' },
});
const BODY_402 = JSON.stringify({
  status: 'failed',
  error: { code: 1002, message: 'You have exhausted your credits, please add additional credits to continue' },
});
const BODY_404 = JSON.stringify({ status: 'failed', error: { code: 404, message: 'Not found' } });
const BODY_413 = JSON.stringify({ status: 'failed', error: { code: 413, message: 'Payload Too Large' } });
/** MX and Whois bodies are tiny; anything bigger is refused rather than buffered. */
const MAX_BODY_BYTES = 64 * 1024;
/** Interface 4.4 / 4.5: timeout maximum. */
const MAX_TIMEOUT_MS = 110_000;

type Headers = Record<string, string | number>;

function validationBody(reasons: ValidationReason[]): string {
  return JSON.stringify({ status: 'failed', error: { message: 'validation failed', reasons } });
}

/** "YYYY-MM-DD HH:MM:SS" in UTC (the 1030 message's form). */
function utcStamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

// ---------------------------------------------------------------------------------------------
// Server

export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const opts = resolveSandboxOptions(options);
  const { rpm, windowMs, rateLimitStyle } = opts;
  const expectedAuth = `Bearer ${opts.token}`;
  const faultRandom = createRandom(deriveSeed(opts.seed, 0));
  const latencyRandom = createRandom(deriveSeed(opts.seed, 1));
  const [latencyMin, latencyMax] = opts.latencyMs;

  let balance = opts.credits;
  let revoked = false;
  let faultRates = opts.faults;
  let anyFault = Object.values(faultRates).some((p) => p > 0);

  const byOperation: Record<string, number> = { unknown: 0 };
  for (const op of Object.keys(OPERATION_PATHS)) byOperation[op] = 0;
  const stats: SandboxStats = {
    requests: 0,
    byOperation,
    rateLimited: 0,
    unauthorized: 0,
    paymentRequired: 0,
    creditsCharged: 0,
    charges: new Map(),
    faults: emptyFaultCounts(),
    windows: [],
  };

  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let startMs = Date.now();
  let windowIndex = -1;
  let current: SandboxWindowStats = { start: startMs, requests: 0, accepted: 0, limited: 0 };

  /** The fixed window `now` falls in (never going back if the clock does). */
  function windowAt(now: number): SandboxWindowStats {
    const index = Math.max(windowIndex, Math.floor((now - startMs) / windowMs));
    if (index !== windowIndex) {
      windowIndex = index;
      current = { start: startMs + index * windowMs, requests: 0, accepted: 0, limited: 0 };
      stats.windows.push(current);
    }
    return current;
  }

  function drawLatency(): number {
    if (latencyMax === 0) return 0;
    if (latencyMin === latencyMax) return latencyMin;
    return latencyMin + latencyRandom() * (latencyMax - latencyMin);
  }

  /** Runs `fn` once `latency` ms have passed since `arrival`. */
  function after(arrival: number, latency: number, fn: () => void): void {
    const wait = latency - (Date.now() - arrival);
    if (wait <= 0) {
      fn();
      return;
    }
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, wait);
    timers.add(t);
  }

  function send(res: ServerResponse, status: number, body: string, headers: Headers): void {
    if (res.destroyed || res.headersSent) return;
    headers['content-type'] = JSON_TYPE;
    headers['content-length'] = Buffer.byteLength(body);
    res.writeHead(status, headers);
    res.end(body);
  }

  function rateHeaders(remaining: number, resetSeconds: number): Headers {
    return {
      'x-ratelimit-limit': rpm,
      'x-ratelimit-remaining': remaining,
      'x-ratelimit-reset': resetSeconds,
    };
  }

  function tooManyRequests(now: number, windowEnd: number, resetSeconds: number): { body: string; headers: Headers } {
    // The stamp is rounded UP to a whole second: a client waiting until the stamp must find the
    // window over, which a truncated stamp would not guarantee.
    const endCeil = Math.ceil(windowEnd / 1000) * 1000;
    const body =
      rateLimitStyle.message === 'code1030'
        ? JSON.stringify({
            status: 'failed',
            error: { code: 1030, message: `Too many requests, Retry after ${utcStamp(endCeil)} UTC` },
          })
        : rateLimitStyle.message === 'plain'
          ? JSON.stringify({ status: 'failed', error: { code: 1030, message: 'Too many requests' } })
          : JSON.stringify({
              status: 'failed',
              error: { message: `Too many requests, Retry after ${new Date(endCeil).toString()}` },
            });
    const headers: Headers = rateLimitStyle.rateLimitHeaders ? rateHeaders(0, resetSeconds) : {};
    if (rateLimitStyle.retryAfter === 'seconds') {
      headers['retry-after'] = Math.max(1, Math.ceil((windowEnd - now) / 1000));
    } else if (rateLimitStyle.retryAfter === 'http-date') {
      headers['retry-after'] = new Date(endCeil).toUTCString();
    }
    return { body, headers };
  }

  /** Steps 5 to 7 for a keyed operation, once its raw key (or the reasons it has none) is known. */
  function answerKeyed(op: SandboxKeyOperation, raw: string | undefined, reasons: ValidationReason[]): { status: number; body: string } {
    let key: string | undefined;
    if (raw !== undefined) {
      key = normalizeSandboxKey(op, raw);
      const answer = sandboxAnswer(op, key, { notFoundRate: opts.notFoundRate });
      if (answer.kind === 'rejected') reasons.push(...answer.reasons);
      if (reasons.length === 0) {
        const cost = answer.kind === 'found' ? sandboxCost(op, opts.costs) : 0;
        if (balance <= 0 || cost > balance) {
          stats.paymentRequired++;
          return { status: 402, body: BODY_402 };
        }
        if (answer.kind === 'found') {
          balance -= cost;
          stats.creditsCharged += cost;
          const chargeKey = `${op}:${key}`;
          stats.charges.set(chargeKey, (stats.charges.get(chargeKey) ?? 0) + 1);
        }
        if (answer.kind !== 'rejected') {
          return { status: 200, body: JSON.stringify({ status: 'success', data: answer.data }) };
        }
      }
    }
    return { status: 400, body: validationBody(reasons) };
  }

  /** Reads the key of a POST (MX, Whois) body: `{domain, timeout?}` (interface 4.4, 4.5). */
  function parseDomainBody(op: SandboxKeyOperation, text: string): { raw: string | undefined; reasons: ValidationReason[] } {
    const reasons: ValidationReason[] = [];
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!isPlainObject(body)) {
      reasons.push(validationReason('value', 'body', 'must be a valid JSON object', 'object.base'));
      return { raw: undefined, reasons };
    }
    const { name } = SANDBOX_KEY_PARAMS[op];
    const domain = body[name];
    let raw: string | undefined;
    if (domain === undefined) reasons.push(validationReason(name, 'body', 'is required', 'any.required'));
    else if (typeof domain !== 'string') reasons.push(validationReason(name, 'body', 'must be a string', 'string.base'));
    else raw = domain;
    const timeout = body.timeout;
    if (timeout !== undefined) {
      if (typeof timeout !== 'number' || !Number.isFinite(timeout)) {
        reasons.push(validationReason('timeout', 'body', 'must be a number', 'number.base'));
      } else if (timeout <= 0) {
        reasons.push(validationReason('timeout', 'body', 'must be a positive number', 'number.positive'));
      } else if (timeout > MAX_TIMEOUT_MS) {
        reasons.push(validationReason('timeout', 'body', `must be less than or equal to ${MAX_TIMEOUT_MS}`, 'number.max'));
      }
    }
    return { raw, reasons };
  }

  function onRequest(req: IncomingMessage, res: ServerResponse): void {
    const arrival = Date.now();
    const win = windowAt(arrival);
    stats.requests++;
    win.requests++;

    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const op = ROUTES.get(`${req.method ?? ''} ${path}`);
    stats.byOperation[op ?? 'unknown'] = (stats.byOperation[op ?? 'unknown'] ?? 0) + 1;

    // 1. Faults: drawn first, so a faulted request never reaches auth, the window or the balance.
    const fault = pickFault(faultRates, faultRandom, anyFault);
    const latency = drawLatency();
    if (fault !== undefined) {
      stats.faults[fault]++;
      after(arrival, latency, () => applyFault(fault, req, res));
      return;
    }

    // 2. Auth, before the path (behaviour notes, "Error bodies": 401).
    if (revoked || req.headers.authorization !== expectedAuth) {
      stats.unauthorized++;
      after(arrival, latency, () => send(res, 401, BODY_401, {}));
      return;
    }

    // 3. Rate window: every authenticated request counts, account operations and unknown paths too.
    const windowEnd = win.start + windowMs;
    const resetSeconds = Math.max(0, Math.ceil((windowEnd - arrival) / 1000));
    if (win.accepted >= rpm) {
      win.limited++;
      stats.rateLimited++;
      const { body, headers } = tooManyRequests(arrival, windowEnd, resetSeconds);
      after(arrival, latency, () => send(res, 429, body, headers));
      return;
    }
    win.accepted++;
    const remaining = Math.max(0, rpm - win.accepted);
    const headersFor = (): Headers => rateHeaders(remaining, resetSeconds);

    // 4. Path.
    if (op === undefined) {
      after(arrival, latency, () => send(res, 404, BODY_404, headersFor()));
      return;
    }

    // 5-7. Operations.
    if (!isSandboxKeyOperation(op)) {
      let data: unknown;
      if (op === 'myplans') data = sandboxPlans();
      else if (op === 'credits') data = sandboxCredits(balance, opts.threshold);
      else data = sandboxLimits(rpm, remaining, new Date(windowEnd));
      const body = JSON.stringify({ status: 'success', data });
      after(arrival, latency, () => send(res, 200, body, headersFor()));
      return;
    }

    const param = SANDBOX_KEY_PARAMS[op];
    if (param.location === 'query') {
      const value = q < 0 ? null : new URLSearchParams(url.slice(q + 1)).get(param.name);
      const reasons =
        value === null ? [validationReason(param.name, 'query', 'is required', 'any.required')] : [];
      const { status, body } = answerKeyed(op, value ?? undefined, reasons);
      after(arrival, latency, () => send(res, status, body, headersFor()));
      return;
    }

    // POST: read the (small) JSON body first. A client that goes away meanwhile is never charged.
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        tooLarge = true;
        res.setHeader('connection', 'close');
        after(arrival, latency, () => send(res, 413, BODY_413, headersFor()));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (tooLarge) return;
      const { raw, reasons } = parseDomainBody(op, Buffer.concat(chunks, size).toString('utf8'));
      const { status, body } = answerKeyed(op, raw, reasons);
      after(arrival, latency, () => send(res, status, body, headersFor()));
    });
  }

  const server: Server = createServer(onRequest);
  // Longer than typical client keep-alive idle times, so the server is not the side that closes
  // an idle socket just as a client reuses it (that race looks like a spurious ECONNRESET).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    server.listen(opts.port, opts.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  // Windows are aligned to the moment the server is ready to accept requests.
  startMs = Date.now();

  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('sandbox: server has no TCP address');
  const hostPart = address.address.includes(':') ? `[${address.address}]` : address.address;
  const baseUrl = `http://${hostPart}:${address.port}${BASE_PATH}`;

  let closing: Promise<void> | undefined;

  return {
    baseUrl,
    token: opts.token,
    stats,
    get credits(): number {
      return balance;
    },
    setCredits(n: number): void {
      balance = intOption('credits', n, balance, 0);
    },
    revokeToken(): void {
      revoked = true;
    },
    setFaults(f: Partial<Record<FaultKind, number>>): void {
      faultRates = validateFaults(f);
      anyFault = Object.values(faultRates).some((p) => p > 0);
    },
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
      return closing;
    },
  };
}
