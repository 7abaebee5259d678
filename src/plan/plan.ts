// The "plan" step of the data path (design.md): which lookup each row needs and its normalized,
// validated key, decided without any request. Detection of the key column from the header lives
// in detect.ts (its rules are documented there, for the README); key normalization in
// normalize.ts. This module is the single import for the rest of the pipeline.

import type { Operation } from '../api/types.js';
import type { LookupTarget } from './detect.js';
import { normalizeKey, type LookupKind, type NormalizeResult } from './normalize.js';
import { fromBytes } from '../pipeline/read.js';

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
export { detectTarget, detectDomainColumn, parseLookupKind, describeHeader } from './detect.js';

/** The API operation behind each `--by` kind (interface 4.1-4.3). */
export const LOOKUP_OPERATION: Record<LookupKind, Operation> = {
  email: 'lookup_email',
  url: 'lookup_url',
  domain: 'lookup_domain',
};

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
  | { kind: 'key'; key: string };

/**
 * What one input row needs, decided without any request: the same for a real run and a dry run.
 * `cells` are byte strings (read.ts); `width` is the header's.
 */
export function planRow(cells: readonly string[], target: LookupTarget, width: number, shard: Shard | undefined): PlannedRow {
  const raw = fromBytes(cells[target.columnIndex] ?? '');
  // A key that is not valid UTF-8 (a file saved in another encoding) would be looked up, and
  // paid for, as something the user never wrote.
  const normalized: NormalizeResult = raw.includes('\uFFFD')
    ? { ok: false, reason: 'the key is not valid UTF-8 (is the file saved in another encoding?)' }
    : normalizeKey(target.kind, raw);
  // By the normalized key, so that every spelling of a key meets in one shard.
  if (shard && (shardHash(normalized.ok ? normalized.key : raw) % shard.count) + 1 !== shard.index) return { kind: 'elsewhere' };
  if (cells.length > width) {
    const extra = cells.slice(width);
    if (extra.some((cell) => cell !== '')) {
      return { kind: 'invalid', message: `row has ${cells.length} cells but the header has ${width}; extra cells: ${JSON.stringify(extra.map(fromBytes))}` };
    }
  }
  if (!normalized.ok) return { kind: 'invalid', message: `${target.columnName}: ${normalized.reason}` };
  return { kind: 'key', key: normalized.key };
}
