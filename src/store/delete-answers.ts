// Deleting answers (store prune and store clear): the current ones and their history together, and
// the freed pages given back to the file system.
import type { Database } from './sqlite.js';
import { storeFailure } from './store-failure.js';

/** Deletes the current and earlier answers `where` says; returns how many current ones. */
export function deleteAnswers(db: Database, filePath: string, where: string, params: Array<number | string>): number {
  try {
    const changes = Number(db.prepare(`DELETE FROM results WHERE ${where}`).run(...params).changes);
    const earlier = Number(db.prepare(`DELETE FROM history WHERE ${where}`).run(...params).changes);
    if (changes + earlier > 0) {
      // Give the freed pages back to the file system (auto_vacuum = INCREMENTAL, set at creation),
      // then checkpoint so the shrink reaches the main file and the WAL is emptied.
      db.exec('PRAGMA incremental_vacuum');
      if (filePath !== ':memory:') db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    }
    return changes;
  } catch (error) {
    throw storeFailure(filePath, 'written', error);
  }
}
