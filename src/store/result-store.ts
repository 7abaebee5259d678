// The durable result store: pay once per key. Answers of completed lookups are kept in SQLite so
// duplicates within a run and re-runs after a crash never reach the network (design.md, "look up":
// the store answers first; misses go to the network and then into the store).
//
// Durability model: put() queues in memory and is visible to get() at once; the queue is committed
// in one transaction once its oldest entry is `flushIntervalMs` old (checked by every put(), and by
// a one-shot timer for the last ones: a timer alone runs late on a busy event loop) or as soon as
// `flushBatchSize` entries wait. A process killed with SIGKILL therefore loses at most the answers
// of the last ~flushIntervalMs. WAL with synchronous=NORMAL survives a process crash (a
// committed transaction is in the WAL file); only a power loss / OS crash can drop the last commits.
//
// Nothing secret is stored: the API token never reaches this module.

import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { ConfigError } from '../api/errors.js';
import type { Operation } from '../api/types.js';

export interface StoredResult {
  /** false = the API answered "not found": a valid (and free) answer worth keeping too. */
  found: boolean;
  /** The JSON `data` object of the API answer, as received (unknown fields kept). */
  data: unknown;
  /** When it was fetched, epoch ms. */
  fetchedAt: number;
  /** The run that fetched it: lets the pipeline tell "duplicate in this run" from "cached before". */
  runId: string;
}

export interface ResultStoreOptions {
  /** File path, or ':memory:'. */
  path: string;
  /** Pending writes are committed at least this often. Default 100. 0 = commit on every put. */
  flushIntervalMs?: number;
  /** ...or as soon as this many are pending. Default 200. */
  flushBatchSize?: number;
  /** Open an existing store for reading only (stats, inspection). */
  readonly?: boolean;
  /** Clock, epoch ms. For tests of maxAge / prune; defaults to Date.now. */
  now?: () => number;
}

export interface ResultStoreStats {
  entries: number;
  byOperation: Record<string, number>;
  byService: Record<string, number>;
  oldest?: number;
  newest?: number;
  sizeBytes: number;
  path: string;
}

const DEFAULTS: Required<Omit<ResultStoreOptions, 'path'>> = {
  flushIntervalMs: 100,
  flushBatchSize: 200,
  readonly: false,
  now: Date.now,
};

/** Long enough for another process's flush (a few ms) or checkpoint to finish. */
const BUSY_TIMEOUT_MS = 5_000;

/** Page cache per connection, KiB. */
const CACHE_KIB = 8_192;

/** Marks the file as ours ('LENR'), so a stranger SQLite database is refused, not modified. */
const APPLICATION_ID = 0x4c454e52;

/**
 * Schema migrations: MIGRATIONS[i] takes a store from version i to i + 1 (PRAGMA user_version).
 * Append, never edit.
 *
 * v1 notes:
 * - `services` maps the (long, repeated) service name to a small integer, which keeps the primary
 *   key index small. Rows of `services` are never deleted: another process may hold an id in its
 *   cache, and SQLite would reuse a deleted max id for a different service.
 * - `data` is the API's JSON `data` as text (NULL when the answer had none); parsed on get.
 * - An ordinary rowid table (not WITHOUT ROWID) because rows carry a JSON body of ~1 KB, well above
 *   the size where WITHOUT ROWID pays off.
 * - The fetched_at index makes prune() and stats()'s oldest/newest cheap on large stores.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE services (
    id   INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE
  );
  CREATE TABLE results (
    service_id INTEGER NOT NULL REFERENCES services (id),
    op         TEXT    NOT NULL,
    key        TEXT    NOT NULL,
    found      INTEGER NOT NULL CHECK (found IN (0, 1)),
    data       TEXT,
    fetched_at INTEGER NOT NULL,
    run_id     TEXT    NOT NULL,
    PRIMARY KEY (service_id, op, key)
  );
  CREATE INDEX results_fetched_at ON results (fetched_at);
  -- For people inspecting the file with the sqlite3 shell.
  CREATE VIEW results_view AS
    SELECT s.name AS service, r.op, r.key, r.found, r.data,
           strftime('%Y-%m-%dT%H:%M:%fZ', r.fetched_at / 1000.0, 'unixepoch') AS fetched_at_utc,
           r.run_id
    FROM results r JOIN services s ON s.id = r.service_id;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

interface Pending {
  service: string;
  op: Operation;
  key: string;
  found: boolean;
  /** JSON text, serialized at put() time so later changes to the caller's object are not stored. */
  json: string | null;
  fetchedAt: number;
  runId: string;
}

type ResultRow = [found: number, data: string | null, fetchedAt: number, runId: string];
type ManyRow = [key: string, found: number, data: string | null, fetchedAt: number, runId: string];
/** Keys per `IN (…)` query in getMany: large enough to amortize the call, small enough to prepare. */
const GET_MANY_CHUNK = 100;

// Flush every open store when the process exits normally or through process.exit(): better-sqlite3
// is synchronous, so this works in an 'exit' handler. (SIGKILL cannot be caught: that is what the
// timer is for. SIGINT/SIGTERM must be handled by the CLI, which should close() the store.)
const openStores = new Set<ResultStore>();
let exitHookInstalled = false;
function flushAllOnExit(): void {
  for (const store of openStores) {
    try {
      store.close();
    } catch (error) {
      process.stderr.write(
        `lead-enrich: could not save pending results to ${store.path}: ${oneLine(error)}\n`,
      );
    }
  }
}

export class ResultStore {
  readonly path: string;
  readonly readonly: boolean;

  private readonly db: Database.Database;
  private readonly options: Required<Omit<ResultStoreOptions, 'path'>>;
  private pending = new Map<string, Pending>();
  private timer: NodeJS.Timeout | undefined;
  /** When the oldest pending entry was queued. */
  private pendingSince = 0;
  private closed = false;
  /** Committed service ids only (see writeBatch). */
  private readonly serviceIds = new Map<string, number>();

  private readonly selectResult: Database.Statement<[number, string, string], ResultRow>;
  private readonly selectServiceId: Database.Statement<[string], number>;
  private readonly insertService: Database.Statement<[string]> | undefined;
  private readonly upsertResult:
    | Database.Statement<[number, string, string, number, string | null, number, string]>
    | undefined;
  private readonly writeBatch: ((batch: Map<string, Pending>) => void) | undefined;

  private constructor(db: Database.Database, filePath: string, options: Required<Omit<ResultStoreOptions, 'path'>>) {
    this.db = db;
    this.path = filePath;
    this.options = options;
    this.readonly = options.readonly;

    // raw(): arrays are cheaper to build than objects on the per-row hot path.
    this.selectResult = db
      .prepare<[number, string, string], ResultRow>(
        'SELECT found, data, fetched_at, run_id FROM results WHERE service_id = ? AND op = ? AND key = ?',
      )
      .raw(true);
    this.selectServiceId = db
      .prepare<[string], number>('SELECT id FROM services WHERE name = ?')
      .pluck(true);

    if (!this.readonly) {
      const insertService = db.prepare<[string]>(
        'INSERT INTO services (name) VALUES (?) ON CONFLICT (name) DO NOTHING',
      );
      const upsertResult = db.prepare<[number, string, string, number, string | null, number, string]>(
        `INSERT INTO results (service_id, op, key, found, data, fetched_at, run_id)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (service_id, op, key) DO UPDATE SET
           found = excluded.found, data = excluded.data,
           fetched_at = excluded.fetched_at, run_id = excluded.run_id`,
      );
      this.insertService = insertService;
      this.upsertResult = upsertResult;
      const transaction = db.transaction((batch: Map<string, Pending>) => {
        // Ids of services first inserted here are cached only after COMMIT: a rolled-back id could
        // later belong to another service, and results would then mix.
        const fresh = new Map<string, number>();
        for (const entry of batch.values()) {
          let serviceId = this.serviceIds.get(entry.service) ?? fresh.get(entry.service);
          if (serviceId === undefined) {
            insertService.run(entry.service);
            serviceId = this.selectServiceId.get(entry.service);
            if (serviceId === undefined) throw new Error(`could not register service ${entry.service}`);
            fresh.set(entry.service, serviceId);
          }
          upsertResult.run(
            serviceId, entry.op, entry.key, entry.found ? 1 : 0, entry.json, entry.fetchedAt, entry.runId,
          );
        }
        return fresh;
      });
      // IMMEDIATE takes the write lock up front, so busy_timeout applies; a DEFERRED transaction
      // that reads then writes can fail at once with SQLITE_BUSY when another process committed.
      this.writeBatch = (batch) => {
        const fresh = transaction.immediate(batch);
        for (const [name, id] of fresh) this.serviceIds.set(name, id);
      };
    }
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

    let db: Database.Database | undefined;
    try {
      db = new Database(filePath, { readonly: settings.readonly, fileMustExist: settings.readonly });
      // First, so every statement below (and every later write) waits for another process's lock.
      db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
      // Per connection, allocated only as used. Hits are random b-tree reads: the 2 MiB default
      // misses on stores of a few 10k entries (~15% more hits/s with 64 MiB at 100k). 8 MiB holds
      // the whole key index of a 100k-entry store; on a 1M-entry store a probe measured 3.7 µs at
      // 16 MiB or 64 MiB and 4.1 µs at 4 MiB, so more cache buys little there, and it is RSS.
      db.pragma(`cache_size = -${CACHE_KIB}`);
      migrate(db, filePath, settings.readonly);
      const store = new ResultStore(db, filePath, settings);
      openStores.add(store);
      if (!exitHookInstalled) {
        process.on('exit', flushAllOnExit);
        exitHookInstalled = true;
      }
      return store;
    } catch (error) {
      db?.close();
      if (error instanceof ConfigError) throw error;
      throw openError(filePath, error);
    }
  }

  /**
   * The stored answer for (service, op, key), or undefined when there is none or it was fetched
   * more than `maxAgeMs` ago. Sees entries put() but not yet flushed. Synchronous and cheap: called
   * for every input row.
   */
  get(service: string, op: Operation, key: string, maxAgeMs?: number): StoredResult | undefined {
    if (this.closed) throw closedError(this.path);
    const minFetchedAt = maxAgeMs === undefined ? -Infinity : this.options.now() - maxAgeMs;

    if (this.pending.size !== 0) {
      const entry = this.pending.get(pendingKey(service, op, key));
      if (entry !== undefined) {
        if (entry.fetchedAt < minFetchedAt) return undefined;
        return {
          found: entry.found,
          data: entry.json === null ? undefined : JSON.parse(entry.json),
          fetchedAt: entry.fetchedAt,
          runId: entry.runId,
        };
      }
    }

    const serviceId = this.lookupServiceId(service);
    if (serviceId === undefined) return undefined;
    const row = this.selectResult.get(serviceId, op, key);
    if (row === undefined) return undefined;
    // Age is checked before parsing: a stale entry costs no JSON.parse.
    if (row[2] < minFetchedAt) return undefined;
    return {
      found: row[0] === 1,
      data: row[1] === null ? undefined : JSON.parse(row[1]),
      fetchedAt: row[2],
      runId: row[3],
    };
  }

  /**
   * The stored answers for many keys of one operation at once: one query per chunk of keys
   * instead of one per key, which is what lets rows answered by the store run at CSV speed.
   * Keys without a (fresh enough) answer are absent from the result.
   */
  getMany(service: string, op: Operation, keys: readonly string[], maxAgeMs?: number): Map<string, StoredResult> {
    if (this.closed) throw closedError(this.path);
    const found = new Map<string, StoredResult>();
    const minFetchedAt = maxAgeMs === undefined ? -Infinity : this.options.now() - maxAgeMs;
    const serviceId = this.lookupServiceId(service);
    if (serviceId !== undefined) {
      for (let start = 0; start < keys.length; start += GET_MANY_CHUNK) {
        const chunk = keys.slice(start, start + GET_MANY_CHUNK);
        for (const row of this.selectMany(chunk.length).all(serviceId, op, ...chunk)) {
          if (row[3] < minFetchedAt) continue;
          found.set(row[0], { found: row[1] === 1, data: row[2] === null ? undefined : JSON.parse(row[2]), fetchedAt: row[3], runId: row[4] });
        }
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
        found.set(key, { found: entry.found, data: entry.json === null ? undefined : JSON.parse(entry.json), fetchedAt: entry.fetchedAt, runId: entry.runId });
      }
    }
    return found;
  }

  /** Prepared `key IN (?, …)` statements, one per chunk size seen (at most GET_MANY_CHUNK). */
  private readonly selectManyBySize = new Map<number, Database.Statement<unknown[], ManyRow>>();
  private selectMany(size: number): Database.Statement<unknown[], ManyRow> {
    let statement = this.selectManyBySize.get(size);
    if (!statement) {
      statement = this.db
        .prepare<unknown[], ManyRow>(
          `SELECT key, found, data, fetched_at, run_id FROM results WHERE service_id = ? AND op = ? AND key IN (${new Array(size).fill('?').join(', ')})`,
        )
        .raw(true);
      this.selectManyBySize.set(size, statement);
    }
    return statement;
  }

  /**
   * Queue an answer; committed within flushIntervalMs (or at once when flushBatchSize are queued).
   * An existing entry for the same (service, op, key) is replaced (a refresh).
   */
  put(
    service: string,
    op: Operation,
    key: string,
    result: { found: boolean; data: unknown; fetchedAt?: number | undefined },
    runId: string,
  ): void {
    if (this.closed) throw closedError(this.path);
    if (this.readonly) throw new Error(`The result store at ${this.path} was opened read-only`);
    const json = result.data === undefined ? null : JSON.stringify(result.data);
    const now = this.options.now();
    if (this.pending.size === 0) this.pendingSince = now;
    // An answer fetched earlier (by another worker) keeps its own date, so --max-age still applies.
    this.pending.set(pendingKey(service, op, key), {
      service, op, key, found: result.found, json, fetchedAt: result.fetchedAt ?? now, runId,
    });
    if (
      this.pending.size >= this.options.flushBatchSize ||
      this.options.flushIntervalMs === 0 ||
      now - this.pendingSince >= this.options.flushIntervalMs
    ) {
      this.flush();
    } else if (this.timer === undefined) {
      this.timer = setTimeout(this.onTimer, this.options.flushIntervalMs);
      // Never keeps the process alive; the 'exit' hook and close() take care of the rest.
      this.timer.unref();
    }
  }

  /** Commit everything pending in one transaction. On failure the entries stay pending. */
  flush(): void {
    if (this.closed) return;
    this.clearTimer();
    if (this.pending.size === 0 || this.writeBatch === undefined) return;
    const batch = this.pending;
    this.writeBatch(batch);
    this.pending = new Map();
  }

  /** Flush, then close. Idempotent. If the final flush fails, the store is closed anyway and the error thrown. */
  close(): void {
    if (this.closed) return;
    try {
      this.flush();
    } finally {
      this.closed = true;
      this.clearTimer();
      openStores.delete(this);
      if (openStores.size === 0 && exitHookInstalled) {
        process.removeListener('exit', flushAllOnExit);
        exitHookInstalled = false;
      }
      this.db.close();
    }
  }

  stats(): ResultStoreStats {
    if (this.closed) throw closedError(this.path);
    this.flush();
    const names = new Map<number, string>();
    for (const [id, name] of this.db.prepare<[], [number, string]>('SELECT id, name FROM services').raw(true).all()) {
      names.set(id, name);
    }
    // Grouped by the primary key's prefix: answered from that index, without reading the JSON.
    const groups = this.db
      .prepare<[], [number, string, number]>('SELECT service_id, op, count(*) FROM results GROUP BY service_id, op')
      .raw(true)
      .all();
    let entries = 0;
    const byOperation: Record<string, number> = {};
    const byService: Record<string, number> = {};
    for (const [serviceId, op, count] of groups) {
      entries += count;
      byOperation[op] = (byOperation[op] ?? 0) + count;
      const name = names.get(serviceId) ?? `#${serviceId}`;
      byService[name] = (byService[name] ?? 0) + count;
    }
    // Two statements: SQLite's min/max index shortcut only applies to a lone min() or max().
    const oldest = this.db.prepare<[], number | null>('SELECT min(fetched_at) FROM results').pluck(true).get();
    const newest = this.db.prepare<[], number | null>('SELECT max(fetched_at) FROM results').pluck(true).get();
    const stats: ResultStoreStats = { entries, byOperation, byService, sizeBytes: this.sizeBytes(), path: this.path };
    if (oldest !== null && oldest !== undefined) stats.oldest = oldest;
    if (newest !== null && newest !== undefined) stats.newest = newest;
    return stats;
  }

  /** Delete entries fetched before now - olderThanMs. Returns how many were deleted. */
  prune(olderThanMs: number): number {
    if (!Number.isFinite(olderThanMs) || olderThanMs < 0) {
      throw new ConfigError(`Invalid prune age: must be a non-negative number of milliseconds, got '${olderThanMs}'`);
    }
    return this.deleteWhere('DELETE FROM results WHERE fetched_at < ?', [this.options.now() - olderThanMs]);
  }

  /** Delete every entry (of every service). Returns how many were deleted. */
  clear(): number {
    return this.deleteWhere('DELETE FROM results', []);
  }

  private deleteWhere(sql: string, params: unknown[]): number {
    if (this.closed) throw closedError(this.path);
    if (this.readonly) throw new Error(`The result store at ${this.path} was opened read-only`);
    this.flush();
    const { changes } = this.db.prepare(sql).run(...params);
    if (changes > 0) {
      // Give the freed pages back to the file system (auto_vacuum = INCREMENTAL, set at creation),
      // then checkpoint so the shrink reaches the main file and the WAL is emptied.
      this.db.pragma('incremental_vacuum');
      if (this.path !== ':memory:') this.db.pragma('wal_checkpoint(TRUNCATE)');
    }
    return changes;
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    try {
      this.flush();
    } catch {
      // Entries stay pending (e.g. the file is locked beyond busy_timeout or the disk is full):
      // try again later. The error reaches the caller through the next synchronous flush
      // (a full batch, flush(), close()) instead of crashing the process from a timer.
      if (!this.closed && this.pending.size > 0 && this.timer === undefined) {
        this.timer = setTimeout(this.onTimer, this.options.flushIntervalMs);
        this.timer.unref();
      }
    }
  };

  private clearTimer(): void {
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
  }

  private lookupServiceId(service: string): number | undefined {
    let id = this.serviceIds.get(service);
    if (id === undefined) {
      // Not cached: maybe another process (or an earlier run) registered it. Only found ids are
      // cached; a service with no entries anywhere costs one indexed query per get, and every
      // such get is a miss that goes to the network anyway.
      id = this.selectServiceId.get(service);
      if (id !== undefined) this.serviceIds.set(service, id);
    }
    return id;
  }

  private sizeBytes(): number {
    if (this.path === ':memory:') {
      const pageCount = this.db.pragma('page_count', { simple: true }) as number;
      const pageSize = this.db.pragma('page_size', { simple: true }) as number;
      return pageCount * pageSize;
    }
    let total = 0;
    for (const suffix of ['', '-wal', '-shm']) {
      try {
        total += fs.statSync(this.path + suffix).size;
      } catch {
        // -wal / -shm exist only while a connection is open in WAL mode.
      }
    }
    return total;
  }
}

function resolveOptions(options: ResultStoreOptions): Required<Omit<ResultStoreOptions, 'path'>> {
  if (typeof options.path !== 'string' || options.path.trim() === '') {
    throw new ConfigError(
      `Invalid result store path: must be a file path or ':memory:', got '${String(options.path)}'. ` +
        'Pass --store PATH or set LEAD_ENRICH_STORE.',
    );
  }
  const settings = {
    flushIntervalMs: options.flushIntervalMs ?? DEFAULTS.flushIntervalMs,
    flushBatchSize: options.flushBatchSize ?? DEFAULTS.flushBatchSize,
    readonly: options.readonly ?? DEFAULTS.readonly,
    now: options.now ?? DEFAULTS.now,
  };
  // setTimeout clamps anything above 2^31-1 ms to 1 ms: refuse rather than flush constantly.
  if (!Number.isFinite(settings.flushIntervalMs) || settings.flushIntervalMs < 0 || settings.flushIntervalMs > 2 ** 31 - 1) {
    throw new ConfigError(
      `Invalid flushIntervalMs: must be a number of milliseconds from 0 to ${2 ** 31 - 1}, got '${settings.flushIntervalMs}'`,
    );
  }
  if (!Number.isInteger(settings.flushBatchSize) || settings.flushBatchSize < 1) {
    throw new ConfigError(`Invalid flushBatchSize: must be a positive integer, got '${settings.flushBatchSize}'`);
  }
  return settings;
}

/** Parent directories (0700) and the file itself (0600) before SQLite opens it. */
function prepareFile(filePath: string, readonly: boolean): void {
  try {
    if (readonly) {
      if (!fs.existsSync(filePath)) {
        throw new ConfigError(
          `Cannot open the result store at ${filePath}: no such file (nothing has been stored there yet). ` +
            'Pass --store PATH or set LEAD_ENRICH_STORE to an existing store.',
        );
      }
      return;
    }
    fs.mkdirSync(path.dirname(filePath), { recursive: true, mode: 0o700 });
    let fd: number;
    try {
      // 'wx': create only if missing, so an existing store keeps whatever mode its owner chose.
      fd = fs.openSync(filePath, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Exists: check it can be opened for writing (and is not a directory) with a clear error.
      fs.closeSync(fs.openSync(filePath, 'r+'));
      return;
    }
    try {
      // The umask cannot widen 0600, but a strange umask (e.g. 0277) could narrow it to unusable.
      fs.fchmodSync(fd, 0o600);
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    throw openError(filePath, error);
  }
}

/** Settings, ownership check, and schema creation/upgrade. Throws ConfigError for a foreign file. */
function migrate(db: Database.Database, filePath: string, readonly: boolean): void {
  const readHeader = () => ({
    // The first read of the file: this is where a non-database file fails (SQLITE_NOTADB).
    version: db.pragma('user_version', { simple: true }) as number,
    appId: db.pragma('application_id', { simple: true }) as number,
    tables: db.prepare<[], number>("SELECT count(*) FROM sqlite_schema WHERE type = 'table'").pluck(true).get() ?? 0,
  });
  const check = (header: ReturnType<typeof readHeader>) => {
    const empty = header.version === 0 && header.tables === 0 && header.appId === 0;
    if (!empty && header.appId !== APPLICATION_ID) {
      throw new ConfigError(
        `Cannot open the result store at ${filePath}: it is a SQLite database but not a lead-enrich result store. ` +
          'Pass --store PATH or set LEAD_ENRICH_STORE to another file.',
      );
    }
    if (header.version > SCHEMA_VERSION) {
      throw new ConfigError(
        `Cannot open the result store at ${filePath}: it was written by a newer lead-enrich (schema ${header.version}, ` +
          `this version knows ${SCHEMA_VERSION}). Upgrade lead-enrich, or pass --store PATH to use another file.`,
      );
    }
    return empty;
  };

  const header = readHeader();
  const empty = check(header);

  if (readonly) {
    if (empty || header.version < SCHEMA_VERSION) {
      throw new ConfigError(
        `Cannot open the result store at ${filePath} read-only: it is ${empty ? 'empty' : 'an older version'}; ` +
          'open it once for writing (any enrich run) to set it up.',
      );
    }
    return;
  }

  if (empty) {
    // Must precede the first table; lets prune()/clear() shrink the file.
    db.pragma('auto_vacuum = INCREMENTAL');
  }
  // Persistent in the file; readers never block the writer and vice versa, and a second process
  // can share the store. NORMAL: a commit survives a process crash (not necessarily a power cut).
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');

  if (header.version === SCHEMA_VERSION) return;
  db.transaction(() => {
    // Read again under the write lock: another process may have migrated meanwhile.
    const current = readHeader();
    check(current);
    for (let version = current.version; version < SCHEMA_VERSION; version++) {
      db.exec(MIGRATIONS[version]!);
    }
    db.pragma(`application_id = ${APPLICATION_ID}`);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

// Unit separator: cannot appear in a normalized key, service name or operation.
function pendingKey(service: string, op: string, key: string): string {
  return `${service}\u001f${op}\u001f${key}`;
}

function closedError(filePath: string): Error {
  return new Error(`The result store at ${filePath} is closed`);
}

function openError(filePath: string, error: unknown): ConfigError {
  return new ConfigError(
    `Cannot open the result store at ${filePath}: ${reason(error)}. ` +
      'Pass --store PATH or set LEAD_ENRICH_STORE to a writable location.',
    { cause: error },
  );
}

const REASONS: Record<string, string> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EROFS: 'the file system is read-only',
  ENOTDIR: 'a part of the path is not a directory',
  EISDIR: 'it is a directory',
  ENOSPC: 'no space left on the device',
  ENAMETOOLONG: 'the path is too long',
  ELOOP: 'too many symbolic links in the path',
  SQLITE_NOTADB: 'the file exists but is not a SQLite database',
  SQLITE_CORRUPT: 'the database file is corrupt',
  SQLITE_CANTOPEN: 'unable to open the database file',
  SQLITE_READONLY: 'the file is read-only',
  SQLITE_BUSY: 'the file is locked by another process',
  SQLITE_FULL: 'no space left on the device',
};

function reason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    const known = REASONS[code] ?? (code.startsWith('SQLITE_IOERR') ? 'an I/O error' : undefined);
    if (known !== undefined) return known;
  }
  return oneLine(error);
}

function oneLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/\s+/g, ' ').trim();
}
