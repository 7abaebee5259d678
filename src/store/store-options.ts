// The result store's options, their defaults, and their validation.

import { said } from '../api/caller-words.js';
import { ConfigError } from '../api/errors.js';
import { DEFAULTS } from '../options/defaults.js';
import { checked } from '../options/refusal.js';
import { delayMs, positiveInteger, yesOrNo } from '../options/rules.js';
import type { CellsRenderer } from './answer-cells.js';

export interface ResultStoreOptions {
  /** File path, or ':memory:'. */
  path: string;
  /** Pending writes are committed at least this often; 0: on every put. Default: DEFAULTS.storeFlushIntervalMs (options/defaults.ts). */
  flushIntervalMs?: number;
  /** ...or as soon as this many are pending. Default: DEFAULTS.storeFlushBatchSize. */
  flushBatchSize?: number;
  /** Open an existing store for reading only (stats, inspection). */
  readonly?: boolean;
  /** Clock, epoch ms. For tests of how old stored answers are (get, prune); defaults to Date.now. */
  now?: () => number;
  /**
   * Called once before a store written by an older version is brought up to this one's schema,
   * which may render every stored answer again (about 30 s per million on a 2-core machine).
   */
  onUpgrade?: (fromVersion: number, toVersion: number, slow: boolean) => void;
  /** Renders the cells of answers an older version stored, when this open upgrades the file (answer-cells.ts). */
  cells?: CellsRenderer;
}

/** What `store.stats()` returns (store-stats.ts reads it). */
export interface ResultStoreStats {
  entries: number;
  /** Answers keys had before their current ones (history: what `store show` lists after the current answer). */
  earlierAnswers: number;
  byOperation: Record<string, number>;
  byService: Record<string, number>;
  oldest?: number;
  newest?: number;
  sizeBytes: number;
  path: string;
}

/** Every option but the path, with defaults filled in. */
export type StoreSettings = Required<Omit<ResultStoreOptions, 'path' | 'cells'>>;

/** How the reader points the run at another store file. */
export function anotherStore(): string {
  return said({ cli: 'pass --store PATH or set LEAD_ENRICH_STORE to use another file', library: "give another store path (or ':memory:')" });
}

/** The settings of `options`, defaults filled in; ConfigError for a missing path or a bad value, naming the option. */
export function resolveOptions(options: ResultStoreOptions): StoreSettings {
  if (typeof options.path !== 'string' || options.path.trim() === '') {
    throw new ConfigError(`Invalid result store path: must be a file path or ':memory:', got '${String(options.path)}'`);
  }
  const read = <T>(name: keyof ResultStoreOptions, rule: (raw: unknown) => T): T | undefined =>
    options[name] === undefined ? undefined : checked(options[name], 'library', name, name, rule);
  return {
    flushIntervalMs: read('flushIntervalMs', delayMs) ?? DEFAULTS.storeFlushIntervalMs,
    flushBatchSize: read('flushBatchSize', positiveInteger) ?? DEFAULTS.storeFlushBatchSize,
    readonly: read('readonly', yesOrNo) ?? false,
    now: options.now ?? Date.now,
    onUpgrade: options.onUpgrade ?? (() => {}),
  };
}
