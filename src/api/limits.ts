// Parsing of the rate-limit facts the server hands out in its several forms:
// - `/account/limits` strings such as "600 RPM" or "5 parallel bulk jobs" (interface 2.7),
// - 429 hints: `Retry-After` (seconds or HTTP date), `x-ratelimit-reset` (seconds until the
//   window resets) and the code-1030 message "...Retry after <timestamp> UTC" (docs/api-behaviour-notes.md).
import type { ServiceLimits } from './types.js';
import { BadResponseError } from './errors.js';

/** "600 RPM" → 600; "1,200 RPM" → 1200; "5 parallel bulk jobs" → 5. */
export function parseLimitCount(text: unknown, field: string): number {
  const match = typeof text === 'string' ? /^\s*(\d[\d,_]*)/.exec(text) : null;
  if (typeof text === 'number' && Number.isFinite(text) && text >= 0) return Math.floor(text);
  if (!match?.[1]) {
    throw new BadResponseError(`Unreadable ${field} in /account/limits: expected a count such as "600 RPM", got ${JSON.stringify(text)}`);
  }
  return Number(match[1].replace(/[,_]/g, ''));
}

export interface RateLimitFacts {
  /** Requests per minute the account may make. */
  rpm: number;
  /** Requests left in the current window. */
  remaining: number;
  /** When the current window ends; undefined when the server's timestamp is unreadable. */
  resetAt: Date | undefined;
  /** Parallel bulk verification jobs allowed (informational). */
  bulkConcurrency: number | undefined;
}

export function parseServiceLimits(limits: ServiceLimits): RateLimitFacts {
  const rate = limits?.email_verify?.api_rate_limit;
  if (!rate) throw new BadResponseError('Unreadable /account/limits: no email_verify.api_rate_limit object');
  const rpm = parseLimitCount(rate.total, 'api_rate_limit.total');
  const remaining = Math.min(rpm, parseLimitCount(rate.remaining ?? rate.total, 'api_rate_limit.remaining'));
  const bulk = limits.email_verify.bulk_verify_concurrency_limit;
  let bulkConcurrency: number | undefined;
  try {
    bulkConcurrency = bulk ? parseLimitCount(bulk.total, 'bulk_verify_concurrency_limit.total') : undefined;
  } catch {
    bulkConcurrency = undefined;
  }
  return { rpm, remaining, resetAt: parseTimestamp(rate.next_limit_reset), bulkConcurrency };
}

/** A timestamp in any form the server uses: ISO 8601, "YYYY-MM-DD HH:MM:SS UTC", HTTP date, slash dates. */
export function parseTimestamp(text: unknown): Date | undefined {
  if (typeof text !== 'string' || text.trim() === '') return undefined;
  let value = text.trim();
  // "2026-11-22 10:00:00 UTC", "2026/11/22 10:00:00" and the bare slash date "2026/12/01"
  // (interface 2.5's sample) parse in V8 only partly, or as *local* time: make them ISO, in UTC,
  // so the result does not depend on the host's time zone.
  const plain = /^(\d{4})[-/](\d{2})[-/](\d{2})(?:[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?))?\s*(UTC|GMT|Z)?$/i.exec(value);
  if (plain) value = `${plain[1]}-${plain[2]}-${plain[3]}T${plain[4] ?? '00:00:00'}Z`;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

type HeaderBag = Record<string, string | string[] | undefined>;

function header(headers: HeaderBag, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The longest wait a rate-limit hint is honoured for. The server's window is a minute; an hour
 * covers any plausible reset, and a longer hint (a Retry-After of ten years) would stall a cron
 * run without end: past it the API counts as unavailable and --patience decides.
 */
export const MAX_RATE_WAIT_MS = 60 * 60_000;

/** Rate hints come rounded to the second (Retry-After, x-ratelimit-reset, the code-1030 message): a wait after a 429 is at least this. */
export const HINT_ROUNDING_MS = 1000;

/**
 * When a rate-limited request may be sent again. The most specific hint wins: `Retry-After`,
 * then the "Retry after <timestamp>" message, then `x-ratelimit-reset`. Undefined when none is usable.
 */
export function retryAtFrom(headers: HeaderBag, message: string | undefined, now: number = Date.now()): Date | undefined {
  const retryAfter = header(headers, 'retry-after')?.trim();
  if (retryAfter) {
    if (/^\d+(\.\d+)?$/.test(retryAfter)) return new Date(now + Number(retryAfter) * 1000);
    const date = parseTimestamp(retryAfter);
    if (date) return date;
  }
  const inMessage = message ? /retry after\s+(.+?)\s*\.?$/i.exec(message) : null;
  if (inMessage?.[1]) {
    const date = parseTimestamp(inMessage[1]);
    if (date) return date;
  }
  const reset = header(headers, 'x-ratelimit-reset')?.trim();
  if (reset && /^\d+(\.\d+)?$/.test(reset)) {
    const n = Number(reset);
    // Documented as seconds until the reset; a value that looks like epoch seconds is taken as one.
    return new Date(n > 1_000_000_000 ? n * 1000 : now + n * 1000);
  }
  return undefined;
}

export interface RateHeaders {
  limit: number | undefined;
  remaining: number | undefined;
  /** Absolute time of the window reset. */
  resetAt: Date | undefined;
}

/** The `x-ratelimit-*` headers of any response, when present. */
export function rateHeadersFrom(headers: HeaderBag, now: number = Date.now()): RateHeaders | undefined {
  const limit = header(headers, 'x-ratelimit-limit');
  const remaining = header(headers, 'x-ratelimit-remaining');
  const reset = header(headers, 'x-ratelimit-reset');
  if (limit === undefined && remaining === undefined && reset === undefined) return undefined;
  const num = (v: string | undefined) => (v !== undefined && /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : undefined);
  const resetSeconds = num(reset);
  return {
    limit: num(limit),
    remaining: num(remaining),
    resetAt: resetSeconds === undefined ? undefined : new Date(resetSeconds > 1_000_000_000 ? resetSeconds * 1000 : now + resetSeconds * 1000),
  };
}
