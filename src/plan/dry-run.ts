// `enrich --dry-run`: reads and plans every row and checks the store, then says what a real run
// would cost and how long it would take, against the balance and the reserve. It makes no lookup:
// only the two account calls.
import { LeadClient } from '../api/client.js';
import { PUBLISHED_FOUND_COST, type BillableOperation } from '../lookup/credits.js';
import { RetryPolicy } from '../lookup/request-path/retry-policy.js';
import type { EnrichOptions, Extra } from '../options/enrich-options.js';
import { rateFor } from '../options/rate-plan.js';
import { resolveOptions, type EnrichSettings } from '../options/resolve-options.js';
import { fromBytes, openCsv } from '../pipeline/read.js';
import { readAccount } from '../run/account.js';
import { ResultStore } from '../store/result-store.js';
import { LOOKUP_OPERATION, detectDomainColumn, detectTarget, domainForRow, planRow, type LookupKind, type LookupTarget } from './plan.js';

/** The options of a run: the dry run plans what `enrich()` with the same options would do. */
export type DryRunOptions = EnrichOptions;

export interface DryRunPlan {
  rows: number;
  invalidRows: number;
  lookup: { kind: LookupKind; column: string; with: Extra[] };
  /** Distinct normalized keys, per operation. */
  distinctKeys: Record<string, number>;
  /** Of those, already answered in the store (free). */
  alreadyKnown: Record<string, number>;
  /**
   * Requests a real run would make (distinct keys not known), at most: with --with and profile URLs
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
  const client = settings.client ?? new LeadClient({ baseUrl: settings.baseUrl, token: settings.token });
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

type RowCounts = Pick<DryRunPlan, 'rows' | 'invalidRows' | 'lookup' | 'distinctKeys' | 'alreadyKnown' | 'lookupsToMake'>;

/** Reads and plans every row as the run would, and checks each distinct key against the store. */
async function countRows(settings: EnrichSettings, store: ResultStore, service: string): Promise<RowCounts> {
  const source = await openCsv(settings.input);
  const header = source.header.map(fromBytes);
  const target = detectTarget(header, { ...(settings.by ? { by: settings.by } : {}), ...(settings.column ? { column: settings.column } : {}) });
  const extras = settings.extras;
  const domainColumn = extras.length > 0 ? detectDomainColumn(header, target) : undefined;
  const keys = new DistinctKeys(store, service, settings.maxAgeMs, settings.refresh);
  const op = LOOKUP_OPERATION[target.kind] as BillableOperation;
  let rows = 0;
  let invalidRows = 0;
  // URL keys whose domain only the found lead will tell (no domain column): each may cost MX/Whois.
  const domainFromLead = new Set<string>();
  for await (const batch of source.batches) {
    for (const cells of batch) {
      const planned = planRow(cells, target, source.header.length, settings.shard);
      if (planned.kind === 'elsewhere') continue;
      rows += 1;
      if (planned.kind === 'invalid') {
        invalidRows += 1;
        continue;
      }
      keys.note(op, planned.key);
      if (extras.length === 0) continue;
      const domain = domainOf(target, planned.key, domainColumn, cells);
      if (domain !== undefined) for (const extra of extras) keys.note(extra, domain);
      else if (target.kind === 'url') domainFromLead.add(planned.key);
    }
  }
  return {
    rows,
    invalidRows,
    lookup: { kind: target.kind, column: target.columnName, with: extras },
    distinctKeys: keys.distinct(),
    alreadyKnown: keys.known,
    lookupsToMake: keys.unknown() + domainFromLead.size * extras.length,
  };
}

function domainOf(target: LookupTarget, key: string, domainColumn: LookupTarget | undefined, cells: string[]): string | undefined {
  return domainForRow(target.kind, key, domainColumn ? fromBytes(cells[domainColumn.columnIndex] ?? '') : undefined);
}

/** Distinct keys per operation, and how many of them the store already answers. */
class DistinctKeys {
  // Distinct keys need a set: a dry run's memory grows with the distinct keys, not the rows.
  readonly #seen = new Map<BillableOperation, Set<string>>();
  readonly known: Record<string, number> = {};
  readonly #lookup: (op: BillableOperation, key: string) => boolean;

  constructor(store: ResultStore, service: string, maxAgeMs: number, refresh: boolean) {
    this.#lookup = (op, key) => !refresh && store.get(service, op, key, maxAgeMs) !== undefined;
  }

  note(op: BillableOperation, key: string): void {
    let keys = this.#seen.get(op);
    if (!keys) this.#seen.set(op, (keys = new Set()));
    if (keys.has(key)) return;
    keys.add(key);
    if (this.#lookup(op, key)) this.known[op] = (this.known[op] ?? 0) + 1;
  }

  distinct(): Record<string, number> {
    return Object.fromEntries([...this.#seen].map(([op, keys]) => [op, keys.size]));
  }

  unknown(): number {
    return [...this.#seen].reduce((sum, [op, keys]) => sum + keys.size - (this.known[op] ?? 0), 0);
  }
}
