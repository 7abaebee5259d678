// Which column each lookup kind reads (cli-contract, `--by`, `--column`, "Waterfall"): one kind
// (detected from the header when --by is not given), or a list tried in order, each with its own
// column (given with --column in the same order, else detected).
import { ConfigError } from '../api/errors.js';
import { invalid } from '../options/rules.js';
import type { Extra } from '../options/enrich-options.js';
import { detectDomainColumn, detectDomainColumnBeside, detectTarget, type LookupTarget } from './detect.js';
import { LOOKUP_KINDS, type LookupKind } from './normalize.js';

/** `--by email,url` (or a list, or one kind): the kinds in order, each once. `name` is the option as the caller spells it. */
export function parseKinds(name: string, raw: unknown): LookupKind[] | undefined {
  if (raw === undefined) return undefined;
  const rule = 'must be email, url or domain, or a list of them in the order to try, such as email,url';
  const items = (Array.isArray(raw) ? raw : [raw]).flatMap((item) => String(item).split(',')).map((s) => s.trim().toLowerCase()).filter(Boolean);
  if (items.length === 0) throw invalid(name, rule, raw);
  for (const item of items) if (!(LOOKUP_KINDS as readonly string[]).includes(item)) throw invalid(name, rule, item);
  const twice = items.find((kind, i) => items.indexOf(kind) !== i);
  if (twice) throw new ConfigError(`Invalid option ${name}: ${twice} is named twice in '${items.join(',')}'; name each kind once`);
  return items as LookupKind[];
}

/** The target of each kind, in order. */
export function detectTargets(header: readonly string[], kinds: readonly LookupKind[] | undefined, columns: readonly string[] | undefined): LookupTarget[] {
  if (columns && columns.length > Math.max(1, kinds?.length ?? 1)) {
    throw new ConfigError(`Invalid option --column: ${columns.length} columns for ${kinds?.length ?? 1} lookup kind(s); give --column once per kind of --by, in the same order`);
  }
  if (!kinds || kinds.length === 1) {
    const kind = kinds?.[0];
    return [detectTarget(header, { ...(kind ? { by: kind } : {}), ...(columns?.[0] !== undefined ? { column: columns[0] } : {}) })];
  }
  return kinds.map((kind, i) => detectTarget(header, { by: kind, ...(columns?.[i] !== undefined ? { column: columns[i] } : {}) }));
}

/** The columns a run adds describe a person when any kind finds persons (email, url), else a company. */
export function columnKind(targets: readonly LookupTarget[]): LookupKind {
  return targets.some((t) => t.kind !== 'domain') ? (targets.find((t) => t.kind !== 'domain')!.kind) : 'domain';
}

/**
 * The column a --with domain may come from besides the key: the waterfall's own domain column,
 * else one named like a domain (`Website`, `Company Domain`): for MX/Whois of profile-URL rows,
 * and for the company of rows whose email is a free mail address.
 */
export function domainColumnFor(header: readonly string[], targets: readonly LookupTarget[], extras: readonly Extra[]): LookupTarget | undefined {
  const own = targets.find((t) => t.kind === 'domain');
  if (own) return own;
  const first = targets[0]!;
  if (extras.includes('company')) return detectDomainColumnBeside(header, first.columnIndex);
  const url = targets.find((t) => t.kind === 'url');
  return extras.length > 0 && url ? detectDomainColumn(header, url) : undefined;
}
