// `enrich --dry-run`: reads and plans every row and checks the store, then says what a real run
// would cost and how long it would take, against the balance and the reserve. It makes no lookup:
// only the two account calls.
import type { Readable } from 'node:stream';
import type { LeadClient } from '../api/client.js';
import { PaymentRequiredError } from '../api/errors.js';
import { parseServiceLimits } from '../api/limits.js';
import type { ResultStore } from '../store/result-store.js';
import { PUBLISHED_FOUND_COST, type BillableOperation } from './credits.js';
import { LOOKUP_OPERATION, detectDomainColumn, detectTarget, domainForRow, planRow, type LookupKind, type Shard } from './plan.js';
import { fromBytes, openCsv } from './read.js';

export interface DryRunOptions {
  input: string | Readable;
  client: LeadClient;
  store: ResultStore;
  service: string;
  by?: LookupKind | undefined;
  column?: string | undefined;
  with?: Array<'mx' | 'whois'> | undefined;
  rpm?: number | undefined;
  minCredits?: number | undefined;
  maxAgeMs: number;
  refresh: boolean;
  shard?: Shard | undefined;
}

export interface DryRunPlan {
  rows: number;
  invalidRows: number;
  lookup: { kind: LookupKind; column: string; with: Array<'mx' | 'whois'> };
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
  // A server at zero balance may answer 402 to everything: a balance of nothing, so it does not fit.
  const outOfCredits = (error: unknown): never | undefined => {
    if (error instanceof PaymentRequiredError) return undefined;
    throw error;
  };
  const credits = (await options.client.getCredits().catch(outOfCredits)) ?? { total_remaining_credits: 0, low_credit_balance_min_threshold: 0 };
  const limits = await options.client.getLimits().then(parseServiceLimits, (error: unknown) => {
    outOfCredits(error);
    return { rpm: options.rpm ?? 1 };
  });
  const source = await openCsv(options.input);
  const header = source.header.map(fromBytes);
  const target = detectTarget(header, { ...(options.by ? { by: options.by } : {}), ...(options.column ? { column: options.column } : {}) });
  const extras = options.with ?? [];
  const domainColumn = extras.length > 0 ? detectDomainColumn(header, target) : undefined;
  const op = LOOKUP_OPERATION[target.kind] as BillableOperation;
  // Distinct keys need a set: a dry run's memory grows with the distinct keys, not the rows.
  const seen = new Map<BillableOperation, Set<string>>();
  const known: Record<string, number> = {};
  const note = (operation: BillableOperation, key: string) => {
    let keys = seen.get(operation);
    if (!keys) seen.set(operation, (keys = new Set()));
    if (keys.has(key)) return;
    keys.add(key);
    const stored = options.refresh ? undefined : options.store.get(options.service, operation, key, options.maxAgeMs);
    if (stored) known[operation] = (known[operation] ?? 0) + 1;
  };
  let rows = 0;
  let invalidRows = 0;
  // URL keys whose domain only the found lead will tell (no domain column): each may cost MX/Whois.
  const domainFromLead = new Set<string>();
  const width = source.header.length;
  for await (const batch of source.batches) for (const cells of batch) {
    const planned = planRow(cells, target, width, options.shard);
    if (planned.kind === 'elsewhere') continue;
    rows += 1;
    if (planned.kind === 'invalid') {
      invalidRows += 1;
      continue;
    }
    note(op, planned.key);
    if (extras.length === 0) continue;
    const domain = domainForRow(target.kind, planned.key, domainColumn ? fromBytes(cells[domainColumn.columnIndex] ?? '') : undefined);
    if (domain !== undefined) for (const extra of extras) note(extra, domain);
    else if (target.kind === 'url') domainFromLead.add(planned.key);
  }
  const distinctKeys = Object.fromEntries([...seen].map(([operation, keys]) => [operation, keys.size]));
  const lookupsToMake =
    [...seen].reduce((sum, [operation, keys]) => sum + keys.size - (known[operation] ?? 0), 0) + domainFromLead.size * extras.length;
  const creditsNeeded = lookupsToMake * PUBLISHED_FOUND_COST;
  const rpm = options.rpm ?? limits.rpm;
  const reserve = options.minCredits ?? credits.low_credit_balance_min_threshold ?? 0;
  const balance = credits.total_remaining_credits;
  return {
    rows,
    invalidRows,
    lookup: { kind: target.kind, column: target.columnName, with: extras },
    distinctKeys,
    alreadyKnown: known,
    lookupsToMake,
    creditsNeeded,
    creditsEstimate: `upper bound: every lookup found, at ${PUBLISHED_FOUND_COST} credits each (the published cost of a found lead); misses cost nothing`,
    minutesNeeded: Math.round((lookupsToMake / rpm) * 100) / 100,
    rpm,
    balance,
    reserve,
    fits: balance - creditsNeeded >= reserve,
  };
}
