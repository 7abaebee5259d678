// Which stale answers a run with a budget refreshes tonight (docs/cli-contract.md, "A stale answer
// is better than none"). When the credits a night may spend (its budgets, the credit reserve) cannot
// pay for every key of the file whose stored answer is older than --max-age, the oldest answers
// are refreshed first and the younger ones written as they are stored (`stale`, code `budget`),
// without a request. In input order a budget smaller than a month's refreshes would refresh the
// file's first rows every month and its last rows never; oldest first, every key takes its turn over
// the nights. Keys with no answer at all come before any refresh (a stale answer is better than
// none: none is the worse), and an answer stored as not found costs nothing to look up again (a miss
// is free), so only found answers wait for their turn.
//
// A run streams its rows through a bounded reorder window, so it cannot sort the file by age: one
// pass over the input before the run reads the stored answers' ages (one query per batch, the cells
// form: no answer parsed) and keeps only the oldest found answers the credits can pay for, so memory
// grows with what the night can buy, not with the file. Only when the store holds an answer older
// than --max-age at all (its oldest says so); a file only (stdin cannot be read twice); not with
// --refresh (every key is asked again) nor --redis (the workers share the budget).
import type { BillableOperation } from '../core/kinds.js';
import { budgetHold, PUBLISHED_FOUND_COST } from '../lookup/credits.js';
import { optionWord } from '../options/option-table.js';
import { isComplete } from '../plan/complete-row.js';
import { LOOKUP_OPERATION, planWaterfallRow } from '../plan/plan.js';
import { fromBytes } from '../read/index.js';
import type { ResultStore } from '../store/result-store.js';
import { isStreamInput } from './input-wait.js';
import { runColumns } from './run-columns.js';
import { readKeyed } from './keyed-input.js';
import type { EnrichSettings } from './settings.js';

/** The run's view of the store the pass reads: its service, and the layout of each operation's cells (none: parsed). */
export interface StoredAges {
  store: ResultStore;
  service: string;
  layout(op: BillableOperation): string | undefined;
  now: number;
}

/** Whether a run orders its refreshes: a budget that may bind, on a file read twice, keys not all asked again. */
export function ordersRefreshes(settings: EnrichSettings): boolean {
  return settings.budget.length > 0 && !isStreamInput(settings.input) && !settings.refresh && !settings.redis && Number.isFinite(settings.maxAge);
}

/** Whether the store holds any answer of the service older than --max-age: if none, nothing can wait, and the file is not read twice. */
export function holdsStaleAnswers(settings: EnrichSettings, stored: StoredAges): boolean {
  const oldest = stored.store.stats(stored.service).oldest;
  return oldest !== undefined && oldest < stored.now - settings.maxAge;
}

/**
 * The newest fetch time of a found answer this run refreshes (older or as old: refreshed; newer:
 * written stale without a request); undefined when `credits` pay for every refresh the file needs
 * (nothing waits), -Infinity when its new keys take them all.
 */
export async function refreshCutoff(settings: EnrichSettings, stored: StoredAges, credits: number): Promise<number | undefined> {
  const quiet = () => {};
  const { targets, source } = await readKeyed(settings, { notice: quiet, warn: quiet });
  const { complete } = runColumns(settings, targets, source.header.map(fromBytes));
  const oldest = new OldestFound(lookupsFor(credits, LOOKUP_OPERATION[targets[0]!.kind] as BillableOperation));
  const staleBefore = stored.now - settings.maxAge;
  try {
    for await (const batch of source.batches) {
      const keysByOp = new Map<BillableOperation, Set<string>>();
      for (const cells of batch) {
        const planned = planWaterfallRow(cells, targets, source.header.length, settings.shard);
        if (planned.kind !== 'keys' || (complete && isComplete(cells, complete))) continue;
        const first = planned.keys[0]!;
        const op = LOOKUP_OPERATION[first.target.kind] as BillableOperation;
        let keys = keysByOp.get(op);
        if (!keys) keysByOp.set(op, (keys = new Set()));
        keys.add(first.key);
      }
      for (const [op, keys] of keysByOp) {
        const answers = stored.store.getMany(stored.service, op, [...keys], undefined, stored.layout(op));
        for (const key of keys) {
          const answer = answers.get(key);
          if (answer === undefined) oldest.newKey(`${op}\u0000${key}`);
          // A refused key is stored as not found: a miss, free to ask again.
          else if (answer.fetchedAt < staleBefore && answer.found) oldest.offer(`${op}\u0000${key}`, answer.fetchedAt);
        }
      }
      // The new keys take every credit already: no refresh tonight, whatever the rest holds.
      if (oldest.full) break;
    }
  } finally {
    source.destroy();
  }
  return oldest.cutoff();
}

/** What the run says at its start when answers wait for their turn. */
export function refreshLine(cutoff: number): string {
  const which =
    cutoff === -Infinity
      ? 'no answer older than --max-age is looked up again'
      : `answers older than --max-age and fetched after ${new Date(cutoff).toISOString().slice(0, 16).replace('T', ' ')} UTC keep their stored answer (stale), the older ones are looked up again`;
  return `the budgets cannot pay for every refresh this run needs: the keys with no answer first, then ${which.replace('--max-age', optionWord('maxAge'))}`;
}

/**
 * The found answers `credits` pay for, one after the other: each at the published cost, the last
 * one needing room for what a budget holds for a call (a person with phones).
 */
export function lookupsFor(credits: number, op: BillableOperation): number {
  const cost = PUBLISHED_FOUND_COST;
  return Math.max(0, Math.floor((credits - (budgetHold(op, cost) - cost)) / cost));
}

/**
 * The oldest distinct found answers, at most `capacity` (the lookups the credits pay for), in a
 * max-heap by fetch time (the youngest kept on top, the first to leave); and the distinct keys with
 * no answer, which come before them.
 */
export class OldestFound {
  readonly #capacity: number;
  readonly #heap: Array<{ key: string; at: number }> = [];
  readonly #kept = new Set<string>();
  readonly #newKeys = new Set<string>();
  /** A found answer was left out: more wait than the credits pay for. */
  #overflowed = false;

  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** The new keys alone take every lookup the credits pay for. */
  get full(): boolean {
    return this.#newKeys.size >= this.#capacity;
  }

  newKey(key: string): void {
    if (!this.full) this.#newKeys.add(key);
  }

  offer(key: string, at: number): void {
    if (this.#kept.has(key)) return;
    const heap = this.#heap;
    if (heap.length < this.#capacity) {
      this.#kept.add(key);
      heap.push({ key, at });
      this.#up(heap.length - 1);
      return;
    }
    this.#overflowed = true;
    if (heap.length === 0 || at >= heap[0]!.at) return;
    this.#kept.delete(heap[0]!.key);
    this.#kept.add(key);
    heap[0] = { key, at };
    this.#down(0);
  }

  /** See refreshCutoff: the youngest answer kept once the new keys have their lookups. */
  cutoff(): number | undefined {
    const slots = this.#capacity - this.#newKeys.size;
    const heap = this.#heap;
    if (!this.#overflowed && heap.length <= slots) return undefined;
    if (slots <= 0) return -Infinity;
    while (heap.length > slots) this.#pop();
    return heap[0]!.at;
  }

  #pop(): void {
    const heap = this.#heap;
    const last = heap.pop()!;
    this.#kept.delete(heap.length === 0 ? last.key : heap[0]!.key);
    if (heap.length === 0) return;
    heap[0] = last;
    this.#down(0);
  }

  #up(i: number): void {
    const heap = this.#heap;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.at >= heap[i]!.at) return;
      [heap[parent], heap[i]] = [heap[i]!, heap[parent]!];
      i = parent;
    }
  }

  #down(i: number): void {
    const heap = this.#heap;
    for (;;) {
      const [left, right] = [2 * i + 1, 2 * i + 2];
      let top = i;
      if (left < heap.length && heap[left]!.at > heap[top]!.at) top = left;
      if (right < heap.length && heap[right]!.at > heap[top]!.at) top = right;
      if (top === i) return;
      [heap[top], heap[i]] = [heap[i]!, heap[top]!];
      i = top;
    }
  }
}
