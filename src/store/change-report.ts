// A change is reported once (docs/cli-contract.md, "Reported once, never absorbed"): the trigger
// that keeps a replaced answer (schema v9) leaves every real change unreported (`history.reported`
// 0), and only a run whose --changes file is complete marks the changes that file lists. This is a
// run's side of that, for one service:
// - Its own changes (the keys it looked up again) and the carried ones (stored by an earlier run
//   without --changes, or by one that stopped before its file was complete) are recorded as they
//   are listed, in a temporary table of this connection (no memory per row), and marked reported
//   together once the file is in place: a run that dies first marks nothing.
// - The carried changes are those stored before this run began (history's rowid up to the largest
//   when it began) that are not the work of a run still going (the current answer fetched by a
//   live run of the store's `runs`: that run lists them itself, or leaves them to the next run).
// - One run at a time lists carried changes: it holds the service's report lease, a row of
//   `claims` under an operation no lookup has, which lapses when its process is gone (as a key's
//   claim does). Another run with --changes at the same time lists its own changes only, and says so.
import os from 'node:os';
import type { Operation } from '../api/types.js';
import type { CarriedChange } from '../core/rows.js';
import { holderAlive } from '../core/processes.js';
import { AnswerHistory } from './answer-history.js';
import { immediateTransaction, prepareRaw, type Database, type Statement } from './sqlite.js';
import { storeFailure, storeRead } from './store-failure.js';

/** The claim row of the report lease: an operation no lookup has, and no key. */
const LEASE_OP = 'report_changes';
/** A lease not renewed by the run's sweep (a run without claims in the file: --redis) lasts this long, unless its process is gone. */
const LEASE_MS = 24 * 60 * 60 * 1000;
/** Keys per `IN (…)` query when a batch's keys are looked at. */
const CHUNK = 100;

export interface ChangeReportOptions {
  /** The store's file, named when it fails. */
  path: string;
  /** This run's id, as its answers' run_id and its row of `runs`. */
  owner: string;
  service: string;
  now: () => number;
  /** Whether the run `owner`, of process `pid` of this host, is alive (tests replace it). */
  alive?: ((pid: number, owner: string) => boolean) | undefined;
}

/** Who holds the report lease when this run could not take it. */
export interface LeaseHolder {
  pid: number;
  host: string;
}

let tables = 0;

export class ChangeReport {
  readonly #db: Database;
  readonly #options: Required<ChangeReportOptions>;
  readonly #history: AnswerHistory;
  readonly #host = os.hostname();
  readonly #table = `reported_now_${process.pid}_${(tables += 1)}`;
  readonly #record: Statement;
  /** The service's id when it has answers (else nothing is carried). */
  readonly #serviceId: number | undefined;
  /** Undefined when this run holds the lease (it lists carried changes); else who does. */
  readonly holder: LeaseHolder | undefined;
  /** History's largest rowid when the run began: later rows are this run's or another live run's. */
  readonly #upTo: number;
  /** The other runs live on the store when this one began. */
  readonly #running: ReadonlySet<string>;
  /** Keys whose carried changes a row took (op NUL key): listed at that row, not again. */
  readonly #taken = new Set<string>();
  /** The carried changes of the last batch's keys (null: none). */
  #batch = new Map<string, CarriedChange[] | null>();
  readonly #anyOf: Statement;

  constructor(db: Database, options: ChangeReportOptions, serviceId: number | undefined) {
    this.#db = db;
    this.#options = { alive: holderAlive, ...options };
    this.#history = new AnswerHistory(db);
    this.#serviceId = serviceId;
    db.exec(
      `CREATE TEMP TABLE ${this.#table} (op TEXT NOT NULL, key TEXT NOT NULL, replaced_at INTEGER NOT NULL, PRIMARY KEY (op, key, replaced_at)) WITHOUT ROWID`,
    );
    this.#record = db.prepare(`INSERT OR IGNORE INTO temp.${this.#table} (op, key, replaced_at) VALUES (?, ?, ?)`);
    this.#anyOf = prepareRaw(db, 'SELECT 1 FROM history WHERE service_id = ? AND op = ? AND key = ? AND reported = 0 AND rowid <= ? LIMIT 1');
    const begun = immediateTransaction(db, () => ({ holder: this.#takeLease(), upTo: this.#largestRowid(), running: this.#liveRuns() }));
    this.holder = begun.holder;
    this.#upTo = begun.upTo;
    this.#running = begun.running;
  }

  /** Whether this run lists the carried changes (it holds the lease). */
  get carries(): boolean {
    return this.holder === undefined && this.#serviceId !== undefined;
  }

  /** Looks at the carried changes of a batch's keys, one query per chunk of keys. */
  prefetch(keysByOp: ReadonlyMap<Operation, readonly string[]>): void {
    this.#batch = new Map();
    if (this.carries) storeRead(this.#options.path, () => this.#prefetch(keysByOp));
  }

  #prefetch(keysByOp: ReadonlyMap<Operation, readonly string[]>): void {
    for (const [op, keys] of keysByOp) {
      const fresh = keys.filter((key) => !this.#taken.has(`${op}\0${key}`));
      for (const key of fresh) this.#batch.set(`${op}\0${key}`, null);
      for (let start = 0; start < fresh.length; start += CHUNK) {
        const chunk = fresh.slice(start, start + CHUNK);
        const sql = `SELECT DISTINCT key FROM history WHERE service_id = ? AND op = ? AND reported = 0 AND rowid <= ? AND key IN (${chunk.map(() => '?').join(', ')})`;
        for (const [key] of prepareRaw(this.#db, sql).all(this.#serviceId!, op, this.#upTo, ...chunk) as unknown as Array<[string]>) {
          this.#batch.set(`${op}\0${key}`, this.#changesOf(op, key));
        }
      }
    }
  }

  /** The carried changes of a key, for the first row that stands for it (undefined: none, or taken). */
  take(op: Operation, key: string): CarriedChange[] | undefined {
    if (!this.carries) return undefined;
    const id = `${op}\0${key}`;
    if (this.#taken.has(id)) return undefined;
    let changes = this.#batch.get(id);
    if (changes === undefined)
      changes = storeRead(this.#options.path, () => (this.#anyOf.get(this.#serviceId!, op, key, this.#upTo) === undefined ? null : this.#changesOf(op, key)));
    if (changes === null || changes.length === 0) return undefined;
    this.#taken.add(id);
    return changes;
  }

  /** The carried changes of the keys no row took, of these operations, key by key in (operation, key) order. */
  *rest(ops: ReadonlySet<Operation>): Generator<CarriedChange[]> {
    if (!this.carries) return;
    const sql = 'SELECT DISTINCT op, key FROM history WHERE service_id = ? AND reported = 0 AND rowid <= ? ORDER BY op, key';
    const keys = storeRead(this.#options.path, () => prepareRaw(this.#db, sql).all(this.#serviceId!, this.#upTo) as unknown as Array<[Operation, string]>);
    for (const [op, key] of keys) {
      if (!ops.has(op) || this.#taken.has(`${op}\0${key}`)) continue;
      const changes = storeRead(this.#options.path, () => this.#changesOf(op, key));
      if (changes.length > 0) yield changes;
    }
  }

  /** A change listed (or compared and found to show nothing): marked reported with the others once the file is in place. */
  listed(op: Operation, key: string, replacedAt: number): void {
    try {
      this.#record.run(op, key, replacedAt);
    } catch (error) {
      throw storeFailure(this.#options.path, 'written', error);
    }
  }

  /** The file is in place: every change recorded is marked reported, in one transaction. Returns how many. */
  markReported(): number {
    try {
      return this.#markReported();
    } catch (error) {
      throw storeFailure(this.#options.path, 'written', error);
    }
  }

  #markReported(): number {
    return immediateTransaction(this.#db, () => {
      const marked = this.#db
        .prepare(
          `UPDATE history SET reported = 1 WHERE reported = 0 AND rowid IN (
             SELECT h.rowid FROM temp.${this.#table} l JOIN history h
             ON h.service_id = (SELECT id FROM services WHERE name = ?) AND h.op = l.op AND h.key = l.key AND h.replaced_at = l.replaced_at)`,
        )
        .run(this.#options.service).changes;
      return Number(marked);
    });
  }

  /** The run is over: the lease goes (if this run held it), and the record of what was listed. */
  close(): void {
    try {
      if (this.holder === undefined)
        this.#db
          .prepare('DELETE FROM claims WHERE service = ? AND op = ? AND key = ? AND owner = ?')
          .run(this.#options.service, LEASE_OP, '', this.#options.owner);
    } finally {
      this.#db.exec(`DROP TABLE IF EXISTS temp.${this.#table}`);
    }
  }

  #changesOf(op: Operation, key: string): CarriedChange[] {
    return this.#history.unreported(this.#serviceId!, op, key, this.#upTo, this.#running);
  }

  /** Takes the service's report lease unless a live run holds it; returns that run, or undefined (taken). */
  #takeLease(): LeaseHolder | undefined {
    const { service, owner, now } = this.#options;
    const held = prepareRaw(this.#db, 'SELECT owner, pid, host, expires_at FROM claims WHERE service = ? AND op = ? AND key = ?').get(
      service,
      LEASE_OP,
      '',
    ) as unknown as [string, number, string, number] | undefined;
    if (held && held[0] !== owner && !this.#lapsed(held[0], held[1], held[2], held[3])) return { pid: held[1], host: held[2] };
    this.#db
      .prepare('INSERT OR REPLACE INTO claims (service, op, key, owner, pid, host, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(service, LEASE_OP, '', owner, process.pid, this.#host, now() + LEASE_MS);
    return undefined;
  }

  #largestRowid(): number {
    return Number((prepareRaw(this.#db, 'SELECT coalesce(max(rowid), 0) FROM history').get() as unknown as [number])[0]);
  }

  /** The other runs registered on the store whose process is alive and whose lease holds. */
  #liveRuns(): Set<string> {
    const rows = prepareRaw(this.#db, 'SELECT owner, pid, host, expires_at FROM runs WHERE owner <> ?').all(this.#options.owner) as unknown as Array<
      [string, number, string, number]
    >;
    return new Set(rows.filter(([owner, pid, host, expiresAt]) => !this.#lapsed(owner, pid, host, expiresAt)).map(([owner]) => owner));
  }

  #lapsed(owner: string, pid: number, host: string, expiresAt: number): boolean {
    return expiresAt < this.#options.now() || (host === this.#host && !this.#options.alive(pid, owner));
  }
}
