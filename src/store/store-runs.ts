// The runs that have a store open for lookups (schema v6), so that a run alone on its store claims
// nothing: a claim is a commit per key (store-claims.ts), and almost every run is alone. A run
// registers when it starts; one that finds another live run here claims from its first key and
// says so (`claiming`); one that was alone notices a newcomer (another connection committed:
// SQLite's data_version, read every 100 ms at most) at its next claim or sweep, claims its keys in flight and
// says so; the newcomer waits for that before its own first claim. A run that ended removed its
// row; one whose process is gone (this host) or that stopped renewing its row for a lease, as this
// run's own clock measures it (lease-watch.ts: never by comparing clocks), is not waited for.
import os from 'node:os';
import { holderAlive } from '../core/processes.js';
import { LeaseWatch, monotonicMs } from './lease-watch.js';
import { prepareRaw, immediateTransaction, type Database, type Statement } from './sqlite.js';

/** How often a run alone on its store looks for a newcomer, at most (as often as a waiting run polls). */
const LOOK_EVERY_MS = 100;

export interface StoreRunsOptions {
  /** This run's id. */
  owner: string;
  /** How long a registration holds without renewal (a frozen or unreachable process). */
  leaseMs: number;
  now: () => number;
  /** Whether the run `owner`, of process `pid` of this host, is alive (tests replace it). */
  alive?: (pid: number, owner: string) => boolean;
  /** This run's monotonic time (ms), by which the others' leases are measured (tests replace it). */
  elapsed?: () => number;
}

interface OtherRun {
  owner: string;
  pid: number;
  host: string;
  expiresAt: number;
  claiming: boolean;
}

export class StoreRuns {
  readonly #db: Database;
  readonly #options: Required<StoreRunsOptions>;
  readonly #host = os.hostname();
  readonly #insert: Statement;
  readonly #others: Statement;
  readonly #deleteRun: Statement;
  readonly #markClaiming: Statement;
  readonly #renew: Statement;
  readonly #dataVersion: Statement;
  /** data_version when this run last looked at the others: it changes when another connection commits. */
  #seenVersion = -1;
  /** When this run last looked (epoch ms). */
  #lookedAt = -Infinity;
  readonly #watch: LeaseWatch;

  constructor(db: Database, options: StoreRunsOptions) {
    this.#db = db;
    this.#options = { alive: holderAlive, elapsed: monotonicMs, ...options };
    this.#watch = new LeaseWatch({ host: this.#host, leaseMs: options.leaseMs, elapsed: this.#options.elapsed, alive: this.#options.alive });
    this.#insert = db.prepare(
      `INSERT INTO runs (owner, pid, host, expires_at, claiming) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (owner) DO UPDATE SET pid = excluded.pid, host = excluded.host, expires_at = excluded.expires_at, claiming = excluded.claiming`,
    );
    this.#others = prepareRaw(db, 'SELECT owner, pid, host, expires_at, claiming FROM runs WHERE owner <> ?');
    this.#deleteRun = db.prepare('DELETE FROM runs WHERE owner = ? AND pid = ? AND host = ?');
    this.#markClaiming = db.prepare('UPDATE runs SET claiming = 1 WHERE owner = ?');
    this.#renew = db.prepare('UPDATE runs SET expires_at = ? WHERE owner = ?');
    this.#dataVersion = prepareRaw(db, 'PRAGMA data_version');
  }

  /** Registers this run; true when another run is live here, so this one claims from the start. */
  register(): boolean {
    const { owner, leaseMs, now } = this.#options;
    const shared = immediateTransaction(this.#db, () => {
      const others = this.#liveOthers(true);
      this.#insert.run(owner, process.pid, this.#host, now() + leaseMs, others.length > 0 ? 1 : 0);
      return others.length > 0;
    });
    this.#seenVersion = this.#version();
    return shared;
  }

  /**
   * True when another connection wrote to the store since the last look and another run is live
   * here. Looks at most every LOOK_EVERY_MS unless `now` (a statement outside a transaction costs
   * ~20 µs of locking, too much for every key); the newcomer waits that long at most, plus a turn.
   */
  othersAppeared(now = false): boolean {
    const at = this.#options.now();
    if (!now && at - this.#lookedAt < LOOK_EVERY_MS) return false;
    this.#lookedAt = at;
    const version = this.#version();
    if (version === this.#seenVersion) return false;
    this.#seenVersion = version;
    return this.#liveOthers(false).length > 0;
  }

  /** True when every other live run claims what it looks up (a newcomer waits for that). */
  othersClaiming(): boolean {
    return this.#liveOthers(false).every((run) => run.claiming);
  }

  /** This run claims what it looks up from now on (call inside the transaction that claims its keys in flight). */
  markClaiming(): void {
    this.#markClaiming.run(this.#options.owner);
  }

  /** Extends the registration's lease (call inside the sweep's transaction). */
  renew(): void {
    this.#renew.run(this.#options.now() + this.#options.leaseMs, this.#options.owner);
  }

  /** The run is over. */
  remove(): void {
    this.#deleteRun.run(this.#options.owner, process.pid, this.#host);
  }

  #version(): number {
    return Number((this.#dataVersion.get() as unknown as [number])[0]);
  }

  /** The other runs that are live; with `removeLapsed`, the rows of the others go (inside a transaction). */
  #liveOthers(removeLapsed: boolean): OtherRun[] {
    const rows = this.#others.all(this.#options.owner) as unknown as Array<[string, number, string, number, number]>;
    const live: OtherRun[] = [];
    for (const [owner, pid, host, expiresAt, claiming] of rows) {
      const run = { owner, pid, host, expiresAt, claiming: claiming === 1 };
      if (this.#lapsed(run)) {
        if (removeLapsed) {
          this.#deleteRun.run(owner, pid, host);
          this.#watch.forget(owner);
        }
      } else {
        live.push(run);
      }
    }
    return live;
  }

  #lapsed(run: OtherRun): boolean {
    return this.#watch.gone({ id: run.owner, owner: run.owner, pid: run.pid, host: run.host, mark: run.expiresAt });
  }
}
