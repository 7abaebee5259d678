// The flags of the commands besides enrich (registry.ts) and the sandbox (sandbox/flags.ts): the
// store commands' and mx's and whois's, one row each, of the same shape (option-row.ts). Where a
// command shares a flag with enrich (--store, --json, --budget, --config), it has the registry's row.
import { validateBaseUrl, withoutUserInfo } from '../api/base-url.js';
import { ConfigError } from '../api/errors.js';
import { RESOLVE_TIMEOUT_DEFAULT_MS, RESOLVE_TIMEOUT_MAX_MS, validateResolveTimeout } from '../api/resolve-timeout.js';
import { RuleBroken } from '../core/rule.js';
import type { OptionRows } from './option-row.js';
import * as rules from './rules.js';

/** The service the store keeps the sandbox's answers under (cli/target.ts). */
export const SANDBOX_SERVICE = 'sandbox';

/** --service as the store names services: the normalized base URL, or 'sandbox'. */
const service: rules.Rule<string> = (raw) => {
  if (raw === SANDBOX_SERVICE) return raw;
  try {
    return validateBaseUrl(String(raw));
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new RuleBroken("must be an API base URL ending in /v2 (as given to --base-url) or 'sandbox'", withoutUserInfo(raw));
  }
};

/** A whole number for validateResolveTimeout; anything else as typed, so its message shows it. */
const resolveTimeout: rules.Rule<number> = (raw) => {
  const text = String(raw).trim();
  return validateResolveTimeout(/^\d+$/.test(text) ? Number(text) : String(raw))!;
};

/** What `store export --format` writes (completion offers these). */
export const EXPORT_FORMATS = ['jsonl', 'csv'] as const;

export const COMMAND_FLAGS = {
  service: {
    flag: 'service',
    type: 'string',
    rule: service,
    help: "only the answers of this API base URL (as given to --base-url), or 'sandbox' (in the sandbox's own store unless --store)",
  },
  olderThan: {
    flag: 'older-than',
    type: 'string',
    required: true,
    rule: rules.duration,
    help: 'remove entries (and earlier answers) fetched longer ago than this: 30d, 12h, 1d12h... (units ms, s, m, h, d, w)',
  },
  exportFormat: {
    flag: 'format',
    type: 'string',
    rule: rules.oneOf(EXPORT_FORMATS),
    default: 'jsonl',
    preset: true,
    show: String,
    help: 'jsonl (one JSON object a line) or csv (the answer as JSON text in its cell)',
  },
  history: {
    flag: 'history',
    type: 'boolean',
    help: "each answer followed by the key's earlier answers, newest first, with replaced_at: when each was replaced (empty for the current one)",
  },
  // A number in --help; a bad value is still shown as typed ('abc'), not as yargs' NaN.
  timeout: {
    flag: 'timeout',
    type: 'number',
    rule: resolveTimeout,
    help: `server-side timeout in ms (1 to ${RESOLVE_TIMEOUT_MAX_MS}; server default ${RESOLVE_TIMEOUT_DEFAULT_MS})`,
  },
} as const satisfies OptionRows;
