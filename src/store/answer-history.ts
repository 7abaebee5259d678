// The answers a key had before its current one: the `history` table, which a trigger fills when a
// fetch replaces an answer (schema.ts). Read for `store show` and `store export --history`
// (store-entries.ts), and by a run that meets a key again after it looked it up anew: the answer
// that fetch replaced is what the key's new answer is compared with (docs/cli-contract.md, "What
// changed since the last answer").
import { prepareRaw, type Database, type Statement } from './sqlite.js';

/** An earlier answer of a key, as history keeps it. */
export interface EarlierEntry {
  found: boolean;
  /** The API's `data` as JSON text; null when it had none, or when `same` (the newer answer holds it). */
  data: string | null;
  /** Why the API refused the key, or null. */
  refused: string | null;
  fetchedAt: number;
  /** When the answer that replaced it was fetched. */
  replacedAt: number;
  /** The fetch that replaced it brought the same answer: a check, not a change. */
  same: boolean;
}

/** An earlier answer as a run compares with it: `data` parsed (undefined when `same`: the newer answer's). */
export interface ReplacedAnswer {
  found: boolean;
  data: unknown;
  fetchedAt: number;
  same: boolean;
}

type HistoryRow = [found: number, same: number, data: string | null, refused: string | null, fetchedAt: number, replacedAt: number];

const COLUMNS = 'found, same, data, refused, fetched_at, replaced_at';

function entryOf(row: HistoryRow): EarlierEntry {
  return { found: row[0] === 1, same: row[1] === 1, data: row[2], refused: row[3], fetchedAt: row[4], replacedAt: row[5] };
}

export class AnswerHistory {
  readonly #db: Database;
  #newestFirst: Statement | undefined;
  #replacedAt: Statement | undefined;

  constructor(db: Database) {
    this.#db = db;
  }

  /**
   * A key's earlier answers, newest first, each with its data: an answer the next newer one
   * repeated (`same`) is given that one's data, starting from `currentData` (the current answer's).
   */
  *of(serviceId: number, op: string, key: string, currentData: string | null): Generator<EarlierEntry> {
    this.#newestFirst ??= prepareRaw(this.#db, `SELECT ${COLUMNS} FROM history WHERE service_id = ? AND op = ? AND key = ? ORDER BY replaced_at DESC`);
    let newer = currentData;
    for (const row of this.#newestFirst.all(serviceId, op, key) as unknown as HistoryRow[]) {
      const entry = entryOf(row);
      if (entry.same) entry.data = newer;
      newer = entry.data;
      yield entry;
    }
  }

  /**
   * The answer that the fetch at `replacedAt` replaced, when it replaced one; undefined for a first
   * answer, and for a key the API refused (then or now: there is no answer to compare).
   */
  replaced(serviceId: number, op: string, key: string, replacedAt: number): ReplacedAnswer | undefined {
    this.#replacedAt ??= prepareRaw(this.#db, `SELECT ${COLUMNS} FROM history WHERE service_id = ? AND op = ? AND key = ? AND replaced_at = ? LIMIT 1`);
    const row = this.#replacedAt.get(serviceId, op, key, replacedAt) as unknown as HistoryRow | undefined;
    if (row === undefined || row[3] !== null) return undefined;
    const entry = entryOf(row);
    return { found: entry.found, data: entry.data === null ? undefined : JSON.parse(entry.data), fetchedAt: entry.fetchedAt, same: entry.same };
  }
}
