// Claims in the result store's own file, for runs on one machine that share a store (a nightly
// job that overlaps the next one, a CI job beside a person's run): key-claims.ts. The answers are
// the store's own: another run's answer is there as soon as that run received it (every answer is
// committed as it arrives), so there is nothing to publish; an answered key's claim is deleted with
// the next sweep, and the others' leases renewed then.
import type { LeadEnrichError } from '../api/errors.js';
import type { Operation } from '../api/types.js';
import type { ResultStore } from '../store/result-store.js';
import type { StoreClaims } from '../store/store-claims.js';
import { storeFailure } from '../store/store-failure.js';
import type { ClaimedAnswer, KeyClaims } from './key-claims.js';

export interface StoreKeyClaimsOptions {
  store: ResultStore;
  service: string;
  runId: string;
  leaseMs: number;
  sweepMs: number;
  /** Told once when the store fails (the run stops: no new request). */
  onFailure(error: LeadEnrichError): void;
}

export class StoreKeyClaims implements KeyClaims {
  readonly #options: StoreKeyClaimsOptions;
  readonly #claims: StoreClaims;
  readonly #timer: NodeJS.Timeout;
  #failed: LeadEnrichError | undefined;

  constructor(options: StoreKeyClaimsOptions) {
    this.#options = options;
    try {
      // The run registers in the store's file: the first write of the run (a damaged file says so here).
      this.#claims = options.store.claims(options.runId, options.service, options.leaseMs);
    } catch (error) {
      throw storeFailure(options.store.path, 'written', error);
    }
    this.#timer = setInterval(() => this.#sweep(), options.sweepMs);
    this.#timer.unref();
  }

  async answer(op: string, key: string): Promise<ClaimedAnswer | undefined> {
    // Alone on the store: no other run can have answered (and this run's own answers were
    // looked for before the key was claimed).
    if (!this.#claims.sharing) return undefined;
    const stored = this.#options.store.get(this.#options.service, op as Operation, key);
    if (!stored) return undefined;
    return { found: stored.found, data: stored.data, fetchedAt: stored.fetchedAt, refused: stored.refused };
  }

  async claim(op: string, key: string): Promise<boolean> {
    return this.#guard(() => this.#claims.claim(op, key));
  }

  async answered(op: string, key: string): Promise<void> {
    this.#claims.answered(op, key);
  }

  async release(op: string, key: string): Promise<void> {
    this.#guard(() => this.#claims.release(op, key));
  }

  fail(error: unknown): LeadEnrichError {
    const failure = storeFailure(this.#options.store.path, 'written', error);
    if (!this.#failed) {
      this.#failed = failure;
      this.#options.onFailure(failure);
    }
    return failure;
  }

  #guard<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      throw this.fail(error);
    }
  }

  #sweep(): void {
    if (this.#failed) return;
    try {
      this.#claims.sweep();
    } catch (error) {
      this.fail(error);
    }
  }

  /** The run is over: its claims go. */
  close(): void {
    clearInterval(this.#timer);
    if (this.#failed) return;
    try {
      this.#claims.releaseAll();
    } catch {
      // A store that cannot be written now: the claims lapse with this process.
    }
  }
}
