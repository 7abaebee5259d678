// With other workers (--redis): take the answer another worker already has, or claim the key (so
// no two workers pay for it), fetch it, and share the answer. A claim held by another worker is
// waited for; if that worker dies, its claim expires and the key is claimed again.
import type { Coordinator, SharedAnswer } from '../cluster/coordinator.js';
import { INTERRUPTED } from './outcome.js';
import type { BillableOperation } from './credits.js';
import type { KeptAnswer, LookupOutcome } from './outcome.js';
import { sleep } from '../core/clock.js';

export interface SharedLookupDeps {
  coordinator: Coordinator;
  signal: AbortSignal;
  maxAgeMs: number;
  refresh: boolean;
  /** Keeps an answer in the local store. */
  keep(op: BillableOperation, key: string, answer: KeptAnswer): void;
  /** Fetches from the API (the request path). */
  fetch(op: BillableOperation, key: string): Promise<LookupOutcome>;
}

/** How long a worker waits before asking again about a key another worker holds. */
const CLAIM_POLL_MS = 100;

export class SharedLookup {
  readonly #deps: SharedLookupDeps;
  readonly #startedAt = Date.now();

  constructor(deps: SharedLookupDeps) {
    this.#deps = deps;
  }

  /**
   * What another worker fetched counts only if the store would have counted it: younger than
   * --max-age, and with --refresh fetched since this run began. (Each worker's own clock.)
   */
  #fresh(answer: SharedAnswer | undefined): SharedAnswer | undefined {
    const { maxAgeMs, refresh } = this.#deps;
    return answer && answer.fetchedAt >= (refresh ? this.#startedAt : Date.now() - maxAgeMs) ? answer : undefined;
  }

  #reuse(op: BillableOperation, key: string, shared: SharedAnswer): LookupOutcome {
    this.#deps.keep(op, key, shared);
    return { kind: shared.found ? 'found' : 'not_found', data: shared.data, billing: 'duplicate' };
  }

  async resolve(op: BillableOperation, key: string): Promise<LookupOutcome> {
    const { coordinator, signal } = this.#deps;
    try {
      for (;;) {
        const shared = this.#fresh(await coordinator.sharedAnswer(op, key));
        if (shared) return this.#reuse(op, key, shared);
        if (await coordinator.claim(op, key)) {
          // The worker that held the claim may have answered just before releasing it.
          const late = this.#fresh(await coordinator.sharedAnswer(op, key));
          if (!late) break;
          await coordinator.release(op, key);
          return this.#reuse(op, key, late);
        }
        if (signal.aborted) return INTERRUPTED;
        await sleep(CLAIM_POLL_MS, signal);
      }
    } catch (error) {
      const lost = coordinator.fail(error);
      return { kind: 'error', code: lost.code, message: lost.message, billing: 'none' };
    }
    return this.#fetchAndShare(op, key);
  }

  async #fetchAndShare(op: BillableOperation, key: string): Promise<LookupOutcome> {
    const { coordinator } = this.#deps;
    const outcome = await this.#deps.fetch(op, key);
    try {
      if (outcome.kind === 'found' || outcome.kind === 'not_found') {
        await coordinator.publishAnswer(op, key, { found: outcome.kind === 'found', data: outcome.data, fetchedAt: Date.now() });
      } else {
        await coordinator.release(op, key);
      }
    } catch {
      // Redis is gone: the coordinator has told the run; the answer is in the local store.
    }
    return outcome;
  }
}
