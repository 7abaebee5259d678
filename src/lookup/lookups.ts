// The look-up step for one key: the durable store answers first (duplicates and resumed rows never
// reach the network nor the limiter); concurrent requests for one key share one call; with Redis,
// other workers' answers and claims come next (shared-lookup.ts); misses go down the request path
// (request-path/), then into the store.
import { BadRequestError, LeadEnrichError, StoreFailedError, isTransient } from '../api/errors.js';
import type { CellsRenderer, ResultStore, StoredResult } from '../store/result-store.js';
import type { KeyClaims } from './key-claims.js';
import type { BillableOperation, CreditAccount } from './credits.js';
import {
  API_UNAVAILABLE,
  DAILY_LIMIT,
  INTERRUPTED,
  asDuplicate,
  foundIn,
  isAnswered,
  refusedOutcome,
  type Answered,
  type KeptAnswer,
  type LookupOutcome,
  type Unanswered,
} from './outcome.js';
import type { EarlierAnswer } from '../core/rows.js';
import type { StopControl } from './stop-control.js';
import { GateStoppedError } from './rate/rate-gate.js';
import { CreditRefusedError } from './request-path/with-credits.js';
import { SharedLookup } from './shared-lookup.js';
import { optionWord } from '../options/option-table.js';

export interface LookupDeps {
  store: ResultStore;
  service: string;
  runId: string;
  /**
   * Answers fetched at or after this (epoch ms) are fresh: --max-age as it stood when the run began,
   * for the whole run (open-run.ts: `judgedAt`). -Infinity without --max-age.
   */
  freshSince: number;
  /** Ignore answers from earlier runs (but still share answers within this run). */
  refresh: boolean;
  /** A lookup down the request path (RequestPath.lookup): resolves with the answer's data; `soon`: it finishes a row already begun. */
  send(op: BillableOperation, key: string, soon?: boolean): Promise<unknown>;
  credits: CreditAccount;
  stop: StopControl;
  /** Claims on keys in flight, shared with other runs on the store or (--redis) other workers. */
  claims?: KeyClaims | undefined;
  /** How often a key another run holds is looked at again. */
  claimPollMs?: number | undefined;
  /** Renders each answer's own added columns for the store to keep beside it (write/columns.ts). */
  cells?: CellsRenderer | undefined;
  /**
   * 'cells' when the run needs only the answer's own CSV columns (a CSV output of one lookup kind,
   * no --with): stored answers then come as their cells, with no JSON.parse (parsing every stored
   * lead is what made re-runs of known rows slow). Default 'data'.
   */
  storedForm?: StoredForm | undefined;
  /**
   * The run's budgets cannot refresh every stale answer tonight (run/refresh-order.ts): a found
   * answer fetched after this is not looked up again but written as stored (`stale`, `budget`).
   */
  refreshBefore?: number | undefined;
}

/** What a run reads of a stored answer: the parsed data, or (cheaper, for CSV output) its cells. */
export type StoredForm = 'data' | 'cells';

export class Lookups {
  readonly #deps: LookupDeps;
  readonly #inFlight = new Map<string, Promise<LookupOutcome>>();
  readonly #shared: SharedLookup | undefined;
  readonly #prefetched = new Map<BillableOperation, { keys: Set<string>; answers: Map<string, StoredResult> }>();
  /** Keys this run looked up again (the store had an answer): until one is, a duplicate has no earlier answer to ask for. */
  #lookedUpAgain = 0;

  constructor(deps: LookupDeps) {
    this.#deps = deps;
    this.#shared = deps.claims
      ? new SharedLookup({
          claims: deps.claims,
          signal: deps.stop.signal,
          freshSince: deps.freshSince,
          refresh: deps.refresh,
          pollMs: deps.claimPollMs ?? 100,
          keep: (op, key, answer) => this.#keepReceived(op, key, answer),
          fetch: (op, key, soon) => this.#fetch(op, key, soon),
        })
      : undefined;
  }

  /**
   * Reads the store's answers for a batch's keys, one query per operation; resolve() then finds
   * them without a query per row. Valid until the next prefetch.
   */
  prefetch(keysByOp: ReadonlyMap<BillableOperation, readonly string[]>): void {
    const { store, service, freshSince } = this.#deps;
    this.#prefetched.clear();
    const layoutOf = this.#deps.storedForm === 'cells' ? this.#deps.cells?.layout : undefined;
    for (const [op, keys] of keysByOp)
      this.#prefetched.set(op, { keys: new Set(keys), answers: store.getMany(service, op, keys, { since: freshSince }, layoutOf?.(op)) });
  }

  /**
   * Stores an answer, and adds it to the prefetched batch: a duplicate later in the batch, started
   * after this request left the in-flight map, must find it there and not pay again.
   */
  #keep(op: BillableOperation, key: string, answer: KeptAnswer): void {
    const { store, service, runId } = this.#deps;
    const kept = { found: answer.found, data: answer.data, fetchedAt: answer.fetchedAt ?? Date.now(), refused: answer.refused };
    const cells = answer.refused === undefined ? this.#deps.cells?.render(op, answer.data) : undefined;
    store.put(service, op, key, { ...kept, cells }, runId);
    const batch = this.#prefetched.get(op);
    if (batch?.keys.has(key)) batch.answers.set(key, { ...kept, runId });
  }

  /** The store's answer, if it has one: synchronous, so known rows run at CSV speed. */
  known(op: BillableOperation, key: string): LookupOutcome | undefined {
    const { store, service, freshSince, refresh, runId } = this.#deps;
    const batch = this.#prefetched.get(op);
    const stored = batch?.keys.has(key) ? batch.answers.get(key) : store.get(service, op, key, { since: freshSince });
    if (!stored || (refresh && stored.runId !== runId)) return undefined;
    if (stored.refused !== undefined) return { ...refusedOutcome(stored.refused), stored: true };
    const outcome: Answered = {
      kind: stored.found ? 'found' : 'not_found',
      data: stored.data,
      billing: stored.runId === runId ? 'duplicate' : 'cached',
      cellsRecord: stored.cellsRecord,
    };
    // A key this run looked up again, met again: the same earlier answer as the row that fetched it.
    if (outcome.billing === 'duplicate' && this.#lookedUpAgain > 0) outcome.earlier = this.#replaced(op, key, stored);
    return outcome;
  }

  /** The answer this run's fetch of `key` (`now`) replaced (the store's history), if it replaced one. */
  #replaced(op: BillableOperation, key: string, now: StoredResult): EarlierAnswer | undefined {
    const { store, service } = this.#deps;
    const replaced = store.replaced(service, op, key, now.fetchedAt);
    return (
      replaced && {
        op,
        key,
        found: replaced.found,
        foundNow: now.found,
        data: replaced.data,
        fetchedAt: replaced.fetchedAt,
        refetchedAt: now.fetchedAt,
        same: replaced.same,
      }
    );
  }

  /** The answer the store holds for a key about to be looked up again, whatever its age (none for a refused key). */
  #before(op: BillableOperation, key: string): Omit<EarlierAnswer, 'refetchedAt' | 'foundNow'> | undefined {
    const { store, service } = this.#deps;
    const stored = store.get(service, op, key);
    if (stored === undefined || stored.refused !== undefined) return undefined;
    this.#lookedUpAgain += 1;
    return { op, key, found: stored.found, data: stored.data, fetchedAt: stored.fetchedAt };
  }

  /**
   * Resolves one key: from the store, from a request already in flight, or from the API. `soon`:
   * the lookup finishes a row already begun (queued ahead of the first lookups of new rows).
   */
  resolve(op: BillableOperation, key: string, soon = false): LookupOutcome | Promise<LookupOutcome> {
    const known = this.known(op, key);
    if (known) return known;
    const id = `${op}\u0000${key}`;
    const pending = this.#inFlight.get(id);
    if (pending) return pending.then(asDuplicate);
    const refused = this.#deps.stop.refusal();
    if (refused) return this.orStale(op, key, refused);
    if (this.#deps.refreshBefore !== undefined) {
      const waits = this.#waitsItsTurn(op, key);
      if (waits) return waits;
    }
    const request = (this.#shared ? this.#shared.resolve(op, key, soon) : this.#fetch(op, key, soon))
      .then((outcome) => this.orStale(op, key, outcome))
      .finally(() => this.#inFlight.delete(id));
    this.#inFlight.set(id, request);
    return request;
  }

  /** A found answer younger than the oldest the budgets refresh tonight: kept as stored, its turn on a later night. */
  #waitsItsTurn(op: BillableOperation, key: string): LookupOutcome | undefined {
    const { store, service, stop, refreshBefore } = this.#deps;
    const stored = store.get(service, op, key);
    if (stored === undefined || !stored.found || stored.refused !== undefined || stored.fetchedAt <= refreshBefore!) return undefined;
    return this.orStale(op, key, {
      ...stop.turnAway('budget'),
      message: `not looked up: ${optionWord('budget')} cannot refresh every answer older than ${optionWord('maxAge')} in this run, and older ones went first`,
    });
  }

  /**
   * A key this run could not look up again (a stop, a failure after every retry) whose stored
   * answer it meant to replace: that answer, billed `stale`, with why it was not refreshed
   * (docs/cli-contract.md, "A stale answer is better than none"): a row once enriched is never
   * written blank. A key the API refused now (400) has its answer: the refusal. Read from the store
   * only for such a key, so the rows the store answers pay nothing for it.
   */
  orStale(op: BillableOperation, key: string, outcome: LookupOutcome): LookupOutcome {
    if (isAnswered(outcome) || outcome.code === 'bad_request') return outcome;
    // Kept meanwhile by another run sharing the store: a fresh answer after all.
    const fresh = this.known(op, key);
    if (fresh && isAnswered(fresh)) return fresh;
    const { store, service } = this.#deps;
    const stored = store.get(service, op, key);
    if (stored === undefined || stored.refused !== undefined) return outcome;
    const kept = `${outcome.message}; written with the stored answer of ${new Date(stored.fetchedAt).toISOString().slice(0, 10)} (stale)`;
    return { kind: stored.found ? 'found' : 'not_found', data: stored.data, billing: 'stale', stale: { ...outcome, message: kept } };
  }

  async #fetch(op: BillableOperation, key: string, soon = false): Promise<LookupOutcome> {
    try {
      // Read before the request: a store that cannot be read costs nothing yet.
      const before = this.#before(op, key);
      const data = await this.#deps.send(op, key, soon);
      const found = foundIn(op, data);
      const fetchedAt = Date.now();
      this.#keepReceived(op, key, { found, data, fetchedAt });
      const outcome: Answered = { kind: found ? 'found' : 'not_found', data, billing: found ? 'charged' : 'free' };
      if (before) outcome.earlier = { ...before, foundNow: found, refetchedAt: fetchedAt };
      return outcome;
    } catch (error) {
      // The API refused the key (400): an answer about the key, kept like a miss until --max-age,
      // so that a re-run does not send it again (docs/cli-contract.md, "The file's problems are not the API's").
      if (error instanceof BadRequestError && error.status === 400) {
        this.#keepReceived(op, key, { found: false, data: undefined, refused: error.message });
        return refusedOutcome(error.message, error);
      }
      return this.#outcomeOf(error);
    }
  }

  /**
   * Keeps an answer just received. A store that cannot take it (a full disk) stops the run: no
   * new request, the answers in flight still tried; this one's row keeps its answer meanwhile.
   */
  #keepReceived(op: BillableOperation, key: string, answer: KeptAnswer): void {
    try {
      this.#keep(op, key, answer);
    } catch (error) {
      if (!(error instanceof StoreFailedError)) throw error;
      this.#deps.stop.stop('failed', error);
    }
  }

  /** Why a request has no answer, as the row will say it; a failure that must stop the run stops it. */
  #outcomeOf(error: unknown): LookupOutcome {
    const { stop, credits } = this.#deps;
    if (error instanceof CreditRefusedError) {
      if (error.by === 'budget') stop.stop('budget');
      return stop.turnAway(error.by);
    }
    // Nothing sent before the next day can pass: no retry, no probe, no wait for an outage to end.
    if (error instanceof LeadEnrichError && error.policy.stops === 'daily_limit') {
      stop.stop('daily_limit', error);
      return { ...DAILY_LIMIT, failure: error };
    }
    const lost = stop.redisLost;
    if (lost) return { kind: 'error', code: lost.code, message: lost.message, billing: 'none', failure: lost };
    // A request dropped by the stop was not answered; nor was one whose retries a stop cut short
    // (any stop: the gate drops the retries waiting for it, the budget's and the reserve's stops
    // too, and with-retry.ts then throws the failure the try before met): its row is not finished,
    // so it is not an `error` but skipped with the stop's code — else every row waiting for a retry
    // when --max-errors stops the run would count as one, far past N + what is in flight, and a row
    // whose one 503 came as a budget bound would be an `error` (docs/cli-contract.md, exit statuses).
    if (error instanceof GateStoppedError) return stop.refusal() ?? INTERRUPTED;
    if (stop.lookupsStopped && isTransient(error)) return cutShort(stop.refusal() ?? INTERRUPTED, error);
    const stops = error instanceof LeadEnrichError ? error.policy.stops : undefined;
    if (stops === 'api_unavailable' || (isTransient(error) && stop.apiUnavailable)) return { ...API_UNAVAILABLE, failure: error as LeadEnrichError };
    if (stops === 'credits') {
      credits.markExhausted();
      stop.stop('credits');
      return { ...stop.turnAway('credits'), message: `not looked up: ${(error as Error).message}`, failure: error as LeadEnrichError };
    }
    // A rejected token; a token that may not use the operation (every later call of it would be
    // refused the same way: one line and exit 1, not a request per row); a certificate not
    // trusted, a proxy that refuses, a store whose disk is full (its commit before the request
    // failed: nothing was sent): no later request can pass, or be kept. Their class says so.
    if (stops === 'unauthorized' || stops === 'forbidden' || stops === 'failed') stop.stop(stops, error as LeadEnrichError);
    // Another 4xx (a 404: usually a wrong base URL) refuses the request, not the key: not the file's problem.
    if (error instanceof BadRequestError) return { kind: 'error', code: 'request_rejected', message: error.message, billing: 'none', failure: error };
    if (error instanceof LeadEnrichError) return { kind: 'error', code: error.code, message: error.message, billing: 'none', failure: error };
    throw error;
  }
}

/** A row whose lookup a stop cut short after a failed try: the stop's word, and what the try met (its failure). */
function cutShort(refusal: Unanswered, failure: unknown): Unanswered {
  const cut: Unanswered = { ...refusal, message: `${refusal.message} (a try before the stop failed: ${(failure as Error).message})` };
  if (failure instanceof LeadEnrichError) cut.failure = failure;
  return cut;
}
