// The options of `new LeadClient({...})` (docs/cli-contract.md, "Library"), checked in one place:
// unknown names are refused (a typo such as `rmp` would otherwise silently mean "no rate limit"),
// and every message names the option, the rule and what was got (src/options/rules.ts).
import { didYouMean } from '../options/did-you-mean.js';
import { readOption } from '../options/option-table.js';
import { checked } from '../options/refusal.js';
import { nonNegativeInteger, positiveInteger, shown } from '../options/rules.js';
import { ConfigError } from '../api/errors.js';
import type { TransportOptions } from '../api/transport.js';

/** How single calls are retried (the pipeline's policy, src/lookup/request-path/retry-policy.ts). */
export interface ClientRetryOptions {
  /** Retries after the first attempt for transient failures. Default 4. */
  retries?: number;
  /** First backoff in ms; doubles each time. Default 500. */
  baseDelayMs?: number;
  /** Longest backoff in ms. Default 30000. */
  maxDelayMs?: number;
}

export interface LeadClientOptions extends TransportOptions {
  /**
   * Default true: retry what the CLI retries (429, 5xx, network failures, timeouts, bad bodies;
   * never 400, 401 or 402). `false`: every failure surfaces at once. An object tunes the backoff.
   */
  retry?: boolean | ClientRetryOptions;
  /**
   * One rate limit shared by every call of this client, paced evenly as in `enrich`: N requests
   * per window, or 'account' to size it from /account/limits (read before the first call).
   * Not given: no gate (a 429 is still retried, after the server's pause, unless `retry: false`).
   */
  rpm?: number | 'account';
  /** The server's rate window in ms (docs/api-behaviour-notes.md: 60000). Tests shorten it. */
  windowMs?: number;
}

/** The checked options: the transport's as given, retry and rate settled. */
export interface ClientSettings {
  transport: TransportOptions;
  /** undefined: no retry. */
  retry: ClientRetryOptions | undefined;
  rpm: number | 'account' | undefined;
  windowMs: number | undefined;
}

const TRANSPORT_KEYS = ['baseUrl', 'token', 'timeoutMs', 'maxBodyBytes', 'userAgent', 'proxy'] as const;
const CLIENT_KEYS = [...TRANSPORT_KEYS, 'retry', 'rpm', 'windowMs'] as const;
const RETRY_KEYS = ['retries', 'baseDelayMs', 'maxDelayMs'] as const;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** `prefix` names where the keys sit: '' for the options, 'retry.' for the retry object. */
function refuseUnknown(prefix: string, given: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(given)) {
    if (given[key] === undefined || known.includes(key)) continue;
    const guess = didYouMean(key, known);
    throw new ConfigError(
      `Unknown LeadClient option '${prefix}${key}'${guess ? ` (did you mean '${prefix}${guess}'?)` : ''}: expected one of ${known.map((k) => prefix + k).join(', ')}`,
    );
  }
}

function retryOptions(raw: unknown): ClientRetryOptions | undefined {
  if (raw === undefined || raw === true) return {};
  if (raw === false) return undefined;
  if (!isPlainObject(raw))
    throw new ConfigError(`Invalid LeadClient option retry: must be true, false or { retries, baseDelayMs, maxDelayMs }, got ${shown(raw)}`);
  refuseUnknown('retry.', raw, RETRY_KEYS);
  const count = (name: keyof ClientRetryOptions) =>
    raw[name] === undefined ? undefined : checked(raw[name], 'library', `retry.${name}`, name, nonNegativeInteger);
  const retries = count('retries');
  const baseDelayMs = count('baseDelayMs');
  const maxDelayMs = count('maxDelayMs');
  return {
    ...(retries === undefined ? {} : { retries }),
    ...(baseDelayMs === undefined ? {} : { baseDelayMs }),
    ...(maxDelayMs === undefined ? {} : { maxDelayMs }),
  };
}

function rpmOption(raw: unknown): number | 'account' | undefined {
  if (raw === undefined || raw === 'account') return raw;
  try {
    return positiveInteger(raw);
  } catch {
    throw new ConfigError(`Invalid LeadClient option rpm: must be a positive whole number or 'account', got ${shown(raw)}`);
  }
}

export function checkClientOptions(options: unknown): ClientSettings {
  if (!isPlainObject(options)) {
    throw new ConfigError(`Invalid LeadClient options: must be an object such as { baseUrl, token }, got ${shown(options)}`);
  }
  refuseUnknown('', options, CLIENT_KEYS);
  const transport: Record<string, unknown> = {};
  for (const key of TRANSPORT_KEYS) if (options[key] !== undefined) transport[key] = options[key];
  // The options a run has too, by the same rules (the base URL and the token are the transport's to check).
  if (options.timeoutMs !== undefined) transport.timeoutMs = readOption('timeoutMs', options.timeoutMs, 'library');
  if (options.proxy !== undefined) transport.proxy = readOption('proxy', options.proxy, 'library');
  if (options.maxBodyBytes !== undefined) transport.maxBodyBytes = checked(options.maxBodyBytes, 'library', 'maxBodyBytes', 'maxBodyBytes', positiveInteger);
  return {
    transport: transport as unknown as TransportOptions,
    retry: retryOptions(options.retry),
    rpm: rpmOption(options.rpm),
    windowMs: options.windowMs === undefined ? undefined : readOption('windowMs', options.windowMs, 'library'),
  };
}
