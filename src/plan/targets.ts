// Which column each lookup kind reads (docs/cli-contract.md, `--by`, `--column`, "Waterfall"): one kind
// (detected from the header when --by is not given), or a list tried in order, each with its own
// column (given with --column in the same order, else detected).
import { ConfigError } from '../api/errors.js';
import type { Extra } from '../core/kinds.js';
import { optionWord } from '../options/option-table.js';
import { detectDomainColumn, detectDomainColumnBeside, detectTarget, type LookupTarget } from './detect.js';
import type { LookupKind } from './normalize.js';

/** The target of each kind, in order. */
export function detectTargets(header: readonly string[], kinds: readonly LookupKind[] | undefined, columns: readonly string[] | undefined): LookupTarget[] {
  if (columns && columns.length > Math.max(1, kinds?.length ?? 1)) {
    const [column, by] = [optionWord('column'), optionWord('by')];
    throw new ConfigError(
      `Invalid option ${column}: ${columns.length} columns for ${kinds?.length ?? 1} lookup kind(s); give ${column} once per kind of ${by}, in the same order`,
    );
  }
  if (!kinds || kinds.length === 1) {
    const kind = kinds?.[0];
    return [detectTarget(header, { ...(kind ? { by: kind } : {}), ...(columns?.[0] !== undefined ? { column: columns[0] } : {}) })];
  }
  return kinds.map((kind, i) => detectTarget(header, { by: kind, ...(columns?.[i] !== undefined ? { column: columns[i] } : {}) }));
}

/** The columns a run adds describe a person when any kind finds persons (email, url), else a company. */
export function columnKind(targets: readonly LookupTarget[]): LookupKind {
  return targets.some((t) => t.kind !== 'domain') ? targets.find((t) => t.kind !== 'domain')!.kind : 'domain';
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
