// The look-up step for one key: the durable store answers first (duplicates and resumed rows never
// reach the network nor the limiter); concurrent requests for one key share one call; misses go
// through the credit guard, the one rate gate and the one retry policy, then into the store.
import { isLeadFound, type LeadClient, type OperationInput } from '../api/client.js';
import {
  LeadEnrichError,
  PaymentRequiredError,
  RateLimitedError,
  UnauthorizedError,
  isTransient,
} from '../api/errors.js';
import type { ResultStore, StoredResult } from '../store/result-store.js';
import type { BillableOperation, CreditAccount, CreditTicket } from './credits.js';
import type { Coordinator, SharedAnswer } from '../cluster/coordinator.js';
import { sleep } from './retry.js';
import { GateStoppedError, type RateGate } from './rate.js';
import type { RetryPolicy } from './retry.js';
import type { Billing } from './write.js';

export interface Answered {
  kind: 'found' | 'not_found';
  data: unknown;
  billing: Billing;
}
export interface Unanswered {
  kind: 'error' | 'skipped';
  /** Stable lower-case word for the sidecar: an error class's code, `credit_reserve` or `interrupted`. */
  code: string;
  message: string;
  billing: 'none';
}
export type LookupOutcome = Answered | Unanswered;

export function isAnswered(outcome: LookupOutcome): outcome is Answered {
  return outcome.kind === 'found' || outcome.kind === 'not_found';
}

export interface LookupCounters {
  requests: number;
  retries: number;
  rateLimited: number;
}

export interface LookupDeps {
  client: LeadClient;
  store: ResultStore;
  service: string;
  runId: string;
  maxAgeMs: number;
  /** Ignore answers from earlier runs (but still share answers within this run). */
  refresh: boolean;
  gate: RateGate;
  retry: RetryPolicy;
  credits: CreditAccount;
  /** With --redis: claims and answers shared with the other workers of the account. */
  coordinator?: Coordinator | undefined;
  /** Set when the run is being interrupted: no new request starts. */
  signal: AbortSignal;
  /** A failure that must stop the whole run (401). */
  onFatal(error: LeadEnrichError): void;
  /** Refreshes the balance from /account/credits (single-flight, through the gate). */
  refreshCredits(): Promise<void>;
}

const INTERRUPTED: LookupOutcome = {
  kind: 'skipped',
  code: 'interrupted',
  message: 'not looked up: the run was stopped',
  billing: 'none',
};
const RESERVE: LookupOutcome = {
  kind: 'skipped',
  code: 'credit_reserve',
  message: 'not looked up: the credit balance reached the reserve',
  billing: 'none',
};

function inputFor(op: BillableOperation, key: string): OperationInput[BillableOperation] {
  switch (op) {
    case 'lookup_email':
      return { email: key };
    case 'lookup_url':
      return { url: key };
    case 'lookup_domain':
      return { name: key };
    default:
      return { domain: key };
  }
}

/** A person or company lookup is found when its lead is not empty; MX and Whois always answer. */
function foundIn(op: BillableOperation, data: unknown): boolean {
  return op === 'mx' || op === 'whois' ? true : isLeadFound(data as { lead?: unknown });
}

class CreditRefused extends Error {}

export class Lookups {
  readonly counters: LookupCounters = { requests: 0, retries: 0, rateLimited: 0 };
  readonly #deps: LookupDeps;
  readonly #inFlight = new Map<string, Promise<LookupOutcome>>();
  readonly #startedAt = Date.now();

  constructor(deps: LookupDeps) {
    this.#deps = deps;
  }

  /**
   * Reads the store's answers for a batch of keys in one query; resolve() then finds them without
   * a query per row. Valid until the next prefetch.
   */
  prefetch(op: BillableOperation, keys: readonly string[]): void {
    const { store, service, maxAgeMs } = this.#deps;
    this.#prefetched = { op, keys: new Set(keys), answers: store.getMany(service, op, keys, maxAgeMs) };
  }

  #prefetched: { op: BillableOperation; keys: Set<string>; answers: Map<string, StoredResult> } | undefined;

  /**
   * Stores an answer, and adds it to the prefetched batch: a duplicate later in the batch, started
   * after this request left the in-flight map, must find it there and not pay again.
   */
  #keep(op: BillableOperation, key: string, answer: { found: boolean; data: unknown; fetchedAt?: number }): void {
    const { store, service, runId } = this.#deps;
    const kept = { found: answer.found, data: answer.data, fetchedAt: answer.fetchedAt ?? Date.now() };
    store.put(service, op, key, kept, runId);
    const batch = this.#prefetched;
    if (batch?.op === op && batch.keys.has(key)) batch.answers.set(key, { ...kept, runId });
  }

  /** The store's answer, if it has one: synchronous, so known rows run at CSV speed. */
  known(op: BillableOperation, key: string): LookupOutcome | undefined {
    const { store, service, maxAgeMs, refresh, runId } = this.#deps;
    const batch = this.#prefetched;
    const stored = batch?.op === op && batch.keys.has(key) ? batch.answers.get(key) : store.get(service, op, key, maxAgeMs);
    if (!stored || (refresh && stored.runId !== runId)) return undefined;
    return {
      kind: stored.found ? 'found' : 'not_found',
      data: stored.data,
      billing: stored.runId === runId ? 'duplicate' : 'cached',
    };
  }

  /** Resolves one key: from the store, from a request already in flight, or from the API. */
  resolve(op: BillableOperation, key: string): LookupOutcome | Promise<LookupOutcome> {
    const known = this.known(op, key);
    if (known) return known;
    const id = `${op}\u0000${key}`;
    const pending = this.#inFlight.get(id);
    if (pending) return pending.then(asDuplicate);
    const lost = this.#deps.coordinator?.lost;
    if (lost) return { kind: 'error', code: lost.code, message: lost.message, billing: 'none' };
    if (this.#deps.signal.aborted) return INTERRUPTED;
    if (this.#deps.credits.exhausted) return RESERVE;
    const request = (this.#deps.coordinator ? this.#fetchShared(this.#deps.coordinator, op, key) : this.#fetch(op, key)).finally(() =>
      this.#inFlight.delete(id),
    );
    this.#inFlight.set(id, request);
    return request;
  }

  /**
   * With other workers: take the answer another worker already has, or claim the key (so no
   * two workers pay for it), fetch it, and share the answer. A claim held by another worker is
   * waited for; if that worker dies, its claim expires and the key is claimed again.
   */
  async #fetchShared(coordinator: Coordinator, op: BillableOperation, key: string): Promise<LookupOutcome> {
    const { signal, maxAgeMs, refresh } = this.#deps;
    // What another worker fetched counts only if the store would have counted it: younger than
    // --max-age, and with --refresh fetched since this run began. (Each worker's own clock.)
    const fresh = (answer: SharedAnswer | undefined): SharedAnswer | undefined =>
      answer && answer.fetchedAt >= (refresh ? this.#startedAt : Date.now() - maxAgeMs) ? answer : undefined;
    try {
      for (;;) {
        const shared = fresh(await coordinator.sharedAnswer(op, key));
        if (shared) {
          this.#keep(op, key, shared);
          return { kind: shared.found ? 'found' : 'not_found', data: shared.data, billing: 'duplicate' };
        }
        if (await coordinator.claim(op, key)) {
          // The worker that held the claim may have answered just before releasing it.
          const late = fresh(await coordinator.sharedAnswer(op, key));
          if (!late) break;
          await coordinator.release(op, key);
          this.#keep(op, key, late);
          return { kind: late.found ? 'found' : 'not_found', data: late.data, billing: 'duplicate' };
        }
        if (signal.aborted) return INTERRUPTED;
        await sleep(100, signal);
      }
    } catch (error) {
      const lost = coordinator.fail(error);
      return { kind: 'error', code: lost.code, message: lost.message, billing: 'none' };
    }
    const outcome = await this.#fetch(op, key);
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

  async #fetch(op: BillableOperation, key: string): Promise<LookupOutcome> {
    const { client, gate, retry, credits, signal } = this.#deps;
    let confirmed = false;
    for (;;) {
      let ticket: CreditTicket | undefined;
      try {
        const data = await retry.run(
          () =>
            gate.schedule(async () => {
              if (signal.aborted) throw new GateStoppedError();
              ticket = await credits.tryBegin(op);
              if (!ticket) throw new CreditRefused();
              this.counters.requests += 1;
              let charged = false;
              try {
                const response = await client.call(op, inputFor(op, key) as never);
                charged = foundIn(op, response.data);
                return response.data as unknown;
              } finally {
                await credits.finish(ticket, charged);
                ticket = undefined;
              }
            }),
          {
            signal,
            onRateLimited: (error: RateLimitedError) => {
              this.counters.rateLimited += 1;
              gate.pause(error.retryAt);
            },
            onRetry: () => {
              this.counters.retries += 1;
            },
          },
        );
        const found = foundIn(op, data);
        this.#keep(op, key, { found, data });
        return { kind: found ? 'found' : 'not_found', data, billing: found ? 'charged' : 'free' };
      } catch (error) {
        if (error instanceof CreditRefused) {
          // The estimate says the next request could breach the reserve: check the real balance
          // once before giving up, since the estimate errs on the safe side.
          if (!confirmed && !credits.exhausted) {
            confirmed = true;
            await this.#deps.refreshCredits().catch(() => {});
            continue;
          }
          credits.stop();
          return RESERVE;
        }
        // A request dropped by the interrupt, or whose retries the interrupt cut short, was not answered.
        const lost = this.#deps.coordinator?.lost;
        if (lost) return { kind: 'error', code: lost.code, message: lost.message, billing: 'none' };
        if (error instanceof GateStoppedError || (signal.aborted && isTransient(error))) return INTERRUPTED;
        if (error instanceof PaymentRequiredError) {
          credits.markExhausted();
          return { kind: 'skipped', code: 'credit_reserve', message: `not looked up: ${error.message}`, billing: 'none' };
        }
        if (error instanceof UnauthorizedError) {
          this.#deps.onFatal(error);
          return { kind: 'error', code: error.code, message: error.message, billing: 'none' };
        }
        if (error instanceof LeadEnrichError) {
          return { kind: 'error', code: error.code, message: error.message, billing: 'none' };
        }
        throw error;
      }
    }
  }
}

function asDuplicate(outcome: LookupOutcome): LookupOutcome {
  return isAnswered(outcome) ? { ...outcome, billing: 'duplicate' } : outcome;
}
