// Opening the result store's file: parent directories and file modes, connection settings, the
// schema check (schema.ts), and one clear ConfigError, with the reason in words, when the path
// cannot be used.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../api/errors.js';
import { migrate, type UpgradeNotice } from './schema.js';

/** Long enough for another process's flush (a few ms) or checkpoint to finish. */
const BUSY_TIMEOUT_MS = 5_000;

/** Page cache per connection, KiB. */
const CACHE_KIB = 8_192;

/** Parent directories (0700) and the file itself (0600) before SQLite opens it. */
export function prepareFile(filePath: string, readonly: boolean): void {
  try {
    if (readonly) {
      if (!fs.existsSync(filePath)) {
        throw new ConfigError(
          `Cannot open the result store at ${filePath}: no such file (nothing has been stored there yet). ` +
            'Pass --store PATH or set LEAD_ENRICH_STORE to an existing store.',
        );
      }
      return;
    }
    fs.mkdirSync(path.dirname(filePath), { recursive: true, mode: 0o700 });
    let fd: number;
    try {
      // 'wx': create only if missing, so an existing store keeps whatever mode its owner chose.
      fd = fs.openSync(filePath, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Exists: check it can be opened for writing (and is not a directory) with a clear error.
      fs.closeSync(fs.openSync(filePath, 'r+'));
      return;
    }
    try {
      // The umask cannot widen 0600, but a strange umask (e.g. 0277) could narrow it to unusable.
      fs.fchmodSync(fd, 0o600);
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw openError(filePath, error);
  }
}

/**
 * Opens the database at `filePath` (prepared by prepareFile, or ':memory:'), sets the connection
 * up, brings its schema up to date and hands it to `use`. When any of it fails the connection is
 * closed and a ConfigError thrown.
 */
export function openDatabase<T>(filePath: string, readonly: boolean, use: (db: Database.Database) => T, onUpgrade: UpgradeNotice = () => {}): T {
  let db: Database.Database | undefined;
  try {
    db = new Database(filePath, { readonly, fileMustExist: readonly });
    // First, so every statement below (and every later write) waits for another process's lock.
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Per connection, allocated only as used. Hits are random b-tree reads: the 2 MiB default
    // misses on stores of a few 10k entries (~15% more hits/s with 64 MiB at 100k). 8 MiB holds
    // the whole key index of a 100k-entry store; on a 1M-entry store a probe measured 3.7 µs at
    // 16 MiB or 64 MiB and 4.1 µs at 4 MiB, so more cache buys little there, and it is RSS.
    db.pragma(`cache_size = -${CACHE_KIB}`);
    migrate(db, filePath, readonly, onUpgrade);
    return use(db);
  } catch (error) {
    db?.close();
    if (error instanceof ConfigError) throw error;
    throw openError(filePath, error);
  }
}

function openError(filePath: string, error: unknown): ConfigError {
  return new ConfigError(
    `Cannot open the result store at ${filePath}: ${reason(error)}. ` +
      'Pass --store PATH or set LEAD_ENRICH_STORE to a writable location.',
    { cause: error },
  );
}

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory',
  ENOSPC: 'no space left on the device',
  ENAMETOOLONG: 'the path is too long',
  ELOOP: 'too many symbolic links in the path',
  SQLITE_NOTADB: 'the file exists but is not a SQLite database',
  SQLITE_CORRUPT: 'the database file is corrupt',
  SQLITE_CANTOPEN: 'unable to open the database file',
  SQLITE_READONLY: 'the file is read-only',
  SQLITE_BUSY: 'the file is locked by another process',
  SQLITE_FULL: 'no space left on the device',
};

function reason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    const known = REASONS[code] ?? (code.startsWith('SQLITE_IOERR') ? 'an I/O error' : undefined);
    if (known !== undefined) return known;
  }
  return oneLine(error);
}

/** An error's message on one line, for messages that must stay one line. */
export function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim();
}
