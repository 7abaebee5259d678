// A store that fails in the middle of a run (a full disk, a damaged file, an I/O error) ends the
// run with one line: which file, the cause in words, and what to do (docs/cli-contract.md, "Durability").
// The `store` commands end with the same line on a store that fails under them.
// The causes are told apart as when the file is opened (open-database.ts, diagnose).
import { StoreFailedError } from '../api/errors.js';
import { diagnose } from './open-database.js';
import { sqliteCode, SQLITE } from './sqlite.js';

/** Whether `error` says the store's disk is full. */
export function isDiskFull(error: unknown): boolean {
  const errno = (error as { code?: unknown } | null)?.code;
  return sqliteCode(error) === SQLITE.FULL || errno === 'ENOSPC' || errno === 'EDQUOT';
}

/** Whether `error` says the store's file is damaged. */
export function isDamaged(error: unknown): boolean {
  const code = sqliteCode(error);
  return code === SQLITE.CORRUPT || code === SQLITE.NOTADB;
}

/** The one-line error for a store that failed while `doing` ('written' or 'read'). */
export function storeFailure(filePath: string, doing: 'written' | 'read', error: unknown): StoreFailedError {
  if (error instanceof StoreFailedError) return error;
  if (isDiskFull(error)) {
    return new StoreFailedError(
      `The result store at ${filePath} could not be ${doing}: no space left on the device. The run stopped sending requests; ` +
        'free some space on that disk and run the same command again: it goes on where this one stopped',
      { cause: error },
    );
  }
  if (isDamaged(error)) {
    return new StoreFailedError(
      `The result store at ${filePath} is damaged (${(error as Error).message}); see what is wrong with ` +
        `lead-enrich store check --store '${filePath}', then move it aside (mv '${filePath}' '${filePath}.damaged') and run again: answers are bought again only when needed`,
      { cause: error },
    );
  }
  const { why, advice } = diagnose(error, filePath);
  return new StoreFailedError(`The result store at ${filePath} could not be ${doing}: ${why}; ${advice}`, { cause: error });
}

/** `read()`, its failure said as the store's (a damaged file names `store check`). */
export function storeRead<T>(filePath: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    throw storeFailure(filePath, 'read', error);
  }
}

/** Entries read one at a time, their failure said as the store's. */
export function* storeReads<T>(filePath: string, read: () => Iterable<T>): Generator<T> {
  try {
    yield* read();
  } catch (error) {
    throw storeFailure(filePath, 'read', error);
  }
}
