// `enrich --dry-run`: reads and plans every row and checks the store, then says what a real run
// would cost and how long it would take, against the balance and the reserve. It makes no lookup:
// only the two account calls.
import { LeadClient } from '../api/client.js';
import { PUBLISHED_FOUND_COST, type BillableOperation } from '../lookup/credits.js';
import { RetryPolicy } from '../lookup/request-path/retry-policy.js';
import type { EnrichOptions, Extra } from '../options/enrich-options.js';
import { rateFor } from '../options/rate-plan.js';
import { resolveOptions, type EnrichSettings } from '../options/resolve-options.js';
import { fromBytes, openCsv } from '../read/index.js';
import { readAccount } from '../run/account.js';
import { ResultStore } from '../store/result-store.js';
import { companyDomainOf } from './company-domain.js';
import { keyColumns } from './key-columns.js';
import { domainColumnFor } from './targets.js';
import { keyWarning } from './key-warning.js';
import { LOOKUP_OPERATION, domainForRow, planWaterfallRow, type LookupKind, type LookupTarget } from './plan.js';

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
  // URL keys whose domain only the found lead will tell (no domain column): each may cost MX/Whois.
  const domainFromLead = new Set<string>();
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
      census.walk(planned.keys.map(({ target, key }) => ({ op: LOOKUP_OPERATION[target.kind] as BillableOperation, key })));
      if (extras.length > 0) noteExtras(census, extras, planned.keys[0]!, domainColumn ? fromBytes(cells[domainColumn.columnIndex] ?? '') : undefined, domainFromLead);
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
    lookupsToMake: census.worst + domainFromLead.size,
    lookupsExpected: census.expected + domainFromLead.size,
    warning: keyWarning(counts, source, targets),
  };
}

/**
 * The --with lookups of a row, by the domain its own cells give. A profile-URL row without one
 * may learn it from the lead found: counted apart, as at most one lookup per extra.
 */
function noteExtras(census: KeyCensus, extras: readonly Extra[], first: { target: LookupTarget; key: string }, domainCell: string | undefined, fromLead: Set<string>): void {
  const domain = domainForRow(first.target.kind, first.key, domainCell);
  const company = companyDomainOf({ kind: first.target.kind, key: first.key, lead: undefined, domainCell });
  for (const extra of extras) {
    const key = extra === 'company' ? company : domain;
    if (key !== undefined) census.walk([{ op: extra === 'company' ? 'lookup_domain' : extra, key }]);
    else if (first.target.kind === 'url') fromLead.add(`${extra}\u0000${first.key}`);
  }
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
  readonly #stored: (op: BillableOperation, key: string) => boolean | undefined;

  constructor(store: ResultStore, service: string, maxAgeMs: number, refresh: boolean) {
    this.#stored = (op, key) => (refresh ? undefined : store.get(service, op, key, maxAgeMs)?.found);
  }

  /** found (true), not found (false) or unknown (undefined) in the store; each key asked once. */
  #answer(op: BillableOperation, key: string): boolean | undefined {
    let keys = this.#seen.get(op);
    if (!keys) this.#seen.set(op, (keys = new Map()));
    if (keys.has(key)) return keys.get(key);
    const found = this.#stored(op, key);
    keys.set(key, found);
    if (found !== undefined) this.known[op] = (this.known[op] ?? 0) + 1;
    return found;
  }

  /** A row's keys in the order they would be tried. */
  walk(keys: ReadonlyArray<{ op: BillableOperation; key: string }>): void {
    let expectedEnded = false;
    for (const { op, key } of keys) {
      const found = this.#answer(op, key);
      if (found === true) return;
      if (found === false) continue;
      const id = `${op}\u0000${key}`;
      this.#worst.add(id);
      if (!expectedEnded) this.#expected.add(id);
      expectedEnded = true;
    }
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
