// The sandbox server's options: the public SandboxOptions (every field optional) and the one
// place their defaults are filled in and validated (ResolvedSandboxOptions). Messages name the
// option, the rule and the value.

import { randomBytes } from 'node:crypto';
import type { ConfigError } from '../api/errors.js';
import { checked, refused } from '../options/refusal.js';
import { integerIn, ruleOf, type Rule } from '../options/rules.js';
import { DEFAULT_SANDBOX_COSTS, type SandboxCosts } from './account-data.js';
import { DEFAULT_NOT_FOUND_RATE } from './data.js';
import { validateFaults, type FaultKind, type FaultRates } from './faults.js';
import { resolveOutage, type OutageOptions } from './outage.js';
import { tokenInFile } from './token-file.js';
import type { Operation } from '../api/types.js';
import { SANDBOX_OPERATION_PATHS } from './operation-paths.js';
import { DEFAULT_SHAPES, NOT_FOUND_SHAPES, type NotFoundShape, type ServiceShapes } from './service-shapes.js';

export interface SandboxOptions {
  /** Interface to listen on. Default '127.0.0.1'. */
  host?: string;
  /** Port; 0 (the default) picks a free ephemeral port. */
  port?: number;
  /** The only accepted bearer token. Default: a fresh random JWT-shaped token. */
  token?: string;
  /**
   * A file holding the token (its first line), as `lead-enrich sandbox --token-file`: read when it
   * exists, else a fresh token is written there; every start with the same file has the same token.
   */
  tokenFile?: string;
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
  /** The same in the command line's words (`--latency`): `'50-150'` (MIN-MAX ms), `'80'` or 80. */
  latency?: string | number;
  /** Credits per FOUND lookup. Defaults person 4, company 1, mx 1, whois 1; a miss costs 0. */
  costs?: Partial<SandboxCosts>;
  /** Fraction of ordinary reverse-lookup keys that are (deterministically) not found. Default 0.1. */
  notFoundRate?: number;
  /**
   * People change jobs: at each epoch (each nextDay(), or `epoch` at the start) this share of
   * found people answer a new title and company, and a tenth as many answer not found; from
   * (key, epoch) alone (drift.ts). Default 0: every answer stays as it is.
   */
  drift?: number;
  /** The epoch to start at, as if nextDay() had been called this many times (a restart). Default 0. */
  epoch?: number;
  /** Per-request fault probabilities (sum <= 1). Default all 0. */
  faults?: Partial<Record<FaultKind, number>>;
  /** Seeds the PRNG for latency and faults. Default 1. */
  seed?: number;
  /** An outage: down for a while (or for good), then back (outage.ts). Default: none. */
  outage?: OutageOptions;
  /** How a reverse lookup that finds nothing is answered (service-shapes.ts). Default 'empty' (`lead: {}`). */
  notFoundShape?: NotFoundShape;
  /** Companies a found domain matches: more than 1 answers `lead` as an array of them. Default 1. */
  companiesPerDomain?: number;
  /** Operations answered 403 with code 1008 (the token may not use them). Default none. */
  forbidden?: Operation[];
  /** Keyed requests answered per day, then code 1017 until `nextDay()`. Default: no limit. */
  dailyLimit?: number;
  /** Phone numbers (2 credits each) on person leads, and role-based leads (2 credits) for role addresses. Default false. */
  variedPrices?: boolean;
  /**
   * Keep a log of every keyed answer sent (found or not): when, at which epoch, what it charged
   * (`sandbox.answers`; answer-log.ts). Default false: a long benchmark's memory stays flat.
   */
  answerLog?: boolean;
  /** How 429s look. Defaults: retryAfter 'none', rateLimitHeaders true, message 'code1030'. */
  rateLimitStyle?: {
    retryAfter?: 'none' | 'seconds' | 'http-date';
    rateLimitHeaders?: boolean;
    /** 'plain': code 1030 with no date in the message, so that only the headers (if any) tell when. */
    message?: 'code1030' | 'legacy' | 'plain';
  };
}

/** The defaults of the sandbox's plain options (the `sandbox` command's help shows them). */
export const SANDBOX_DEFAULTS = {
  host: '127.0.0.1',
  port: 0,
  credits: 10_000,
  threshold: 100,
  rpm: 600,
  windowMs: 60_000,
  notFoundRate: DEFAULT_NOT_FOUND_RATE,
  seed: 1,
  companiesPerDomain: 1,
} as const;

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
  drift: number;
  epoch: number;
  faults: FaultRates;
  seed: number;
  outage: OutageOptions | undefined;
  shapes: ServiceShapes;
  answerLog: boolean;
  rateLimitStyle: {
    retryAfter: 'none' | 'seconds' | 'http-date';
    rateLimitHeaders: boolean;
    message: 'code1030' | 'legacy' | 'plain';
  };
}

// A ConfigError, as every error a library caller can get is a LeadError.
function invalid(name: string, rule: string, got: unknown): ConfigError {
  return refused('sandbox', name, rule, got);
}

/** An integer option in [min, max], or `fallback` when not given. */
export function intOption(name: string, value: unknown, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  return value === undefined ? fallback : checked(value, 'sandbox', name, name, integerIn(min, max));
}

function checkKeys(name: string, value: object, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw invalid(`${name}.${key}`, `unknown option (expected one of ${allowed.join(', ')})`, key);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const OPTION_KEYS = [
  'host',
  'port',
  'token',
  'tokenFile',
  'credits',
  'threshold',
  'rpm',
  'windowMs',
  'latencyMs',
  'latency',
  'costs',
  'notFoundRate',
  'drift',
  'epoch',
  'faults',
  'seed',
  'rateLimitStyle',
  'outage',
  'notFoundShape',
  'companiesPerDomain',
  'forbidden',
  'dailyLimit',
  'variedPrices',
  'answerLog',
] as const;

function booleanOption(name: string, value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw invalid(name, 'must be a boolean', value);
  return value === true;
}

/** The service's shapes beyond the interface (service-shapes.ts), each off unless asked for. */
function resolveShapes(o: Record<string, unknown>): ServiceShapes {
  const notFound = o.notFoundShape ?? DEFAULT_SHAPES.notFound;
  if (!NOT_FOUND_SHAPES.includes(notFound as NotFoundShape)) throw invalid('notFoundShape', `must be one of ${NOT_FOUND_SHAPES.join(', ')}`, notFound);
  const forbidden = o.forbidden ?? [];
  if (!Array.isArray(forbidden) || !forbidden.every((op) => Object.hasOwn(SANDBOX_OPERATION_PATHS, op as string))) {
    throw invalid('forbidden', `must be a list of operations (${Object.keys(SANDBOX_OPERATION_PATHS).join(', ')})`, forbidden);
  }
  const variedPrices = o.variedPrices ?? false;
  if (typeof variedPrices !== 'boolean') throw invalid('variedPrices', 'must be a boolean', variedPrices);
  return {
    notFound: notFound as NotFoundShape,
    companies: intOption('companiesPerDomain', o.companiesPerDomain, SANDBOX_DEFAULTS.companiesPerDomain, 1, 100),
    forbidden: forbidden as Operation[],
    dailyLimit: o.dailyLimit === undefined ? undefined : intOption('dailyLimit', o.dailyLimit, 0, 0),
    variedPrices,
  };
}

/** The token: given, kept in a file, or fresh. */
function tokenOf(o: Record<string, unknown>): string {
  if (o.token !== undefined && o.tokenFile !== undefined) throw invalid('tokenFile', 'must not be given with token (one of them)', o.tokenFile);
  if (o.tokenFile !== undefined && (typeof o.tokenFile !== 'string' || o.tokenFile === '')) throw invalid('tokenFile', 'must be a file path', o.tokenFile);
  let token = o.token;
  if (typeof o.tokenFile === 'string') {
    try {
      token = tokenInFile(o.tokenFile, generateToken);
    } catch (error) {
      throw invalid('tokenFile', `must be a file it can read or create (${(error as Error).message})`, o.tokenFile);
    }
  }
  token ??= generateToken();
  if (typeof token !== 'string' || token === '' || /[\s\x00-\x1f\x7f]/.test(token)) {
    throw invalid(
      o.tokenFile === undefined ? 'token' : 'tokenFile',
      'must hold a non-empty string without whitespace or control characters',
      o.tokenFile ?? token,
    );
  }
  return token;
}

/** `--latency`'s words: `'50-150'` (MIN-MAX ms), `'80'` or 80, as [min, max] ms. */
export const latencyWords: Rule<[number, number]> = ruleOf('must be MS or MIN-MAX in ms with MIN <= MAX, such as 50-150', (raw) => {
  const match = typeof raw === 'string' || typeof raw === 'number' ? /^(\d+)(?:-(\d+))?$/.exec(String(raw).trim()) : null;
  if (!match) return undefined;
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : Number(match[2]);
  return max < min ? undefined : [min, max];
});

/** The latency range: `latencyMs`, or `latency` in the command line's words. */
function latencyOf(o: Record<string, unknown>): [number, number] {
  if (o.latency !== undefined && o.latencyMs !== undefined) throw invalid('latency', 'must not be given with latencyMs (one of them)', o.latency);
  return o.latency !== undefined ? checked(o.latency, 'sandbox', 'latency', 'latency', latencyWords) : latencyPair(o.latencyMs ?? [0, 0]);
}

/** A latency as setLatency() takes it: in the command line's words (`'50-150'`, `'80'`, 80) or as [min, max] ms. */
export function latencyOption(latency: unknown): [number, number] {
  return Array.isArray(latency) ? latencyPair(latency, 'latency') : checked(latency, 'sandbox', 'latency', 'latency', latencyWords);
}

function latencyPair(latency: unknown, name = 'latencyMs'): [number, number] {
  if (
    !Array.isArray(latency) ||
    latency.length !== 2 ||
    !latency.every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0) ||
    (latency[0] as number) > (latency[1] as number)
  ) {
    throw invalid(name, 'must be [min, max] with 0 <= min <= max (ms)', latency);
  }
  return [latency[0] as number, latency[1] as number];
}

function generateToken(): string {
  const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
  const header = b64({ alg: 'HS256', typ: 'JWT' });
  const payload = b64({ sub: 'lead-enrich-sandbox', iat: Math.floor(Date.now() / 1000), jti: randomBytes(8).toString('hex') });
  return `${header}.${payload}.${randomBytes(32).toString('base64url')}`;
}

function resolveCosts(costsIn: unknown): SandboxCosts {
  if (!isPlainObject(costsIn)) throw invalid('costs', 'must be an object', costsIn);
  checkKeys('costs', costsIn, ['person', 'company', 'mx', 'whois']);
  return {
    person: intOption('costs.person', costsIn.person, DEFAULT_SANDBOX_COSTS.person, 0),
    company: intOption('costs.company', costsIn.company, DEFAULT_SANDBOX_COSTS.company, 0),
    mx: intOption('costs.mx', costsIn.mx, DEFAULT_SANDBOX_COSTS.mx, 0),
    whois: intOption('costs.whois', costsIn.whois, DEFAULT_SANDBOX_COSTS.whois, 0),
  };
}

function resolveRateLimitStyle(styleIn: unknown): ResolvedSandboxOptions['rateLimitStyle'] {
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
  return { retryAfter, rateLimitHeaders, message };
}

/** Fills defaults and validates, in one place. Messages name the option, the rule and the value. */
export function resolveSandboxOptions(options: SandboxOptions = {}): ResolvedSandboxOptions {
  if (!isPlainObject(options)) throw invalid('options', 'must be an object', options);
  checkKeys('options', options, OPTION_KEYS);
  const o = options as Record<string, unknown>;

  const host = o.host ?? SANDBOX_DEFAULTS.host;
  if (typeof host !== 'string' || host === '') throw invalid('host', 'must be a non-empty string', host);

  const token = tokenOf(o);
  const latency = latencyOf(o);

  const costs = resolveCosts(o.costs ?? {});

  const notFoundRate = o.notFoundRate ?? SANDBOX_DEFAULTS.notFoundRate;
  if (typeof notFoundRate !== 'number' || !Number.isFinite(notFoundRate) || notFoundRate < 0 || notFoundRate > 1) {
    throw invalid('notFoundRate', 'must be a number between 0 and 1', notFoundRate);
  }

  const drift = o.drift ?? 0;
  if (typeof drift !== 'number' || !Number.isFinite(drift) || drift < 0 || drift > 1) throw invalid('drift', 'must be a number between 0 and 1', drift);

  const seed = o.seed ?? SANDBOX_DEFAULTS.seed;
  if (typeof seed !== 'number' || !Number.isInteger(seed)) throw invalid('seed', 'must be an integer', seed);

  const rateLimitStyle = resolveRateLimitStyle(o.rateLimitStyle ?? {});

  return {
    host,
    port: intOption('port', o.port, SANDBOX_DEFAULTS.port, 0, 65535),
    token,
    credits: intOption('credits', o.credits, SANDBOX_DEFAULTS.credits, 0),
    threshold: intOption('threshold', o.threshold, SANDBOX_DEFAULTS.threshold, 0),
    rpm: intOption('rpm', o.rpm, SANDBOX_DEFAULTS.rpm, 1),
    windowMs: intOption('windowMs', o.windowMs, SANDBOX_DEFAULTS.windowMs, 1),
    latencyMs: latency,
    costs,
    notFoundRate,
    drift,
    epoch: intOption('epoch', o.epoch, 0, 0),
    faults: validateFaults(o.faults),
    seed,
    outage: o.outage === undefined ? undefined : (resolveOutage(o.outage as OutageOptions, Date.now()), o.outage as OutageOptions),
    shapes: resolveShapes(o),
    answerLog: booleanOption('answerLog', o.answerLog),
    rateLimitStyle,
  };
}
