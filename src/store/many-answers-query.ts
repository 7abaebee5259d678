// The store's batched read of answers: one `key IN (?, …)` statement per form and chunk size, so a
// batch of keys costs one query instead of one per key.
import { type Database, prepareRaw, type Statement } from './sqlite.js';
import type { ManyRow } from './stored-result.js';

/** Keys per `IN (…)` query: large enough to amortize the call, small enough to prepare. */
export const GET_MANY_CHUNK = 100;

/** 'cells': an answer's rendered cells where it has them; 'data': its JSON. */
export type ManyForm = 'data' | 'cells';

/** Prepared statements, one per form and chunk size seen (at most GET_MANY_CHUNK of each). */
export class ManyAnswersQuery {
  readonly #db: Database;
  readonly #bySize = new Map<string, Statement>();

  constructor(db: Database) {
    this.#db = db;
  }

  /** The stored rows of `keys` (at most GET_MANY_CHUNK) for one service and operation. */
  rows(serviceId: number, op: string, keys: readonly string[], form: ManyForm): ManyRow[] {
    return this.#statement(keys.length, form).all(serviceId, op, ...keys) as unknown as ManyRow[];
  }

  #statement(size: number, form: ManyForm): Statement {
    const id = `${form}/${size}`;
    let statement = this.#bySize.get(id);
    if (!statement) {
      // 'cells': the ~1 KB JSON body is read only for an answer with no cells (an mx/whois one).
      const columns = form === 'cells' ? 'cells, CASE WHEN cells IS NULL THEN data END' : 'NULL, data';
      statement = prepareRaw(
        this.#db,
        `SELECT key, found, ${columns}, fetched_at, run_id, refused FROM results WHERE service_id = ? AND op = ? AND key IN (${new Array(size).fill('?').join(', ')})`,
      );
      this.#bySize.set(id, statement);
    }
    return statement;
  }
}
