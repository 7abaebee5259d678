// Whether another run that shares the store is gone, judged without reading its clock
// (docs/cli-contract.md, "Durability" and "Spending over days and months"). A run that holds
// something in the file (a claim on a key, a hold on a budget, its registration) renews it by
// rewriting its deadline; the deadline is written by that run's clock, so it is never compared
// with this run's time: only with itself. A value that changed is a renewal; one that stayed the
// same for a whole lease, as this run's own monotonic clock measures it, is a run that stopped
// renewing (killed, frozen, on a machine that went away). On this host, a process that is gone is
// known at once, and so is a run of this very process that ended (processes.ts: holderAlive). A run whose clock is a day ahead, or behind, judges the others as one whose clock
// is right: it waits the same lease before it takes what they hold.
//
// The pid check needs no guard against a reused pid: a process that took a dead run's pid does
// not renew that run's deadline, so its holds lapse by the lease all the same, only later.

/** What another run holds, as its row says it: who, where, and the deadline it last wrote. */
export interface Holder {
  /** What is watched: a run, or one thing it holds (a claim on one key). */
  id: string;
  /** The run that holds it. */
  owner: string;
  pid: number;
  host: string;
  /** The deadline as the holder last wrote it (its own clock's epoch ms: never compared with ours). */
  mark: number;
}

export interface LeaseWatchOptions {
  host: string;
  leaseMs: number;
  /** This run's monotonic time, in ms: only its differences are read. */
  elapsed: () => number;
  /** Whether the holder `owner`, of process `pid` of this host, is alive (processes.ts: holderAlive). */
  alive: (pid: number, owner: string) => boolean;
}

/** A monotonic clock: what a wall clock set forward or back does not move. */
export const monotonicMs = (): number => performance.now();

/** Holders watched before the ones not looked at for a lease are let go (memory stays flat). */
const PRUNE_FROM = 1_000;

export class LeaseWatch {
  readonly #options: LeaseWatchOptions;
  /** Each holder's deadline as first seen unchanged, since when, and when it was last looked at (this run's elapsed time). */
  readonly #seen = new Map<string, { mark: number; since: number; looked: number }>();
  #pruneAt = PRUNE_FROM;

  constructor(options: LeaseWatchOptions) {
    this.#options = options;
  }

  /** True when `holder`'s process is gone (this host), or it has not renewed for a lease as this run saw it. */
  gone(holder: Holder): boolean {
    if (holder.host === this.#options.host && !this.#options.alive(holder.pid, holder.owner)) return true;
    return this.leftOf(holder) === 0;
  }

  /** How long `holder` has left before it is gone unless it renews (ms of this run's time; 0: gone). */
  leftOf(holder: Holder): number {
    const now = this.#options.elapsed();
    const seen = this.#seen.get(holder.id);
    if (seen === undefined || seen.mark !== holder.mark) {
      this.#seen.set(holder.id, { mark: holder.mark, since: now, looked: now });
      if (this.#seen.size > this.#pruneAt) this.#prune(now);
      return this.#options.leaseMs;
    }
    seen.looked = now;
    return Math.max(0, this.#options.leaseMs - (now - seen.since));
  }

  /**
   * Lets go of the holders not looked at for a lease (a key another run answered meanwhile): one
   * looked at again later starts its count anew, which only delays its lapse, never hastens it.
   */
  #prune(now: number): void {
    for (const [id, seen] of this.#seen) if (now - seen.looked > this.#options.leaseMs) this.#seen.delete(id);
    this.#pruneAt = Math.max(PRUNE_FROM, 2 * this.#seen.size);
  }

  /** `id` was released or taken over: nothing more to watch. */
  forget(id: string): void {
    this.#seen.delete(id);
  }
}
