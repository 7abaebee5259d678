// An outage of the sandbox (docs/cli-contract.md, "An API that fails"): from `afterMs` after it starts (or
// after setOutage()), for `forMs`, every lookup (or, with scope 'all', every request) fails the
// same way — 503 with no body, a reset connection, or no answer at all (hang) — then the server is
// back. The account reads answer throughout unless the scope is 'all', as when only the lookup
// service is down. Requests received while down are counted, so tests can bound what a client sent.
import type { ConfigError } from '../api/errors.js';
import { refused } from '../options/refusal.js';

export type OutageKind = 'error503' | 'reset' | 'hang';

export interface OutageOptions {
  /** When it begins, ms after the server starts (or after setOutage()). Default 0. */
  afterMs?: number;
  /** How long it lasts, ms. Default: for good. */
  forMs?: number;
  /** How a request fails while down: 'error503' (or '503', as `--outage-kind` says it), 'reset' or 'hang'. Default 'error503'. */
  kind?: OutageKind | '503';
  /** What is down: the lookups and domain helpers, or every request. Default 'lookups'. */
  scope?: 'lookups' | 'all';
}

export interface Outage {
  from: number;
  until: number;
  kind: OutageKind;
  scope: 'lookups' | 'all';
}

const KINDS: Readonly<Record<string, OutageKind>> = { error503: 'error503', '503': 'error503', reset: 'reset', hang: 'hang' };

/** The outage kind `word` names (`503` as the command line says it, or the option's own `error503`), or undefined. */
export function outageKindOf(word: unknown): OutageKind | undefined {
  return typeof word === 'string' && Object.hasOwn(KINDS, word) ? KINDS[word] : undefined;
}
const ACCOUNT_OPERATIONS = new Set(['myplans', 'credits', 'limits']);

function invalid(name: string, rule: string, got: unknown): ConfigError {
  return refused('sandbox', `outage.${name}`, rule, got);
}

/** The outage as absolute times, counted from `now`; ConfigError naming what is wrong. */
export function resolveOutage(options: OutageOptions, now: number): Outage {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw refused('sandbox', 'outage', 'must be an object such as { afterMs: 1000, forMs: 8000 }', options);
  }
  for (const key of Object.keys(options)) {
    if (!['afterMs', 'forMs', 'kind', 'scope'].includes(key)) throw invalid(key, 'unknown option (expected afterMs, forMs, kind or scope)', key);
  }
  const afterMs = options.afterMs ?? 0;
  const forMs = options.forMs ?? Infinity;
  if (!(Number.isFinite(afterMs) && afterMs >= 0)) throw invalid('afterMs', 'must be a number of ms, 0 or more', afterMs);
  if (!(forMs > 0)) throw invalid('forMs', 'must be a number of ms above 0 (or Infinity)', forMs);
  const kind = outageKindOf(options.kind ?? 'error503');
  if (kind === undefined) throw invalid('kind', "must be one of error503 (or '503'), reset, hang", options.kind);
  const scope = options.scope ?? 'lookups';
  if (scope !== 'lookups' && scope !== 'all') throw invalid('scope', "must be 'lookups' or 'all'", scope);
  return { from: now + afterMs, until: now + afterMs + forMs, kind, scope };
}

/** The way a request fails now, or undefined when the outage does not reach it. */
export function outageFault(outage: Outage | undefined, at: number, operation: string | undefined): OutageKind | undefined {
  if (!outage || at < outage.from || at >= outage.until) return undefined;
  if (outage.scope === 'lookups' && operation !== undefined && ACCOUNT_OPERATIONS.has(operation)) return undefined;
  return outage.kind;
}
