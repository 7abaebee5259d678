// `enrich --dry-run`: reads and plans every row and checks the store, then says what a real run
// would cost and how long it would take, against the balance and the reserve. It makes no lookup:
// only the two account calls.
import { LeadClient } from '../api/client.js';
import type { Lead } from '../api/types.js';
import { PUBLISHED_FOUND_COST, type BillableOperation } from '../lookup/credits.js';
import { RetryPolicy } from '../lookup/request-path/retry-policy.js';
import type { EnrichOptions, Extra } from '../options/enrich-options.js';
import { rateFor } from '../options/rate-plan.js';
import { resolveOptions, type EnrichSettings } from '../options/resolve-options.js';
import { fromBytes, openCsv } from '../read/index.js';
import { readAccount } from '../run/account.js';
import { ResultStore, type StoredResult } from '../store/result-store.js';
import { domainAwaitsLead, extraDomains } from './extra-domains.js';
import { keyColumns } from './key-columns.js';
import { domainColumnFor } from './targets.js';
import { keyWarning } from './key-warning.js';
import { LOOKUP_OPERATION, planWaterfallRow, type LookupKind, type WaterfallKey } from './plan.js';

/** The options of a run: the dry run plans what `enrich()` with the same options would do. */
export type DryRunOptions = EnrichOptions;

export interface DryRunPlan {
  rows: number;
  invalidRows: number;
  /** Rows whose key cell is empty: skipped with no_key, no request. */
  noKeyRows: number;
  /** The first (or only) kind and its column; `order` lists every kind of a waterfall in turn. */
  lookup: { kind: LookupKind; column: string; with: Extra[]; order: Array<{ kind: LookupKind; column: string }> };
  /** Distinct normalized keys, per operation. */
  distinctKeys: Record<string, number>;
  /** Of those, already answered in the store (free). */
  alreadyKnown: Record<string, number>;
  /** With a waterfall, the lookups expected: an unknown key ends its row (as if found). Without one, lookupsToMake. */
  lookupsExpected: number;
  /** Set when most rows have no usable key: the key column or the delimiter looks wrong. */
  warning?: string | undefined;
  /**
   * Requests a real run would make (distinct keys not known), at most: with a waterfall, every key
   * of a row not found in turn; with --with and profile URLs
   * but no domain column, each URL key counts one MX/Whois call per extra (the domain comes from
   * the lead found, so it is known only then).
   */
  lookupsToMake: number;
  /** Upper bound: every lookup found, at the published cost of a found lead. */
  creditsNeeded: number;
  creditsEstimate: string;
  /** Minutes at the account's (or --rpm) rate. */
  minutesNeeded: number;
  rpm: number;
  balance: number;
  reserve: number;
  fits: boolean;
}

export async function planRun(options: DryRunOptions): Promise<DryRunPlan> {
  const settings = resolveOptions(options);
  const client = settings.client?.direct ?? new LeadClient({ baseUrl: settings.baseUrl, token: settings.token, retry: false });
  const store = settings.store instanceof ResultStore ? settings.store : ResultStore.open({ path: settings.store });
  try {
    const retry = new RetryPolicy({ retries: settings.retries, baseDelayMs: settings.tuning.retryBaseDelayMs, maxDelayMs: settings.tuning.retryMaxDelayMs });
    const account = await readAccount(client, retry, settings.tuning.windowMs, settings.rpm);
    const counted = await countRows(settings, store, settings.service ?? client.baseUrl);
    const creditsNeeded = counted.lookupsToMake * PUBLISHED_FOUND_COST;
    const { rpm } = rateFor(settings.rpm, account.limits);
    const reserve = settings.minCredits ?? account.threshold;
    return {
      ...counted,
      creditsNeeded,
      creditsEstimate: `upper bound: every lookup found, at ${PUBLISHED_FOUND_COST} credits each (the published cost of a found lead); misses cost nothing`,
      minutesNeeded: Math.round((counted.lookupsToMake / rpm) * 100) / 100,
      rpm,
      balance: account.balance,
      reserve,
      fits: account.balance - creditsNeeded >= reserve,
    };
  } finally {
    if (!(settings.store instanceof ResultStore)) store.close();
    if (!settings.client) client.close();
  }
}

type RowCounts = Pick<
  DryRunPlan,
  'rows' | 'invalidRows' | 'noKeyRows' | 'lookup' | 'distinctKeys' | 'alreadyKnown' | 'lookupsToMake' | 'lookupsExpected' | 'warning'
>;

/** Reads and plans every row as the run would, and checks each distinct key against the store. */
async function countRows(settings: EnrichSettings, store: ResultStore, service: string): Promise<RowCounts> {
  const read = await openCsv(settings.input, {
    ...(settings.delimiter === undefined ? {} : { delimiter: settings.delimiter }),
    ...(settings.encoding === undefined ? {} : { encoding: settings.encoding }),
    header: settings.header,
  });
  const inputName = typeof settings.input === 'string' ? settings.input : 'the input stream';
  const { targets, headerLine, source } = await keyColumns(read, { by: settings.by, columns: settings.columns, header: settings.header, inputName, warn: settings.warn });
  const extras = settings.extras;
  const domainColumn = headerLine ? domainColumnFor(source.header.map(fromBytes), targets, extras) : undefined;
  const census = new KeyCensus(store, service, settings.maxAgeMs, settings.refresh);
  const counts = { rows: 0, invalidRows: 0, noKeyRows: 0 };
  for await (const batch of source.batches) {
    for (const cells of batch) {
      const planned = planWaterfallRow(cells, targets, source.header.length, settings.shard);
      if (planned.kind === 'elsewhere') continue;
      counts.rows += 1;
      if (planned.kind !== 'keys') {
        if (planned.kind === 'invalid') counts.invalidRows += 1;
        else counts.noKeyRows += 1;
        continue;
      }
      const answering = census.walk(planned.keys.map((attempt) => ({ op: LOOKUP_OPERATION[attempt.target.kind] as BillableOperation, key: attempt.key, attempt })));
      if (extras.length > 0) noteExtras(census, { extras, keys: planned.keys, domainCell: domainColumn ? fromBytes(cells[domainColumn.columnIndex] ?? '') : undefined }, answering);
    }
  }
  return {
    ...counts,
    lookup: {
      kind: targets[0]!.kind,
      column: targets[0]!.columnName,
      with: extras,
      order: targets.map((t) => ({ kind: t.kind, column: t.columnName })),
    },
    distinctKeys: census.distinct(),
    alreadyKnown: census.known,
    lookupsToMake: census.worst,
    lookupsExpected: census.expected,
    warning: keyWarning(counts, source, targets),
  };
}

type CensusKey = { op: BillableOperation; key: string };
/** A row's key as the census walks it: its operation, and the waterfall key it came from. */
type RowKey = CensusKey & { attempt: WaterfallKey };
/** A key that may answer its row, and what the store says of it (undefined: not known). */
type Answering = { key: RowKey; stored: { lead: Lead | undefined } | undefined };

interface RowExtras {
  extras: readonly Extra[];
  keys: readonly WaterfallKey[];
  domainCell: string | undefined;
}

/**
 * The --with lookups of a row, for each key that may answer it (the first is the expected one):
 * by the domain the row and the stored lead give, as the run would (extra-domains.ts); a profile
 * URL whose lead is not known yet may name a domain of its own: one lookup per key and extra.
 */
function noteExtras(census: KeyCensus, row: RowExtras, answering: readonly Answering[]): void {
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
class KeyCensus {
  // Distinct keys need a set: a dry run's memory grows with the distinct keys, not the rows.
  readonly #seen = new Map<BillableOperation, Map<string, boolean | undefined>>();
  readonly known: Record<string, number> = {};
  readonly #worst = new Set<string>();
  readonly #expected = new Set<string>();
  readonly #stored: (op: BillableOperation, key: string) => StoredResult | undefined;

  constructor(store: ResultStore, service: string, maxAgeMs: number, refresh: boolean) {
    this.#stored = (op, key) => (refresh ? undefined : store.get(service, op, key, maxAgeMs));
  }

  /** The lead a stored found answer holds (asked again only for the rows it ends). */
  #lead(op: BillableOperation, key: string): Lead | undefined {
    return (this.#stored(op, key)?.data as { lead?: Lead } | undefined)?.lead;
  }

  /** found (true), not found (false) or unknown (undefined) in the store; each key asked once. */
  #answer(op: BillableOperation, key: string): boolean | undefined {
    let keys = this.#seen.get(op);
    if (!keys) this.#seen.set(op, (keys = new Map()));
    if (keys.has(key)) return keys.get(key);
    const found = this.#stored(op, key)?.found;
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
      if (found === true) return [...answering, { key, stored: { lead: this.#lead(key.op, key.key) } }];
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
