// `lead-enrich store check`: SQLite's own integrity check of a store file (every page, every
// index against its table), read-only, so that a damaged store is found before a run meets it,
// and a store a run stopped on can be judged (docs/cli-contract.md, "Durability").
import { APPLICATION_ID } from './schema.js';
import { diagnose } from './open-database.js';
import { isDamaged } from './store-failure.js';
import { openSqlite, pragma, prepareRaw } from './sqlite.js';

export interface StoreCheck {
  /** True when SQLite found nothing wrong and the file is a lead-enrich store. */
  ok: boolean;
  /** What is wrong, in SQLite's words (at most MAX_PROBLEMS), or why the file is no store. */
  problems: string[];
  /** Entries, when they could be counted. */
  entries: number | undefined;
  /**
   * Why the file could not be checked at all (permission, a read-only file that needs its WAL
   * written, a lock), with the advice that fits: the file is not said to be damaged then.
   */
  cannotCheck?: { why: string; advice: string };
}

const MAX_PROBLEMS = 20;

/** Checks the store at `filePath` (which must exist). Synchronous: it reads the whole file. */
export function checkStore(filePath: string): StoreCheck {
  let db;
  try {
    db = openSqlite(filePath, { readOnly: true, timeoutMs: 5_000 });
  } catch (error) {
    return findingOf(error, filePath, 'SQLite cannot open it: ');
  }
  try {
    const appId = pragma(db, 'application_id');
    if (appId !== APPLICATION_ID && appId !== 0) return { ok: false, problems: ['it is a SQLite database but not a lead-enrich result store'], entries: undefined };
    const rows = prepareRaw(db, `PRAGMA integrity_check(${MAX_PROBLEMS})`).all() as unknown as Array<[string]>;
    const problems = rows.map(([text]) => text).filter((text) => text !== 'ok');
    return { ok: problems.length === 0, problems, entries: problems.length === 0 ? countEntries(db) : undefined };
  } catch (error) {
    // The header or the schema itself is unreadable: that is the finding.
    return findingOf(error, filePath, '');
  } finally {
    db.close();
  }
}

function countEntries(db: ReturnType<typeof openSqlite>): number | undefined {
  try {
    return (prepareRaw(db, 'SELECT count(*) FROM results').get() as unknown as [number])[0];
  } catch {
    return undefined;
  }
}

/**
 * What a failure says of the file: damage is the finding; any other failure (permission, a lock, a
 * read-only store that needs its WAL written) says nothing of its pages: the check could not be made.
 */
function findingOf(error: unknown, filePath: string, prefix: string): StoreCheck {
  if (isDamaged(error)) return { ok: false, problems: [`${prefix}${(error as Error).message}`], entries: undefined };
  const { why, advice } = diagnose(error, filePath);
  return { ok: false, problems: [], entries: undefined, cannotCheck: { why, advice } };
}
