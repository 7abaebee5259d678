// The result store's options, their defaults, and their validation.

import { ConfigError } from '../api/errors.js';
import { DEFAULTS } from '../options/defaults.js';
import type { CellsRenderer } from './answer-cells.js';

export interface ResultStoreOptions {
  /** File path, or ':memory:'. */
  path: string;
  /** Pending writes are committed at least this often. Default 100 (options/defaults.ts). 0 = commit on every put. */
  flushIntervalMs?: number;
  /** ...or as soon as this many are pending. Default 200. */
  flushBatchSize?: number;
  /** Open an existing store for reading only (stats, inspection). */
  readonly?: boolean;
  /** Clock, epoch ms. For tests of maxAge / prune; defaults to Date.now. */
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
  byOperation: Record<string, number>;
  byService: Record<string, number>;
  oldest?: number;
  newest?: number;
  sizeBytes: number;
  path: string;
}

/** Every option but the path, with defaults filled in. */
export type StoreSettings = Required<Omit<ResultStoreOptions, 'path' | 'cells'>>;


/** The settings of `options`, defaults filled in; ConfigError for a missing path or a bad value. */
export function resolveOptions(options: ResultStoreOptions): StoreSettings {
  if (typeof options.path !== 'string' || options.path.trim() === '') {
    throw new ConfigError(
      `Invalid result store path: must be a file path or ':memory:', got '${String(options.path)}'. ` +
        'Pass --store PATH or set LEAD_ENRICH_STORE.',
    );
  }
  const settings = {
    flushIntervalMs: options.flushIntervalMs ?? DEFAULTS.storeFlushIntervalMs,
    flushBatchSize: options.flushBatchSize ?? DEFAULTS.storeFlushBatchSize,
    readonly: options.readonly ?? false,
    now: options.now ?? Date.now,
    onUpgrade: options.onUpgrade ?? (() => {}),
  };
  // setTimeout clamps anything above 2^31-1 ms to 1 ms: refuse rather than flush constantly.
  if (!Number.isFinite(settings.flushIntervalMs) || settings.flushIntervalMs < 0 || settings.flushIntervalMs > 2 ** 31 - 1) {
    throw new ConfigError(
      `Invalid flushIntervalMs: must be a number of milliseconds from 0 to ${2 ** 31 - 1}, got '${settings.flushIntervalMs}'`,
    );
  }
  if (!Number.isInteger(settings.flushBatchSize) || settings.flushBatchSize < 1) {
    throw new ConfigError(`Invalid flushBatchSize: must be a positive integer, got '${settings.flushBatchSize}'`);
  }
  return settings;
}
