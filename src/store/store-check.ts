// `lead-enrich store check`: SQLite's own integrity check of a store file (every page, every
// index against its table), read-only, so that a damaged store is found before a run meets it,
// and a store a run stopped on can be judged (docs/cli-contract.md, "Durability"). Also whether
// the file is ours (its application id, as a run judges it) and whether every stored answer is
// JSON: one that is not is looked up again by a run, and named here.
import { ownership } from './schema.js';
import { diagnose } from './open-database.js';
import { isDamaged } from './store-failure.js';
import { openSqlite, prepareRaw } from './sqlite.js';

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
  /** The file is a SQLite database of another program: not damaged, not ours, left untouched. */
  foreign?: boolean;
  /** Stored answers that are not JSON (a run looks them up again): how many, and the first few as `operation key`. */
  notJson?: { count: number; examples: string[] };
}

const MAX_PROBLEMS = 20;

/** Checks the store at `filePath` (which must exist). Synchronous: it reads the whole file. */
export function checkStore(filePath: string): StoreCheck {
  let db: ReturnType<typeof openSqlite>;
  try {
    db = openSqlite(filePath, { readOnly: true, timeoutMs: 5_000 });
  } catch (error) {
    return findingOf(error, filePath, 'SQLite cannot open it: ');
  }
  try {
    if (ownership(db) === 'foreign')
      return { ok: false, problems: ['it is a SQLite database but not a lead-enrich result store'], entries: undefined, foreign: true };
    const rows = prepareRaw(db, `PRAGMA integrity_check(${MAX_PROBLEMS})`).all() as unknown as Array<[string]>;
    const problems = rows.map(([text]) => text).filter((text) => text !== 'ok');
    if (problems.length > 0) return { ok: false, problems, entries: undefined };
    const notJson = answersNotJson(db);
    return { ok: true, problems, entries: countEntries(db), ...(notJson.count > 0 ? { notJson } : {}) };
  } catch (error) {
    // The header or the schema itself is unreadable: that is the finding.
    return findingOf(error, filePath, '');
  } finally {
    db.close();
  }
}

const EXAMPLES = 5;

/** The stored answers that are not JSON (SQLite's json_valid: RFC 8259, as JSON.parse reads), in one pass. */
function answersNotJson(db: ReturnType<typeof openSqlite>): { count: number; examples: string[] } {
  // A store without the results table (an empty file) holds no answer at all.
  if (!prepareRaw(db, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'results'").get()) return { count: 0, examples: [] };
  let count = 0;
  const examples: string[] = [];
  for (const row of prepareRaw(db, 'SELECT op, key FROM results WHERE data IS NOT NULL AND NOT json_valid(data)').iterate() as IterableIterator<unknown>) {
    count += 1;
    if (examples.length < EXAMPLES) examples.push((row as [string, string]).join(' '));
  }
  return { count, examples };
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
