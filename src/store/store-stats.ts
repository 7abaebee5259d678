// What a result store holds, for `lead-enrich store stats`: entries by operation and service,
// the oldest and newest, and the size of its files.

import fs from 'node:fs';
import { pragma, prepareRaw, type Database } from './sqlite.js';
import type { ResultStoreStats } from './store-options.js';

export type { ResultStoreStats } from './store-options.js';

/** Counts from the database; committed entries only (the store flushes first); of one service when `serviceId` is given. */
export function readStats(db: Database, filePath: string, serviceId?: number): ResultStoreStats {
  const where = serviceId === undefined ? '' : ' WHERE service_id = ?';
  const params = serviceId === undefined ? [] : [serviceId];
  const names = new Map<number, string>();
  for (const [id, name] of prepareRaw(db, 'SELECT id, name FROM services').all() as unknown as Array<[number, string]>) {
    names.set(id, name);
  }
  // Grouped by the primary key's prefix: answered from that index, without reading the JSON.
  const groups = prepareRaw(db, `SELECT service_id, op, count(*) FROM results${where} GROUP BY service_id, op`).all(...params) as unknown as Array<
    [number, string, number]
  >;
  let entries = 0;
  const byOperation: Record<string, number> = {};
  const byService: Record<string, number> = {};
  for (const [serviceId, op, count] of groups) {
    entries += count;
    byOperation[op] = (byOperation[op] ?? 0) + count;
    const name = names.get(serviceId) ?? `#${serviceId}`;
    byService[name] = (byService[name] ?? 0) + count;
  }
  // Two statements: SQLite's min/max index shortcut only applies to a lone min() or max().
  const first = (sql: string) => (prepareRaw(db, sql).get(...params) as unknown as [number | null] | undefined)?.[0];
  const oldest = first(`SELECT min(fetched_at) FROM results${where}`);
  const newest = first(`SELECT max(fetched_at) FROM results${where}`);
  const earlierAnswers = first(`SELECT count(*) FROM history${where}`) ?? 0;
  const stats: ResultStoreStats = { entries, earlierAnswers, byOperation, byService, sizeBytes: sizeBytes(db, filePath), path: filePath };
  if (oldest !== null && oldest !== undefined) stats.oldest = oldest;
  if (newest !== null && newest !== undefined) stats.newest = newest;
  return stats;
}

function sizeBytes(db: Database, filePath: string): number {
  if (filePath === ':memory:') {
    const pageCount = pragma(db, 'page_count') as number;
    const pageSize = pragma(db, 'page_size') as number;
    return pageCount * pageSize;
  }
  return storeFileBytes(filePath);
}

/**
 * A store's size on disk, the one figure `store stats` and `store check` both give: the file and
 * its write-ahead log (answers not yet copied into the file). Not the -shm index, a few KiB that
 * exists only while a connection is open (one that `stats` itself opens).
 */
export function storeFileBytes(filePath: string): number {
  let total = 0;
  for (const suffix of ['', '-wal']) {
    try {
      total += fs.statSync(filePath + suffix).size;
    } catch {
      // No write-ahead log: nothing to add.
    }
  }
  return total;
}
