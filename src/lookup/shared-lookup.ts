// A key that another run or worker may be looking up too (key-claims.ts): take the answer it
// already has, or claim the key (so that no two pay for it), fetch it, and let the others have the
// answer. A claim held by another is waited for; if its holder dies, the claim lapses and the key
// is claimed again.
import type { ClaimedAnswer, KeyClaims } from './key-claims.js';
import { INTERRUPTED, refusedOutcome } from './outcome.js';
import type { BillableOperation } from './credits.js';
import type { KeptAnswer, LookupOutcome } from './outcome.js';
import { sleep } from '../core/clock.js';

export interface SharedLookupDeps {
  claims: KeyClaims;
  signal: AbortSignal;
  /** Answers fetched at or after this (epoch ms) are fresh (lookups.ts). */
  freshSince: number;
  refresh: boolean;
  /** How long to wait before asking again about a key another holds. */
  pollMs: number;
  /** Keeps an answer in the local store. */
  keep(op: BillableOperation, key: string, answer: KeptAnswer): void;
  /** Fetches from the API (the request path). */
  fetch(op: BillableOperation, key: string, soon: boolean): Promise<LookupOutcome>;
}

export class SharedLookup {
  readonly #deps: SharedLookupDeps;
  readonly #startedAt = Date.now();

  constructor(deps: SharedLookupDeps) {
    this.#deps = deps;
  }

  /**
   * What another fetched counts only if the store would have counted it: younger than --max-age,
   * and with --refresh fetched since this run began. (Each worker's own clock.)
   */
  #fresh(answer: ClaimedAnswer | undefined): ClaimedAnswer | undefined {
    const { freshSince, refresh } = this.#deps;
    return answer && answer.fetchedAt >= (refresh ? this.#startedAt : freshSince) ? answer : undefined;
  }

  #reuse(op: BillableOperation, key: string, shared: ClaimedAnswer): LookupOutcome {
    this.#deps.keep(op, key, shared);
    if (shared.refused !== undefined) return { ...refusedOutcome(shared.refused), stored: true };
    return { kind: shared.found ? 'found' : 'not_found', data: shared.data, billing: 'duplicate' };
  }

  async resolve(op: BillableOperation, key: string, soon = false): Promise<LookupOutcome> {
    const { claims, signal } = this.#deps;
    try {
      // The store was asked just before (Lookups.known): claim first, and look for an answer
      // another run may have kept meanwhile once the claim is ours, or while it is not.
      for (let first = true; ; first = false) {
        const shared = first ? undefined : this.#fresh(await claims.answer(op, key));
        if (shared) return this.#reuse(op, key, shared);
        if (await claims.claim(op, key)) {
          // The holder of the claim may have answered just before it went.
          const late = this.#fresh(await claims.answer(op, key));
          if (!late) break;
          await claims.release(op, key);
          return this.#reuse(op, key, late);
        }
        if (signal.aborted) return INTERRUPTED;
        await sleep(this.#deps.pollMs, signal);
      }
    } catch (error) {
      const lost = claims.fail(error);
      return { kind: 'error', code: lost.code, message: lost.message, billing: 'none' };
    }
    return this.#fetchAndShare(op, key, soon);
  }

  async #fetchAndShare(op: BillableOperation, key: string, soon: boolean): Promise<LookupOutcome> {
    const { claims } = this.#deps;
    const outcome = await this.#deps.fetch(op, key, soon);
    try {
      if (outcome.kind === 'found' || outcome.kind === 'not_found') {
        await claims.answered(op, key, { found: outcome.kind === 'found', data: outcome.data, fetchedAt: Date.now() });
      } else if (outcome.kind === 'error' && outcome.code === 'bad_request') {
        await claims.answered(op, key, { found: false, data: undefined, fetchedAt: Date.now(), refused: outcome.message });
      } else {
        await claims.release(op, key);
      }
    } catch {
      // The backend is gone (Redis lost, the store's disk full): the run was told; the answer stands.
    }
    return outcome;
  }
}
