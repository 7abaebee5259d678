// Opening the result store's file: parent directories and file modes, connection settings, the
// schema check (schema.ts), and one clear ConfigError, with the reason in words, when the path
// cannot be used.

import fs from 'node:fs';
import path from 'node:path';
import { ConfigError } from '../api/errors.js';
import { migrate, type Upgrade } from './schema.js';
import { anotherStore } from './store-options.js';
import { said } from '../api/caller-words.js';
import { openSqlite, sqliteCode, SQLITE, type Database } from './sqlite.js';

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
          `Cannot open the result store at ${filePath}: no such file (nothing has been stored there yet); ` +
            `${said({ cli: 'pass --store PATH or set LEAD_ENRICH_STORE to an existing store', library: 'give the path of an existing store' })}`,
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
export function openDatabase<T>(filePath: string, readonly: boolean, use: (db: Database) => T, upgrade?: Upgrade): T {
  let db: Database | undefined;
  try {
    // The busy timeout is the constructor's, so every statement below (and every later write)
    // waits for another process's lock.
    db = openSqlite(filePath, { readOnly: readonly, timeoutMs: BUSY_TIMEOUT_MS });
    // Per connection, allocated only as used. Hits are random b-tree reads: the 2 MiB default
    // misses on stores of a few 10k entries (~15% more hits/s with 64 MiB at 100k). 8 MiB holds
    // the whole key index of a 100k-entry store; on a 1M-entry store a probe measured 3.7 µs at
    // 16 MiB or 64 MiB and 4.1 µs at 4 MiB, so more cache buys little there, and it is RSS.
    db.exec(`PRAGMA cache_size = -${CACHE_KIB}`);
    migrate(db, filePath, readonly, upgrade);
    return use(db);
  } catch (error) {
    if (db?.isOpen) db.close();
    if (error instanceof ConfigError) throw error;
    throw openError(filePath, error);
  }
}

/** One line: what is wrong with the store's file, and the advice that fits that cause. */
export function openError(filePath: string, error: unknown): ConfigError {
  const { why, advice } = diagnose(error, filePath);
  return new ConfigError(`Cannot open the result store at ${filePath}: ${why}; ${advice}`, { cause: error });
}

interface Diagnosis {
  why: string;
  advice: string;
}

/** The cause of a failure to open or use the store's file, in words, with what to do about it. */
export function diagnose(error: unknown, filePath: string): Diagnosis {
  // node:sqlite's errors carry SQLite's own code (`errcode`); the file system's, an errno name.
  const errno = (error as { code?: unknown } | null)?.code;
  switch (sqliteCode(error) ?? errno) {
    case 'EACCES':
    case 'EPERM':
      return { why: 'permission denied', advice: `check who may write the file and its folder (ls -l), or ${anotherStore()}` };
    case 'EROFS':
      return { why: 'the file system is read-only', advice: anotherStore() };
    case SQLITE.READONLY:
      return { why: 'the file is read-only', advice: `check its permissions (ls -l), or ${anotherStore()}` };
    case 'ENOTDIR':
    case 'EEXIST':
    case 'ELOOP':
    case 'ENAMETOOLONG':
      return { why: PATH_PROBLEMS[errno as string]!, advice: `check the path, or ${anotherStore()}` };
    case 'EISDIR':
      return {
        why: 'it is a directory',
        advice: `give a file inside it (${said({ cli: `--store ${path.join(filePath, 'results.sqlite')}`, library: `'${path.join(filePath, 'results.sqlite')}'` })})`,
      };
    case 'ENOSPC':
    case 'EDQUOT':
    case SQLITE.FULL:
      return { why: 'no space left on the device', advice: `free some space on that disk, or ${anotherStore()} on another disk` };
    case SQLITE.NOTADB:
      return { why: "it is not a SQLite database (another program's file?)", advice: `it was left untouched; ${anotherStore()}` };
    case SQLITE.CORRUPT:
      return {
        why: 'the database file is damaged',
        advice: `see what is wrong with lead-enrich store check --store '${filePath}'; move it aside (mv '${filePath}' '${filePath}.damaged') and run again (answers are bought again only when needed), or ${anotherStore()}`,
      };
    case SQLITE.BUSY:
      return { why: 'another program holds a lock on it', advice: 'wait for it to finish, then run again' };
    case SQLITE.CANTOPEN:
      return { why: 'SQLite cannot open the file', advice: `check the path and its permissions, or ${anotherStore()}` };
    case SQLITE.IOERR:
      return { why: 'an I/O error', advice: `check the disk, or ${anotherStore()}` };
    default:
      return { why: oneLine(error), advice: anotherStore() };
  }
}

const PATH_PROBLEMS: Record<string, string> = {
  ENOTDIR: 'a part of the path is not a directory',
  // mkdir of the store's folder, where a part of the path is a file.
  EEXIST: 'a part of the path is a file, not a directory',
  ELOOP: 'too many symbolic links in the path',
  ENAMETOOLONG: 'the path is too long',
};

/** An error's message on one line, for messages that must stay one line. */
export function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim();
}
