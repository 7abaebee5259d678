// The answers a key had before its current one: the `history` table, which a trigger fills when a
// fetch replaces an answer (schema.ts). Read for `store show` and `store export --history`
// (store-entries.ts: one cursor beside the answers'), by a run that meets a key again after it looked
// it up anew (the answer that fetch replaced is what the key's new answer is compared with), and by a
// run with --changes for the changes no --changes file has listed yet (change-report.ts)
// (docs/cli-contract.md, "What changed since the last answer").
import type { Operation } from '../api/types.js';
import type { Answer } from '../core/answer.js';
import type { CarriedChange } from '../core/rows.js';
import { prepareRaw, type Database, type Statement } from './sqlite.js';
import { parsedOrUndefined } from './stored-result.js';

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
  /** A --changes file has listed the change to the answer that replaced it (or there was none: `same`). */
  reported: boolean;
}

/** An earlier answer as a run compares with it: `data` parsed (undefined when `same`: the newer answer's). */
export interface ReplacedAnswer extends Omit<Answer, 'refused'> {
  same: boolean;
}

type HistoryRow = [found: number, same: number, data: string | null, refused: string | null, fetchedAt: number, replacedAt: number, reported: number];

const COLUMNS = 'found, same, data, refused, fetched_at, replaced_at, reported';

function entryOf(row: HistoryRow): EarlierEntry {
  return { found: row[0] === 1, same: row[1] === 1, data: row[2], refused: row[3], fetchedAt: row[4], replacedAt: row[5], reported: row[6] === 1 };
}

/**
 * A key's earlier answers as history keeps them, oldest first, given newest first with their data:
 * an answer the next newer one repeated (`same`) is given that one's data, starting from
 * `currentData` (the current answer's).
 */
export function newestFirst(rows: readonly EarlierEntry[], currentData: string | null): EarlierEntry[] {
  const out: EarlierEntry[] = [];
  let newer = currentData;
  for (let i = rows.length - 1; i >= 0; i -= 1) {
    const entry = rows[i]!;
    if (entry.same) entry.data = newer;
    newer = entry.data;
    out.push(entry);
  }
  return out;
}

/** The current answer of a key, as a carried change's newest side. */
type CurrentRow = [found: number, data: string | null, fetchedAt: number, runId: string, refused: string | null];

/** One side of a change: what an answer said, as a run compares it. */
interface Side {
  found: boolean;
  /** undefined: not known (an answer kept as the same as the next one, when that one is gone). */
  data: string | null | undefined;
  refused: string | null;
  fetchedAt: number;
}

export class AnswerHistory {
  readonly #db: Database;
  #oldestFirst: Statement | undefined;
  #replacedAt: Statement | undefined;
  #current: Statement | undefined;

  constructor(db: Database) {
    this.#db = db;
  }

  /**
   * The answer that the fetch at `replacedAt` replaced, when it replaced one; undefined for a first
   * answer, for a key the API refused (then or now: there is no answer to compare), and for an
   * answer whose data is not JSON (damaged: the key was looked up as if for the first time).
   */
  replaced(service: string, op: string, key: string, replacedAt: number): ReplacedAnswer | undefined {
    const sql = `SELECT ${COLUMNS} FROM history WHERE service_id = (SELECT id FROM services WHERE name = ?) AND op = ? AND key = ? AND replaced_at = ? LIMIT 1`;
    this.#replacedAt ??= prepareRaw(this.#db, sql);
    const row = this.#replacedAt.get(service, op, key, replacedAt) as unknown as HistoryRow | undefined;
    if (row === undefined || row[3] !== null) return undefined;
    const entry = entryOf(row);
    const data = entry.data === null ? undefined : parsedOrUndefined(entry.data);
    if (entry.data !== null && data === undefined) return undefined;
    return { found: entry.found, data, fetchedAt: entry.fetchedAt, same: entry.same };
  }

  /**
   * The changes of a key that no --changes file has listed, oldest first: each unreported earlier
   * answer with the answer that replaced it (the next newer one, or the current). Only those up to
   * history row `upTo` (stored before the run that asks began), and not those whose newer answer
   * is the current one fetched by a run in `skipRuns` (a run still going: it lists its own, or
   * leaves them to the next run with --changes).
   */
  unreported(serviceId: number, op: Operation, key: string, upTo: number, skipRuns: ReadonlySet<string>): CarriedChange[] {
    this.#oldestFirst ??= prepareRaw(this.#db, `SELECT ${COLUMNS}, rowid FROM history WHERE service_id = ? AND op = ? AND key = ? ORDER BY replaced_at`);
    this.#current ??= prepareRaw(this.#db, 'SELECT found, data, fetched_at, run_id, refused FROM results WHERE service_id = ? AND op = ? AND key = ?');
    const rows = this.#oldestFirst.all(serviceId, op, key) as unknown as Array<[...HistoryRow, number]>;
    const current = this.#current.get(serviceId, op, key) as unknown as CurrentRow | undefined;
    const changes: CarriedChange[] = [];
    // Newest first, so that an answer repeated (`same`) takes the data of the one after it.
    let newer: Side | undefined = current && { found: current[0] === 1, data: current[1], refused: current[4], fetchedAt: current[2] };
    for (let i = rows.length - 1; i >= 0; i -= 1) {
      const row = rows[i]!;
      const entry = entryOf(row as unknown as HistoryRow);
      const side: Side = { found: entry.found, data: entry.same ? newer?.data : entry.data, refused: entry.refused, fetchedAt: entry.fetchedAt };
      // The change the current answer's fetch made (each fetch replaces one answer, at its own time).
      const ownedByRunning = current !== undefined && current[2] === entry.replacedAt && skipRuns.has(current[3]);
      if (!entry.reported && !entry.same && row[7] <= upTo && !ownedByRunning) changes.push(changeOf(op, key, side, newer, entry.replacedAt));
      newer = side;
    }
    return changes.reverse();
  }
}

/** A change from `then` to `now` (undefined: the key's current answer is gone), as a run compares it. */
function changeOf(op: Operation, key: string, then: Side, now: Side | undefined, replacedAt: number): CarriedChange {
  // Nothing to compare with a refusal, or with an answer not known.
  const parse = (side: Side | undefined) =>
    side === undefined || side.refused !== null || side.data === undefined
      ? undefined
      : side.data === null
        ? { data: undefined }
        : { data: parsedOrUndefined(side.data) };
  const [before, after] = [parse(then), parse(now)];
  const comparable =
    before !== undefined && after !== undefined && (then.data === null || before.data !== undefined) && (now!.data === null || after.data !== undefined);
  return {
    op,
    key,
    found: then.found,
    data: comparable ? before.data : undefined,
    fetchedAt: then.fetchedAt,
    foundNow: now?.found ?? false,
    dataNow: comparable ? after.data : undefined,
    refetchedAt: replacedAt,
    comparable,
  };
}
