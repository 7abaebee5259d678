// The store's entries one by one, for `store export` (every answer paid for, out to a file) and
// `store show KEY`: read lazily, so an export of millions of answers holds one key's at a time.
// With history, the earlier answers come from one cursor read beside the answers' own, in the same
// order (both tables' indexes lead with service, operation and key), instead of a query per entry.
import { newestFirst, type EarlierEntry } from './answer-history.js';
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
  /**
   * An earlier answer: whether the change to the answer that replaced it was listed by a --changes
   * file (`reported`), not yet (`not_reported`), or there was none (`same`: the next fetch brought
   * the same answer). Absent for the current answer.
   */
  change?: 'same' | 'reported' | 'not_reported';
}

type EntryRow = [string, string, string, number, string | null, number, string | null, number];
type HistoryRow = [
  serviceId: number,
  op: string,
  key: string,
  found: number,
  same: number,
  data: string | null,
  refused: string | null,
  fetchedAt: number,
  replacedAt: number,
  reported: number,
];

const statusOf = (found: boolean, refused: string | null): StoreEntry['status'] => (found ? 'found' : refused !== null ? 'bad_request' : 'not_found');

interface Filter {
  serviceId?: number | undefined;
  key?: string | undefined;
}

/** The WHERE clause of a filter over a table aliased `t`, and its parameters. */
function whereOf(filter: Filter, alias: string): { where: string[]; params: Array<number | string> } {
  const where: string[] = [];
  const params: Array<number | string> = [];
  if (filter.serviceId !== undefined) {
    where.push(`${alias}.service_id = ?`);
    params.push(filter.serviceId);
  }
  if (filter.key !== undefined) {
    where.push(`${alias}.key = ?`);
    params.push(filter.key);
  }
  return { where, params };
}

/** A key's earlier answers, oldest first, with its service id, operation and key. */
interface HistoryGroup {
  serviceId: number;
  op: string;
  key: string;
  rows: EarlierEntry[];
}

/**
 * The earlier answers of the keys that have a current answer, grouped by key, in the answers'
 * order: (service id, operation, key), each key's oldest first (the index's own order: no sort).
 */
function* historyGroups(db: Database, filter: Filter): Generator<HistoryGroup> {
  const { where, params } = whereOf(filter, 'h');
  where.push('EXISTS (SELECT 1 FROM results r WHERE r.service_id = h.service_id AND r.op = h.op AND r.key = h.key)');
  const sql =
    'SELECT h.service_id, h.op, h.key, h.found, h.same, h.data, h.refused, h.fetched_at, h.replaced_at, h.reported FROM history h' +
    ` WHERE ${where.join(' AND ')} ORDER BY h.service_id, h.op, h.key, h.replaced_at`;
  let group: HistoryGroup | undefined;
  for (const raw of prepareRaw(db, sql).iterate(...params) as IterableIterator<unknown>) {
    const [serviceId, op, key, found, same, data, refused, fetchedAt, replacedAt, reported] = raw as HistoryRow;
    if (group === undefined || group.serviceId !== serviceId || group.op !== op || group.key !== key) {
      if (group) yield group;
      group = { serviceId, op, key, rows: [] };
    }
    group.rows.push({ found: found === 1, same: same === 1, data, refused, fetchedAt, replacedAt, reported: reported === 1 });
  }
  if (group) yield group;
}

const changeOf = (entry: EarlierEntry): StoreEntry['change'] => (entry.same ? 'same' : entry.reported ? 'reported' : 'not_reported');

/**
 * Every entry, in (service, operation, key) order; of one service and/or one key when given. With
 * `history`, each is followed by the key's earlier answers, newest first.
 */
export function* readEntries(db: Database, filter: Filter, history = false): Generator<StoreEntry> {
  const { where, params } = whereOf(filter, 'r');
  const sql =
    'SELECT s.name, r.op, r.key, r.found, r.data, r.fetched_at, r.refused, r.service_id FROM results r JOIN services s ON s.id = r.service_id' +
    (where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '') +
    ' ORDER BY r.service_id, r.op, r.key';
  // Both cursors are open at once: they read the same snapshot of the file.
  const earlier = history ? historyGroups(db, filter) : undefined;
  let next = earlier?.next();
  for (const row of prepareRaw(db, sql).iterate(...params) as IterableIterator<unknown>) {
    const [service, op, key, found, data, fetchedAt, refused, serviceId] = row as EntryRow;
    yield { service, op, key, status: statusOf(found === 1, refused), data, fetchedAt };
    // The groups are of keys with a current answer, in the same order: the next one is this key's or a later key's.
    const group = next?.done === false ? next.value : undefined;
    if (group === undefined || group.serviceId !== serviceId || group.op !== op || group.key !== key) continue;
    for (const entry of newestFirst(group.rows, data)) {
      yield {
        service,
        op,
        key,
        status: statusOf(entry.found, entry.refused),
        data: entry.data,
        fetchedAt: entry.fetchedAt,
        replacedAt: entry.replacedAt,
        change: changeOf(entry),
      };
    }
    next = earlier!.next();
  }
}
