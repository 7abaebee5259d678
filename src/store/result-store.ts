// The durable result store: pay once per key. Answers of completed lookups are kept in SQLite so
// duplicates within a run and re-runs after a crash never reach the network (docs/architecture.md:
// the store answers first; misses go to the network and then into the store).
//
// Durability model: an enrich run commits the answers as they arrive (flushIntervalMs 0, the
// default): the answers that came in one turn of the event loop are committed together at its
// end (setImmediate), so a process killed with SIGKILL loses only the answers still in flight
// (docs/cli-contract.md, "Durability"), and a burst of answers costs one commit; the run's next requests
// wait for that commit (committed()), so a full disk costs only the requests in flight too.
// A caller may batch instead: put() then queues in memory (visible to get() at once) and the queue
// is committed in one transaction once its oldest entry is `flushIntervalMs` old (checked by every
// put(), and by a one-shot timer for the last ones) or as soon as `flushBatchSize` entries wait.
// A committed transaction survives a process crash (it is in the WAL file); only a power loss or
// an OS crash can drop the last commits.
//
// A write or read that fails (a full disk, a damaged file) throws a StoreFailedError that says
// which file, why, and what to do (store-failure.ts). Claims on keys in flight, for runs that share
// the store, are store-claims.ts.
//
// This file is the read path and the queue of what to write; how a batch is written is
// batch-writer.ts, when to commit is commit-schedule.ts. Opening the file and its schema are open-database.ts and
// schema.ts; the counts of `store stats` are store-stats.ts.
//
// Nothing secret is stored: the API token never reaches this module.

import path from 'node:path';
import { ConfigError, type StoreFailedError } from '../api/errors.js';
import { CommitSchedule } from './commit-schedule.js';
import { StoreClaims } from './store-claims.js';
import { storeSpend, type Settle, type StoreSpend } from './store-spend.js';
import { BatchWriter } from './batch-writer.js';
import { deleteAnswers } from './delete-answers.js';
import { storeFailure, storeRead, storeReads } from './store-failure.js';
import { cellsText, recordOf, type AnswerCells } from './answer-cells.js';
import type { Operation } from '../api/types.js';
import { openStores } from './exit-flush.js';
import { openDatabase, prepareFile } from './open-database.js';
import { SCHEMA_VERSION as CURRENT_SCHEMA } from './schema.js';
import { prepareRaw, type Database, type Statement } from './sqlite.js';
import { GET_MANY_CHUNK, ManyAnswersQuery } from './many-answers-query.js';
import { pendingKey, setStored, storedOf, type Freshness, type Pending, type ResultRow, type StoredResult } from './stored-result.js';
import { readEntries, type StoreEntry } from './store-entries.js';
import { AnswerHistory, type ReplacedAnswer } from './answer-history.js';
import { ChangeReport } from './change-report.js';
import { readStats } from './store-stats.js';
import { resolveOptions, type ResultStoreOptions, type ResultStoreStats, type StoreSettings } from './store-options.js';

export type { ResultStoreOptions, ResultStoreStats } from './store-options.js';

// Declared here, not re-exported from schema.ts: the published types of ResultStore stay within
// this file and store-options.ts.
/** The schema version this code writes (PRAGMA user_version). */
export const SCHEMA_VERSION: number = CURRENT_SCHEMA;

export type { AnswerCells, CellsRenderer } from './answer-cells.js';
export type { StoredResult } from './stored-result.js';
export type { ReplacedAnswer } from './answer-history.js';

export class ResultStore {
  readonly path: string;
  readonly readonly: boolean;

  private readonly db: Database;
  private readonly options: StoreSettings;
  private pending = new Map<string, Pending>();
  /** Calls settled since the last commit (store-spend.ts). */
  private settles: Settle[] = [];
  /** When what is pending is committed (an enrich run: at the end of each turn of the event loop). */
  private readonly schedule: CommitSchedule;
  private closed = false;
  /** Committed service ids only (see batch-writer.ts). */
  private readonly serviceIds = new Map<string, number>();
  #history: AnswerHistory | undefined;

  private readonly selectResult: Statement;
  private readonly selectServiceId: Statement;
  private readonly selectFound: Statement;
  private readonly manyAnswers: ManyAnswersQuery;
  /** Undefined for a store opened read-only. */
  private readonly writer: BatchWriter | undefined;

  private constructor(db: Database, filePath: string, options: StoreSettings) {
    this.db = db;
    this.path = filePath;
    this.options = options;
    this.readonly = options.readonly;
    this.schedule = new CommitSchedule({
      intervalMs: options.flushIntervalMs,
      batchSize: options.flushBatchSize,
      commit: () => this.flush(),
      waiting: () => !this.closed && this.queued > 0,
    });

    // Raw arrays: cheaper to build than objects on the per-row hot path.
    this.selectResult = prepareRaw(db, 'SELECT found, data, fetched_at, run_id, refused FROM results WHERE service_id = ? AND op = ? AND key = ?');
    this.selectServiceId = prepareRaw(db, 'SELECT id FROM services WHERE name = ?');
    this.manyAnswers = new ManyAnswersQuery(db);
    this.selectFound = prepareRaw(
      db,
      'SELECT found, data IS NULL OR json_valid(data), fetched_at, refused FROM results WHERE service_id = ? AND op = ? AND key = ?',
    );
    if (!this.readonly) this.writer = new BatchWriter(db, this.serviceIds);
  }

  /** What the next commit writes: the answers and the settled calls. */
  private get queued(): number {
    return this.pending.size + this.settles.length;
  }

  private selectedServiceId(service: string): number | undefined {
    return (this.selectServiceId.get(service) as unknown as [number] | undefined)?.[0];
  }

  /**
   * Open (creating if needed) the store at `options.path`. Creates missing parent directories
   * (mode 0700) and the file (mode 0600). Throws ConfigError when the path cannot be used.
   */
  static open(options: ResultStoreOptions): ResultStore {
    const settings = resolveOptions(options);
    const given = options.path;
    const memory = given === ':memory:';
    const filePath = memory ? given : path.resolve(given);

    if (memory && settings.readonly) {
      throw new ConfigError(`Cannot open the result store ':memory:' read-only: it would always be empty.`);
    }
    if (!memory) prepareFile(filePath, settings.readonly);

    return openDatabase(
      filePath,
      settings.readonly,
      (db) => {
        const store = new ResultStore(db, filePath, settings);
        openStores.add(store);
        return store;
      },
      { notice: settings.onUpgrade, cells: options.cells },
    );
  }

  /** The store's clock (epoch ms): the ages that a Freshness in ms counts back from. */
  now(): number {
    return this.options.now();
  }

  /** The earliest fetch time `fresh` accepts (none: any). */
  #since(fresh: Freshness | undefined): number {
    return fresh === undefined ? -Infinity : typeof fresh === 'number' ? this.options.now() - fresh : fresh.since;
  }

  /** The stored answer for (service, op, key), unless none or not `freshForMs` fresh. Sees put() entries not yet flushed; cheap: called per row. */
  get(service: string, op: Operation, key: string, freshForMs?: Freshness): StoredResult | undefined {
    if (this.closed) throw closedError(this.path);
    try {
      return this.#get(service, op, key, freshForMs);
    } catch (error) {
      throw storeFailure(this.path, 'read', error);
    }
  }

  #get(service: string, op: Operation, key: string, freshForMs: Freshness | undefined): StoredResult | undefined {
    const row = this.#fresh(service, op, key, freshForMs);
    return row && storedOf(row[0] === 1, undefined, row[1], row[2], row[3], row[4]);
  }

  /**
   * Found (true) or not (false) for (service, op, key), fresh enough; undefined when not stored.
   * A count's question: the answer itself is not parsed (a dry run or the offline glance asks it
   * for every key of a file).
   */
  foundOf(service: string, op: Operation, key: string, freshForMs?: Freshness): boolean | undefined {
    if (this.closed) throw closedError(this.path);
    const minFetchedAt = this.#since(freshForMs);
    const entry = this.pending.size === 0 ? undefined : this.pending.get(pendingKey(service, op, key));
    if (entry !== undefined) return entry.fetchedAt < minFetchedAt ? undefined : entry.found && entry.refused === null;
    // The answer is not carried into JavaScript, only whether it is JSON (SQLite's json_valid):
    // one that is not is absent, as get() finds it.
    const row = storeRead(this.path, () => {
      const serviceId = this.lookupServiceId(service);
      return serviceId === undefined
        ? undefined
        : (this.selectFound.get(serviceId, op, key) as unknown as [found: number, json: number, fetchedAt: number, refused: string | null] | undefined);
    });
    if (row === undefined || row[2] < minFetchedAt || row[1] !== 1) return undefined;
    return row[0] === 1 && typeof row[3] !== 'string';
  }

  /** The stored row of (service, op, key), pending ones first, unless older than `freshForMs`. */
  #fresh(service: string, op: Operation, key: string, freshForMs: Freshness | undefined): ResultRow | undefined {
    const minFetchedAt = this.#since(freshForMs);
    if (this.pending.size !== 0) {
      const entry = this.pending.get(pendingKey(service, op, key));
      if (entry !== undefined)
        return entry.fetchedAt < minFetchedAt ? undefined : [entry.found ? 1 : 0, entry.json, entry.fetchedAt, entry.runId, entry.refused];
    }
    const serviceId = this.lookupServiceId(service);
    if (serviceId === undefined) return undefined;
    const row = this.selectResult.get(serviceId, op, key) as unknown as ResultRow | undefined;
    // Age is checked before parsing: a stale entry costs no JSON.parse.
    return row === undefined || row[2] < minFetchedAt ? undefined : row;
  }

  /**
   * The stored answers for many keys of one operation at once: one query per chunk of keys
   * instead of one per key, which is what lets rows answered by the store run at CSV speed.
   * Keys without a (fresh enough) answer are absent from the result. With `cellsLayout`, each answer
   * comes as its cells where the store has them in that layout (no JSON.parse of the lead),
   * else as data.
   */
  getMany(service: string, op: Operation, keys: readonly string[], freshForMs?: Freshness, cellsLayout?: string): Map<string, StoredResult> {
    if (this.closed) throw closedError(this.path);
    try {
      return this.#getMany(service, op, keys, freshForMs, cellsLayout);
    } catch (error) {
      throw storeFailure(this.path, 'read', error);
    }
  }

  #getMany(
    service: string,
    op: Operation,
    keys: readonly string[],
    freshForMs: Freshness | undefined,
    cellsLayout: string | undefined,
  ): Map<string, StoredResult> {
    const found = new Map<string, StoredResult>();
    const minFetchedAt = this.#since(freshForMs);
    const serviceId = this.lookupServiceId(service);
    const form = cellsLayout === undefined ? 'data' : 'cells';
    const layout = cellsLayout ?? '';
    if (serviceId !== undefined) {
      for (let start = 0; start < keys.length; start += GET_MANY_CHUNK) {
        const chunk = start === 0 && keys.length <= GET_MANY_CHUNK ? keys : keys.slice(start, start + GET_MANY_CHUNK);
        let foreign: string[] | undefined;
        for (const row of this.manyAnswers.rows(serviceId, op, chunk, form)) {
          if (row[4] < minFetchedAt) continue;
          // Cells another version rendered (another layout: stored-cells.ts) are never used.
          const record = row[2] === null ? undefined : recordOf(row[2], layout);
          if (row[2] !== null && record === undefined) (foreign ??= []).push(row[0]);
          else setStored(found, row[0], storedOf(row[1] === 1, record, row[3], row[4], row[5], row[6]));
        }
        if (foreign) for (const [key, stored] of this.#getMany(service, op, foreign, freshForMs, undefined)) found.set(key, stored);
      }
    }
    // Answers put() but not yet committed win over what the file holds.
    if (this.pending.size !== 0) {
      for (const key of keys) {
        const entry = this.pending.get(pendingKey(service, op, key));
        if (entry === undefined) continue;
        if (entry.fetchedAt < minFetchedAt) {
          found.delete(key);
          continue;
        }
        const record = cellsLayout !== undefined && entry.cells !== null ? recordOf(entry.cells, layout) : undefined;
        setStored(found, key, storedOf(entry.found, record, entry.json, entry.fetchedAt, entry.runId, entry.refused));
      }
    }
    return found;
  }

  /**
   * Queue an answer; committed within flushIntervalMs (or at once when flushBatchSize are queued).
   * An existing entry for the same (service, op, key) is replaced (a refresh).
   */
  put(
    service: string,
    op: Operation,
    key: string,
    result: { found: boolean; data: unknown; fetchedAt?: number | undefined; cells?: AnswerCells | undefined; refused?: string | undefined },
    runId: string,
  ): void {
    if (this.closed) throw closedError(this.path);
    if (this.readonly) throw new Error(`The result store at ${this.path} was opened read-only`);
    const json = result.data === undefined ? null : JSON.stringify(result.data);
    // Kept in every run (JSONL, waterfall, --with too): a later CSV run reads them.
    const cells = result.cells === undefined ? null : cellsText(result.cells);
    const now = this.options.now();
    const first = this.pending.size === 0;
    // An answer fetched earlier (by another worker) keeps its own date, so --max-age still applies.
    this.pending.set(pendingKey(service, op, key), {
      service,
      op,
      key,
      found: result.found,
      json,
      cells,
      refused: result.refused ?? null,
      fetchedAt: result.fetchedAt ?? now,
      runId,
    });
    if (this.schedule.queued(first, this.pending.size, now)) this.flush();
  }

  /**
   * Commit everything pending in one transaction. On failure the entries stay pending (a later
   * flush may find room again) and a StoreFailedError says why.
   */
  flush(): void {
    if (this.closed) return;
    const waiting = this.schedule.begin();
    if (this.queued !== 0 && !this.readonly) {
      try {
        this.writer?.write(this.pending, this.settles);
      } catch (error) {
        const failure = storeFailure(this.path, 'written', error);
        waiting?.reject(failure);
        throw failure;
      }
      this.pending = new Map();
      this.settles = [];
    }
    waiting?.resolve();
  }

  /**
   * With flushIntervalMs 0: undefined when no answer waits for the commit at the end of this turn
   * of the event loop; else a promise that commit settles (commit-schedule.ts).
   */
  committed(): Promise<void> | undefined {
    return this.schedule.committed();
  }

  /**
   * Claims on keys in flight for the run `owner`, kept in this file: another run on the same store
   * waits for the answer instead of paying again (store-claims.ts).
   */
  claims(owner: string, service: string, leaseMs: number, elapsed?: () => number): StoreClaims {
    if (this.closed) throw closedError(this.path);
    if (this.readonly) throw new Error(`The result store at ${this.path} was opened read-only`);
    const db = this.db;
    const claims = new StoreClaims(db, { owner, service, leaseMs, now: this.options.now, flush: () => this.flush(), ...(elapsed ? { elapsed } : {}) });
    // Statements of a closed database throw: the claims go with the store.
    return claims;
  }

  /** What run `owner` with --changes lists and marks reported of `service` (change-report.ts): made before its first lookup. */
  changeReport(service: string, owner: string): ChangeReport {
    this.flush();
    return storeRead(this.path, () => new ChangeReport(this.db, { path: this.path, owner, service, now: this.options.now }, this.lookupServiceId(service)));
  }

  /** A call settled (store-spend.ts): its charge and its hold's release go in the commit of the answers received with it. */
  settle(settle: Settle): void {
    if (this.closed) throw closedError(this.path);
    if (this.readonly) throw new Error(`The result store at ${this.path} was opened read-only`);
    this.settles.push(settle);
    if (this.schedule.queued(this.queued === 1, this.queued, this.options.now())) this.flush();
  }

  /** The ledger's reads, a run's holds on the budgets every run on this file shares, and the ledger's upkeep (store-spend.ts). */
  spend(): StoreSpend {
    if (this.closed) throw closedError(this.path);
    return storeSpend(this.db, this.path, this.options.now);
  }

  /** Flush, then close. Idempotent. If the final flush fails, the store is closed anyway and the error thrown. */
  close(): void {
    if (this.closed) return;
    try {
      this.flush();
    } finally {
      this.closed = true;
      this.schedule.cancel();
      openStores.delete(this);
      this.db.close();
    }
  }

  /**
   * What the store holds, by operation and service, its date range and its size on disk (the
   * whole file's). With `service`: that service's entries only (none for a service never stored).
   */
  stats(service?: string): ResultStoreStats {
    if (this.closed) throw closedError(this.path);
    this.flush();
    return storeRead(this.path, () => readStats(this.db, this.path, this.serviceFilter(service)));
  }

  /** The entries one at a time (store export, store show): of `service` and/or `key` only, when given; with `history`, each followed by its earlier answers. */
  entries(filter: { service?: string | undefined; key?: string | undefined; history?: boolean | undefined } = {}): Generator<StoreEntry> {
    if (this.closed) throw closedError(this.path);
    return storeReads(this.path, () => readEntries(this.db, { serviceId: this.serviceFilter(filter.service), key: filter.key }, filter.history ?? false));
  }

  /** The answer the fetch of (service, op, key) at `fetchedAt` replaced, if it replaced one (answer-history.ts). */
  replaced(service: string, op: Operation, key: string, fetchedAt: number): ReplacedAnswer | undefined {
    if (this.closed) throw closedError(this.path);
    // The trigger that keeps the replaced answer runs when the new one is committed.
    if (this.pending.has(pendingKey(service, op, key))) this.flush();
    return storeRead(this.path, () => (this.#history ??= new AnswerHistory(this.db)).replaced(service, op, key, fetchedAt));
  }

  /** Delete entries and earlier answers fetched before now - olderThanMs (of `service` only, when given). Returns how many entries were deleted. */
  prune(olderThanMs: number, service?: string): number {
    if (!Number.isFinite(olderThanMs) || olderThanMs < 0) {
      throw new ConfigError(`Invalid prune age: must be a non-negative number of milliseconds, got '${olderThanMs}'`);
    }
    const only = this.serviceFilter(service);
    const cutoff = this.options.now() - olderThanMs;
    return only === undefined ? this.deleteWhere('fetched_at < ?', [cutoff]) : this.deleteWhere('fetched_at < ? AND service_id = ?', [cutoff, only]);
  }

  /** Delete every entry and earlier answer (of `service` only, when given). Returns how many entries were deleted. */
  clear(service?: string): number {
    const only = this.serviceFilter(service);
    return only === undefined ? this.deleteWhere('1', []) : this.deleteWhere('service_id = ?', [only]);
  }

  /** The id to filter on for `service` (-1, which no row has, for a service never stored); undefined: all. */
  private serviceFilter(service: string | undefined): number | undefined {
    if (service === undefined) return undefined;
    this.flush();
    return this.lookupServiceId(service) ?? -1;
  }

  /** Deletes the current and earlier answers `where` says; returns how many current ones. */
  private deleteWhere(where: string, params: Array<number | string>): number {
    if (this.closed) throw closedError(this.path);
    if (this.readonly) throw new Error(`The result store at ${this.path} was opened read-only`);
    this.flush();
    return deleteAnswers(this.db, this.path, where, params);
  }

  /**
   * Calls `listener` when a commit made after put() returned fails (a full disk, a damaged file):
   * the answers stay pending, and the caller decides (a run stops). Returns the way to stop listening.
   */
  onWriteFailure(listener: (error: StoreFailedError) => void): () => void {
    return this.schedule.onFailure(listener);
  }

  private lookupServiceId(service: string): number | undefined {
    let id = this.serviceIds.get(service);
    if (id === undefined) {
      // Not cached: maybe another process (or an earlier run) registered it. Only found ids are
      // cached; a service with no entries anywhere costs one indexed query per get, and every
      // such get is a miss that goes to the network anyway.
      id = this.selectedServiceId(service);
      if (id !== undefined) this.serviceIds.set(service, id);
    }
    return id;
  }
}

function closedError(filePath: string): Error {
  return new Error(`The result store at ${filePath} is closed`);
}
