// The dry run's count of keys (run/dry-run.ts): distinct keys per operation, which the store
// already answers, and the lookups a run would make, at worst and as expected, --with included.
// Planning only: it asks the store, never the API.
import type { Lead } from '../api/types.js';
import type { BillableOperation, Extra } from '../core/kinds.js';
import type { ResultStore, StoredResult } from '../store/result-store.js';
import { domainAwaitsLead, extraDomains } from './extra-domains.js';
import type { WaterfallKey } from './plan.js';

type CensusKey = { op: BillableOperation; key: string };
/** A row's key as the census walks it: its operation, and the waterfall key it came from. */
export type RowKey = CensusKey & { attempt: WaterfallKey };
/** A key that may answer its row, and what the store says of it (undefined: not known). */
export type Answering = { key: RowKey; stored: { lead: Lead | undefined } | undefined };

export interface RowExtras {
  extras: readonly Extra[];
  keys: readonly WaterfallKey[];
  domainCell: string | undefined;
}

/**
 * The --with lookups of a row, for each key that may answer it (the first is the expected one):
 * by the domain the row and the stored lead give, as the run would (extra-domains.ts); a profile
 * URL whose lead is not known yet may name a domain of its own: one lookup per key and extra.
 */
export function noteExtras(census: KeyCensus, row: RowExtras, answering: readonly Answering[]): void {
  const emailKey = row.keys.find((k) => k.target.kind === 'email')?.key;
  answering.forEach(({ key, stored }, i) => {
    const { attempt } = key;
    const sources = { attempt, lead: stored?.lead, domainCell: row.domainCell, emailKey };
    const domains = extraDomains(row.extras, sources);
    for (const extra of row.extras) {
      if (stored === undefined && domainAwaitsLead(extra, sources)) census.unknownExtra(`${extra}\u0000${attempt.key}`, i === 0);
      else if (domains[extra] !== undefined) census.extra(extra === 'company' ? 'lookup_domain' : extra, domains[extra]!, i === 0);
    }
  });
}

/**
 * Distinct keys per operation, what the store already answers, and the lookups a run would make:
 * at worst (every key not found, so a waterfall tries every kind) and as expected (a key the
 * store does not know ends its row, as if found; the store's not-found answers pass on).
 */
export class KeyCensus {
  // Distinct keys need a set: a dry run's memory grows with the distinct keys, not the rows.
  readonly #seen = new Map<BillableOperation, Map<string, boolean | undefined>>();
  readonly known: Record<string, number> = {};
  readonly #worst = new Set<string>();
  readonly #expected = new Set<string>();
  readonly #stored: (op: BillableOperation, key: string) => StoredResult | undefined;
  readonly #found: (op: BillableOperation, key: string) => boolean | undefined;

  /** `freshSince`: answers fetched at or after it (epoch ms) are fresh, however long the count takes. */
  constructor(store: ResultStore, service: string, freshSince: number, refresh: boolean) {
    this.#stored = (op, key) => (refresh ? undefined : store.get(service, op, key, { since: freshSince }));
    this.#found = (op, key) => (refresh ? undefined : store.foundOf(service, op, key, { since: freshSince }));
  }

  /** The lead a stored found answer holds, read from the store when asked (only --with asks). */
  #leadOf(op: BillableOperation, key: string): { readonly lead: Lead | undefined } {
    const stored = this.#stored;
    return {
      get lead() {
        return (stored(op, key)?.data as { lead?: Lead } | undefined)?.lead;
      },
    };
  }

  /** found (true), not found (false) or unknown (undefined) in the store; each key asked once. */
  #answer(op: BillableOperation, key: string): boolean | undefined {
    let keys = this.#seen.get(op);
    if (!keys) this.#seen.set(op, (keys = new Map()));
    if (keys.has(key)) return keys.get(key);
    const found = this.#found(op, key);
    keys.set(key, found);
    if (found !== undefined) this.known[op] = (this.known[op] ?? 0) + 1;
    return found;
  }

  /**
   * A row's keys in the order they would be tried. Returns those that may end up answering it,
   * each with its stored answer when the store found it (a stored found key ends the row; a
   * stored miss passes on; when every key is a stored miss, the last one tried is the row's).
   */
  walk(keys: readonly RowKey[]): Answering[] {
    const answering: Answering[] = [];
    let expectedEnded = false;
    for (const key of keys) {
      const found = this.#answer(key.op, key.key);
      // The lead is read (a second query and a JSON.parse) only when --with asks for its domain:
      // read for every key, a glance at 100 k stored rows would take longer than the run that follows it.
      if (found === true) return [...answering, { key, stored: this.#leadOf(key.op, key.key) }];
      if (found === false) continue;
      this.#count(key, !expectedEnded);
      answering.push({ key, stored: undefined });
      expectedEnded = true;
    }
    return answering.length > 0 || keys.length === 0 ? answering : [{ key: keys[keys.length - 1]!, stored: { lead: undefined } }];
  }

  /** A lookup of a --with extra; `expected` when it is that of the row's expected answer. */
  extra(op: BillableOperation, key: string, expected: boolean): void {
    if (this.#answer(op, key) === undefined) this.#count({ op, key }, expected);
  }

  /** A lookup whose key only the lead found will tell (counted once per row key and extra). */
  unknownExtra(id: string, expected: boolean): void {
    this.#worst.add(id);
    if (expected) this.#expected.add(id);
  }

  #count({ op, key }: CensusKey, expected: boolean): void {
    const id = `${op}\u0000${key}`;
    this.#worst.add(id);
    if (expected) this.#expected.add(id);
  }

  get worst(): number {
    return this.#worst.size;
  }

  get expected(): number {
    return this.#expected.size;
  }

  distinct(): Record<string, number> {
    return Object.fromEntries([...this.#seen].map(([op, keys]) => [op, keys.size]));
  }
}
