// Node's built-in SQLite (`node:sqlite`), the store's only engine: no native addon to compile and
// no install script for npm 12 to block (it runs none unless allowed, so a global install
// of a package with one fails). What the store needs of it, and no more:
// opening a file, raw-array statements, PRAGMAs, and IMMEDIATE transactions.
//
// On Node 22 loading the module prints "ExperimentalWarning: SQLite is an experimental feature"
// on stderr, which a cron job would mail every night: that one warning (and only that one) is
// filtered while the module loads. Every other warning still shows.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type * as Sqlite from 'node:sqlite';
import { ConfigError } from '../api/errors.js';
import { unsupportedNode } from '../core/node-version.js';

export type Database = Sqlite.DatabaseSync;
export type Statement = Sqlite.StatementSync;

let loaded: typeof Sqlite | undefined;

/** node:sqlite, loaded on first use (so that `--help` and commands without a store never load it). */
function sqlite(): typeof Sqlite {
  if (loaded) return loaded;
  // The command line checks the version before anything loads; a program calling the library on
  // an older Node meets it here, where the store needs what that Node lacks: the same one line.
  const tooOld = unsupportedNode(process.versions.node);
  if (tooOld) throw new ConfigError(tooOld);
  const emitWarning = process.emitWarning;
  process.emitWarning = function filtered(this: typeof process, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === 'string' ? warning : warning.message;
    const type = typeof rest[0] === 'string' ? rest[0] : ((rest[0] as { type?: unknown } | undefined)?.type ?? (warning as Error).name);
    if (type === 'ExperimentalWarning' && /^SQLite is an experimental feature/.test(text)) return;
    return (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    loaded = createRequire(import.meta.url)('node:sqlite') as typeof Sqlite;
  } finally {
    process.emitWarning = emitWarning;
  }
  return loaded;
}

export interface OpenOptions {
  readOnly: boolean;
  /** How long a statement waits for another connection's lock before SQLITE_BUSY. */
  timeoutMs: number;
}

export function openSqlite(filePath: string, options: OpenOptions): Database {
  const { DatabaseSync } = sqlite();
  const db = new DatabaseSync(filePath, { readOnly: options.readOnly, timeout: options.timeoutMs });
  if (!options.readOnly || filePath === ':memory:') return db;
  try {
    // The first read: where a store in WAL mode needs its shared-memory file (-shm) beside it.
    db.prepare('PRAGMA user_version').get();
    return db;
  } catch (error) {
    db.close();
    if (!unsharedReadOnly(error, filePath)) throw error;
    // A read-only folder (or a store that is not ours to write) cannot hold the -shm file. With no
    // write-ahead log waiting to be read, the file alone is the whole store: read it as immutable
    // (https://sqlite.org/wal.html#readonly), which needs no -shm and takes no lock.
    return new DatabaseSync(`${pathToFileURL(filePath).href}?immutable=1`, { readOnly: true, timeout: options.timeoutMs });
  }
}

/** A read-only open that failed for want of a writable -shm file, and no -wal file holds answers the main file lacks. */
function unsharedReadOnly(error: unknown, filePath: string): boolean {
  const code = sqliteCode(error);
  if (code !== SQLITE.READONLY && code !== SQLITE.CANTOPEN) return false;
  try {
    return fs.statSync(`${filePath}-wal`).size === 0;
  } catch (walError) {
    return (walError as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** A prepared statement whose rows come as arrays (cheaper to build than objects on the hot path). */
export function prepareRaw(db: Database, sql: string): Statement {
  const statement = db.prepare(sql);
  statement.setReturnArrays(true);
  return statement;
}

/** The value of `PRAGMA name` (the first column of its first row). */
export function pragma(db: Database, name: string): unknown {
  const row = prepareRaw(db, `PRAGMA ${name}`).get() as unknown as unknown[] | undefined;
  return row?.[0];
}

/**
 * Runs `work` in one transaction, taking the write lock up front: a DEFERRED transaction that
 * reads then writes can fail at once with SQLITE_BUSY when another process committed meanwhile,
 * where IMMEDIATE waits for the busy timeout. Rolled back when `work` throws.
 */
export function immediateTransaction<T>(db: Database, work: () => T): T {
  db.exec('BEGIN IMMEDIATE');
  let result: T;
  try {
    result = work();
  } catch (error) {
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
  try {
    db.exec('COMMIT');
  } catch (error) {
    // A failed COMMIT (a full disk) can leave the transaction open: end it, so the connection
    // is usable again and the pending entries can be written by a later attempt.
    if (db.isTransaction) db.exec('ROLLBACK');
    throw error;
  }
  return result;
}

/** SQLite's primary result code of an error from node:sqlite (`errcode` may be an extended code), or undefined. */
export function sqliteCode(error: unknown): number | undefined {
  const code = (error as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' ? code & 0xff : undefined;
}

/** SQLite's primary result codes the store tells apart (https://sqlite.org/rescode.html). */
export const SQLITE = {
  BUSY: 5,
  READONLY: 8,
  IOERR: 10,
  CORRUPT: 11,
  FULL: 13,
  CANTOPEN: 14,
  NOTADB: 26,
} as const;
