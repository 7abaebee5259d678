// Claims on keys in flight, kept in the store's own file (docs/cli-contract.md, "Durability": runs may
// share one store). A run claims a key before it pays for it; another run that needs the key sees
// the claim and waits for the answer instead of paying again. A claim lapses when its run stops
// renewing it for a lease, as the waiting run's own clock measures it (lease-watch.ts: a run whose
// clock is ahead takes no live claim), or, on the same host, as soon as its process is gone: a run
// killed with -9 holds nobody up. With --redis the same is done in Redis (cluster/shared-answers.ts).
//
// Cost: a run alone on its store (almost every run) claims nothing: it only keeps its keys in
// flight in memory and looks, every 100 ms at most, whether another run has registered meanwhile
// (store-runs.ts). From then on it claims each key with one autocommit INSERT (its keys in flight
// first, in one transaction). A claim is released at once when the lookup failed (the waiting run
// takes over); when it was answered, the answer in the store is what waiting runs look for first,
// so the claim is deleted with the next sweep rather than by a commit per key.
import os from 'node:os';
import { holderAlive } from '../core/processes.js';
import { LeaseWatch, monotonicMs } from './lease-watch.js';
import { prepareRaw, immediateTransaction, type Database, type Statement } from './sqlite.js';
import { StoreRuns } from './store-runs.js';

/** Who holds a claim. */
interface ClaimHolder {
  owner: string;
  pid: number;
  host: string;
  expiresAt: number;
}

export interface StoreClaimsOptions {
  /** This run's id: the claims it holds carry it. */
  owner: string;
  service: string;
  /** How long a claim holds without renewal (a frozen or unreachable process). */
  leaseMs: number;
  now: () => number;
  /** Whether the run `owner`, of process `pid` of this host, is alive (tests replace it). */
  alive?: (pid: number, owner: string) => boolean;
  /** This run's monotonic time (ms), by which the others' leases are measured (tests replace it). */
  elapsed?: () => number;
  /** Commits the answers received so far: done before a run that was alone lets the others in, and before a claim goes. */
  flush?: () => void;
}

export class StoreClaims {
  readonly #db: Database;
  readonly #options: Required<StoreClaimsOptions>;
  readonly #host = os.hostname();
  readonly #select: Statement;
  readonly #insert: Statement;
  readonly #delete: Statement;
  readonly #deleteLapsed: Statement;
  readonly #renew: Statement;
  readonly #deleteAll: Statement;
  /** Answered keys whose claim is deleted with the next sweep. */
  #answered: Array<[string, string]> = [];
  readonly #runs: StoreRuns;
  /** False while this run is alone on the store: its keys in flight are then only #unclaimed. */
  #claiming: boolean;
  /** Every other live run claims too (what a run waits for before its first claim). */
  #othersClaim = false;
  /** Alone: the keys this run is looking up (op NUL key), claimed all at once if another run comes. */
  readonly #unclaimed = new Set<string>();
  readonly #watch: LeaseWatch;

  constructor(db: Database, options: StoreClaimsOptions) {
    this.#db = db;
    this.#options = { alive: holderAlive, elapsed: monotonicMs, flush: () => {}, ...options };
    this.#watch = new LeaseWatch({ host: this.#host, leaseMs: options.leaseMs, elapsed: this.#options.elapsed, alive: this.#options.alive });
    this.#select = prepareRaw(db, 'SELECT owner, pid, host, expires_at FROM claims WHERE service = ? AND op = ? AND key = ?');
    this.#insert = db.prepare(
      `INSERT INTO claims (service, op, key, owner, pid, host, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (service, op, key) DO UPDATE SET owner = excluded.owner, pid = excluded.pid, host = excluded.host, expires_at = excluded.expires_at
       WHERE claims.owner = excluded.owner`,
    );
    this.#delete = db.prepare('DELETE FROM claims WHERE service = ? AND op = ? AND key = ? AND owner = ?');
    this.#deleteLapsed = db.prepare('DELETE FROM claims WHERE service = ? AND op = ? AND key = ? AND owner = ? AND pid = ? AND host = ?');
    this.#renew = db.prepare('UPDATE claims SET expires_at = ? WHERE owner = ?');
    this.#deleteAll = db.prepare('DELETE FROM claims WHERE owner = ?');
    this.#runs = new StoreRuns(db, this.#options);
    this.#claiming = this.#runs.register();
  }

  /** True once another run shares the store (claims are then written, and answers looked for). */
  get sharing(): boolean {
    return this.#claiming;
  }

  /** Whether another run's claim lapsed: each claim is watched on its own (a dead run's claims keep the deadlines they had). */
  #lapsed(op: string, key: string, holder: ClaimHolder): boolean {
    if (holder.owner === this.#options.owner) return false;
    return this.#watch.gone({ id: `${op}\0${key}\0${holder.owner}`, owner: holder.owner, pid: holder.pid, host: holder.host, mark: holder.expiresAt });
  }

  /**
   * True when this run may look the key up: nobody else holds it (any more). Alone on the store:
   * true at once, nothing written. Else one INSERT when the key is free (the common case); the
   * holder is read only when it is not. False too while a run that was alone has not yet claimed
   * its own keys in flight (it does at its next claim or sweep).
   */
  claim(op: string, key: string): boolean {
    if (!this.#claiming) {
      if (!this.#runs.othersAppeared()) {
        this.#unclaimed.add(`${op}\0${key}`);
        return true;
      }
      this.#startClaiming();
    }
    if (!this.#othersClaim && !(this.#othersClaim = this.#runs.othersClaiming())) return false;
    if (this.#take(op, key)) return true;
    const { service, owner } = this.#options;
    const held = this.#select.get(service, op, key) as unknown as [string, number, string, number] | undefined;
    // Released between the two statements: free again.
    if (!held) return this.#take(op, key);
    const holder = { owner: held[0], pid: held[1], host: held[2], expiresAt: held[3] };
    if (!this.#lapsed(op, key, holder)) return holder.owner === owner;
    // A dead process's claim: removed only if it is still that one (another run may take it first).
    // The upsert below never takes over another run's claim: what lapsed is judged here, not by a clock.
    this.#deleteLapsed.run(service, op, key, holder.owner, holder.pid, holder.host);
    this.#watch.forget(`${op}\0${key}\0${holder.owner}`);
    return this.#take(op, key);
  }

  #take(op: string, key: string): boolean {
    const { service, owner, leaseMs, now } = this.#options;
    return Number(this.#insert.run(service, op, key, owner, process.pid, this.#host, now() + leaseMs).changes) === 1;
  }

  /**
   * Another run came: the answers received so far are committed (it will find them), then this
   * run's keys in flight are claimed and the run says it claims, in one transaction.
   */
  #startClaiming(): void {
    this.#options.flush();
    immediateTransaction(this.#db, () => {
      for (const id of this.#unclaimed) {
        const cut = id.indexOf('\0');
        this.#take(id.slice(0, cut), id.slice(cut + 1));
      }
      this.#runs.markClaiming();
    });
    this.#unclaimed.clear();
    this.#claiming = true;
  }

  /** The lookup failed: the claim goes at once, so that a waiting run may try the key itself. */
  release(op: string, key: string): void {
    if (!this.#claiming) {
      this.#unclaimed.delete(`${op}\0${key}`);
      return;
    }
    this.#delete.run(this.#options.service, op, key, this.#options.owner);
  }

  /** The lookup was answered (the answer is in the store): the claim goes with the next sweep. */
  answered(op: string, key: string): void {
    if (!this.#claiming) this.#unclaimed.delete(`${op}\0${key}`);
    else this.#answered.push([op, key]);
  }

  /**
   * Deletes the claims of answered keys and extends the others' lease and the run's own: one
   * transaction. A run alone looks whether another came (and then claims), also when it sends nothing.
   */
  sweep(): void {
    if (!this.#claiming && this.#runs.othersAppeared(true)) this.#startClaiming();
    const { service, owner, leaseMs, now } = this.#options;
    const answered = this.#answered;
    // An answer is committed before its claim goes: a waiting run that takes the key then finds it.
    if (answered.length > 0) this.#options.flush();
    this.#answered = [];
    immediateTransaction(this.#db, () => {
      for (const [op, key] of answered) this.#delete.run(service, op, key, owner);
      this.#renew.run(now() + leaseMs, owner);
      this.#runs.renew();
    });
  }

  /**
   * The run is over: every claim it still holds goes, once the answers received are committed
   * (a run releases its claims before its store is closed, and may await other steps between).
   */
  releaseAll(): void {
    this.#options.flush();
    this.#answered = [];
    this.#unclaimed.clear();
    immediateTransaction(this.#db, () => {
      this.#deleteAll.run(this.#options.owner);
      this.#runs.remove();
    });
  }
}
