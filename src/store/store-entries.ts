// The store's entries one by one, for `store export` (every answer paid for, out to a file) and
// `store show KEY`: read lazily, so an export of millions of answers holds one at a time.
import type { AnswerHistory } from './answer-history.js';
import { prepareRaw, type Database } from './sqlite.js';

export interface StoreEntry {
  service: string;
  op: string;
  key: string;
  /** found, not_found, or bad_request (a key the API refused: kept like a miss). */
  status: 'found' | 'not_found' | 'bad_request';
  /** The API's `data` as JSON text, as received; null when the answer had none. */
  data: string | null;
  fetchedAt: number;
  /** An earlier answer (store show, store export --history): when the next one replaced it. Absent for the current answer. */
  replacedAt?: number;
}

type EntryRow = [string, string, string, number, string | null, number, string | null, number];

const statusOf = (found: boolean, refused: string | null): StoreEntry['status'] => (found ? 'found' : refused !== null ? 'bad_request' : 'not_found');

/**
 * Every entry, in (service, operation, key) order; of one service and/or one key when given. With
 * `history`, each is followed by the key's earlier answers, newest first.
 */
export function* readEntries(db: Database, filter: { serviceId?: number | undefined; key?: string | undefined }, history?: AnswerHistory): Generator<StoreEntry> {
  const where: string[] = [];
  const params: Array<number | string> = [];
  if (filter.serviceId !== undefined) {
    where.push('r.service_id = ?');
    params.push(filter.serviceId);
  }
  if (filter.key !== undefined) {
    where.push('r.key = ?');
    params.push(filter.key);
  }
  const sql =
    'SELECT s.name, r.op, r.key, r.found, r.data, r.fetched_at, r.refused, r.service_id FROM results r JOIN services s ON s.id = r.service_id' +
    (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
    ' ORDER BY r.service_id, r.op, r.key';
  for (const row of prepareRaw(db, sql).iterate(...params) as IterableIterator<unknown>) {
    const [service, op, key, found, data, fetchedAt, refused, serviceId] = row as EntryRow;
    yield { service, op, key, status: statusOf(found === 1, refused), data, fetchedAt };
    if (history === undefined) continue;
    for (const earlier of history.of(serviceId, op, key, data)) {
      yield { service, op, key, status: statusOf(earlier.found, earlier.refused), data: earlier.data, fetchedAt: earlier.fetchedAt, replacedAt: earlier.replacedAt };
    }
  }
}
