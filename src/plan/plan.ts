// The "plan" step of the data path (docs/architecture.md): which lookup each row needs and its normalized,
// validated key, decided without any request. Detection of the key column from the header lives
// in detect.ts (its rules are documented there, for docs/reference.md); key normalization in
// normalize.ts. This module is the single import for the rest of the pipeline.

import type { LookupTarget } from './detect.js';
import { normalizeKey, type LookupKind, type NormalizeResult } from './normalize.js';
import { fromBytes } from '../read/index.js';

export type { LookupKind, NormalizeResult } from './normalize.js';
export {
  LOOKUP_KINDS,
  normalizeKey,
  normalizeEmail,
  normalizeUrl,
  normalizeDomain,
  domainForRow,
} from './normalize.js';
export type { LookupTarget, DetectOptions } from './detect.js';
export { detectTarget, detectDomainColumn, detectDomainColumnBeside, parseLookupKind, describeHeader } from './detect.js';

export { LOOKUP_OPERATION } from '../core/kinds.js';

/** `--shard K/N`: this worker takes the rows whose key hashes to shard `index` (1-based) of `count`. */
export interface Shard {
  index: number;
  count: number;
}

/**
 * A stable 32-bit hash of a key for --shard, the same in every process and version: FNV-1a,
 * then murmur3's final mix, without which FNV-1a's low bits split similar keys (emails that
 * differ in a digit) unevenly between shards.
 */
export function shardHash(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return hash >>> 0;
}

export type PlannedRow =
  /** Another shard's row. */
  | { kind: 'elsewhere' }
  | { kind: 'invalid'; message: string }
  /** The key cell is empty or only spaces: not an error (a CRM export with blank emails), no request. */
  | { kind: 'no_key'; message: string }
  | { kind: 'key'; key: string };

/** A row's key cell for one target: its text, and the normalized key or why there is none. */
function keyCell(cells: readonly string[], target: LookupTarget): { raw: string; normalized: NormalizeResult } {
  const raw = fromBytes(cells[target.columnIndex] ?? '');
  // A key that is not valid UTF-8 (a file saved in another encoding) would be looked up, and
  // paid for, as something the user never wrote.
  const normalized: NormalizeResult = raw.includes('\uFFFD')
    ? { ok: false, reason: 'the key is not valid UTF-8 (is the file saved in another encoding?)' }
    : normalizeKey(target.kind, raw);
  return { raw, normalized };
}

/** Whether a row's `shardKey` belongs to another worker's shard. By the normalized key, so every spelling meets in one shard. */
function elsewhere(shardKey: string, shard: Shard | undefined): boolean {
  return shard !== undefined && (shardHash(shardKey) % shard.count) + 1 !== shard.index;
}

/** Cells past the header's width that are not empty: the row is not what the header says. */
function extraCells(cells: readonly string[], width: number): string | undefined {
  if (cells.length <= width) return undefined;
  const extra = cells.slice(width);
  if (!extra.some((cell) => cell !== '')) return undefined;
  return `row has ${cells.length} cells but the header has ${width}; extra cells: ${JSON.stringify(extra.map(fromBytes))}`;
}

/**
 * What one input row needs, decided without any request: the same for a real run and a dry run.
 * `cells` are byte strings (read.ts); `width` is the header's.
 */
export function planRow(cells: readonly string[], target: LookupTarget, width: number, shard: Shard | undefined): PlannedRow {
  const { raw, normalized } = keyCell(cells, target);
  if (elsewhere(normalized.ok ? normalized.key : raw, shard)) return { kind: 'elsewhere' };
  const extra = extraCells(cells, width);
  if (extra !== undefined) return { kind: 'invalid', message: extra };
  if (raw.trim() === '') return { kind: 'no_key', message: `${target.columnName}: the key cell is empty; no request was made` };
  if (!normalized.ok) return { kind: 'invalid', message: `${target.columnName}: ${normalized.reason}` };
  return { kind: 'key', key: normalized.key };
}

/** One well-formed key of a waterfall row: which target (kind and column) it is for. */
export interface WaterfallKey {
  target: LookupTarget;
  key: string;
}

export type PlannedWaterfallRow = Exclude<PlannedRow, { kind: 'key' }> | { kind: 'keys'; keys: WaterfallKey[] };

/**
 * A waterfall row (docs/cli-contract.md, "Waterfall"): its well-formed keys in the order of --by; a kind
 * whose cell is empty or malformed is passed over with no request. No well-formed key: `no_key`
 * when every key cell is empty, else `invalid` (the first malformed one says why). The shard is
 * chosen by the first well-formed key, so a row stays in one shard whatever answers it.
 */
export function planWaterfallRow(cells: readonly string[], targets: readonly LookupTarget[], width: number, shard: Shard | undefined): PlannedWaterfallRow {
  const keys: WaterfallKey[] = [];
  let malformed: string | undefined;
  let firstRaw: string | undefined;
  for (const target of targets) {
    const { raw, normalized } = keyCell(cells, target);
    firstRaw ??= raw;
    if (normalized.ok) keys.push({ target, key: normalized.key });
    else if (raw.trim() !== '') malformed ??= `${target.columnName}: ${normalized.reason}`;
  }
  if (elsewhere(keys[0]?.key ?? firstRaw ?? '', shard)) return { kind: 'elsewhere' };
  const extra = extraCells(cells, width);
  if (extra !== undefined) return { kind: 'invalid', message: extra };
  if (keys.length > 0) return { kind: 'keys', keys };
  if (malformed !== undefined) return { kind: 'invalid', message: malformed };
  return { kind: 'no_key', message: `${targets.map((t) => t.columnName).join(', ')}: every key cell is empty; no request was made` };
}
