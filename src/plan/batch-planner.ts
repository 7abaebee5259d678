// The plan step for a batch of rows: each row is finished at once (a malformed key), or comes
// with the function that looks it up, synchronous when every answer is already known. The caller
// starts each one, so it decides how many wait for the network. `--with mx,whois` adds the
// domain's answers once the row's own lookup is done.
import type { CompanyLead, Lead, MxResult, WhoisResult } from '../api/types.js';
import type { BillableOperation } from '../lookup/credits.js';
import type { Lookups } from '../lookup/lookups.js';
import { isAnswered, type LookupOutcome } from '../lookup/outcome.js';
import type { Extra } from '../options/enrich-options.js';
import { fromBytes } from '../pipeline/read.js';
import type { FinishedRow } from '../run/finished-row.js';
import type { RowData } from '../write/columns.js';
import { LOOKUP_OPERATION, domainForRow, normalizeDomain, planRow, type LookupTarget, type Shard } from './plan.js';

export interface BatchPlannerOptions {
  target: LookupTarget;
  /** The column the --with domain comes from, when there is one besides the key. */
  domainColumn: LookupTarget | undefined;
  extras: Extra[];
  lookups: Lookups;
  /** The header's width. */
  width: number;
  shard: Shard | undefined;
}

/** A planned row: finished already, or the function that finishes it. */
export interface PlannedRow {
  row: number;
  cells: string[];
  result: FinishedRow | (() => FinishedRow | Promise<FinishedRow>);
}

interface KeyedRow {
  row: number;
  cells: string[];
  key: string;
}

export class BatchPlanner {
  readonly #options: BatchPlannerOptions;
  readonly #op: BillableOperation;

  constructor(options: BatchPlannerOptions) {
    this.#options = options;
    this.#op = LOOKUP_OPERATION[options.target.kind] as BillableOperation;
  }

  /** Plans the rows of a batch (another shard's rows are left out), prefetching their known answers. */
  plan(batch: string[][], firstRow: number): PlannedRow[] {
    const planned: Array<KeyedRow | FinishedRow> = [];
    const keys = new Set<string>();
    for (let i = 0; i < batch.length; i += 1) {
      const p = this.#planOne(batch[i]!, firstRow + i);
      if (p === undefined) continue;
      planned.push(p);
      if ('key' in p) keys.add(p.key);
    }
    // One store query for the batch's keys instead of one per row.
    this.#options.lookups.prefetch(this.#op, [...keys]);
    return planned.map((p) => ({ row: p.row, cells: p.cells, result: 'key' in p ? () => this.#lookUp(p) : p }));
  }

  #planOne(cells: string[], row: number): KeyedRow | FinishedRow | undefined {
    const { target, width, shard } = this.#options;
    const planned = planRow(cells, target, width, shard);
    if (planned.kind === 'elsewhere') return undefined;
    if (planned.kind === 'invalid') {
      return { row, cells, status: 'error', billing: 'none', data: {}, errorCode: 'invalid_input', errorMessage: planned.message };
    }
    return { row, cells, key: planned.key };
  }

  #lookUp({ row, cells, key }: KeyedRow): FinishedRow | Promise<FinishedRow> {
    const primary = this.#options.lookups.resolve(this.#op, key);
    if (this.#options.extras.length === 0) {
      return primary instanceof Promise
        ? primary.then((outcome) => finished(cells, row, outcome, { lead: leadOf(outcome) }))
        : finished(cells, row, primary, { lead: leadOf(primary) });
    }
    return Promise.resolve(primary).then((outcome) => this.#withExtras(cells, row, key, outcome));
  }

  /** The domain --with looks up: the row's (email or domain column), else the found lead's company. */
  #domainOf(cells: string[], key: string, lead: Lead | CompanyLead | undefined): string | undefined {
    const { target, domainColumn } = this.#options;
    const domain = domainForRow(target.kind, key, domainColumn ? fromBytes(cells[domainColumn.columnIndex] ?? '') : undefined);
    if (domain !== undefined || target.kind !== 'url' || !lead || typeof (lead as Lead).company_domain !== 'string') return domain;
    const fromLead = normalizeDomain((lead as Lead).company_domain!);
    return fromLead.ok ? fromLead.key : undefined;
  }

  async #withExtras(cells: string[], row: number, key: string, primary: LookupOutcome): Promise<FinishedRow> {
    const lead = leadOf(primary);
    const base = finished(cells, row, primary, { lead });
    if (primary.kind !== 'found' && primary.kind !== 'not_found') return base;
    const domain = this.#domainOf(cells, key, lead);
    if (domain === undefined) return base;
    const { extras, lookups } = this.#options;
    const [mx, whois] = await Promise.all((['mx', 'whois'] as const).map((extra) => (extras.includes(extra) ? lookups.resolve(extra, domain) : undefined)));
    base.extraBilling = { ...(mx ? { mx: mx.billing } : {}), ...(whois ? { whois: whois.billing } : {}) };
    base.data = {
      lead,
      ...(mx?.kind === 'found' ? { mx: mx.data as MxResult } : {}),
      ...(whois?.kind === 'found' ? { whois: whois.data as WhoisResult } : {}),
    };
    for (const [name, outcome] of [['MX', mx], ['Whois', whois]] as const) {
      if (!outcome || isAnswered(outcome)) continue;
      if (base.status === 'found' || base.status === 'not_found') {
        base.status = outcome.kind;
        base.errorCode = outcome.code;
        base.errorMessage = `${name} of ${domain}: ${outcome.message}`;
      }
    }
    return base;
  }
}

function finished(cells: string[], row: number, outcome: LookupOutcome, data: RowData): FinishedRow {
  return isAnswered(outcome)
    ? { row, cells, status: outcome.kind, billing: outcome.billing, data }
    : { row, cells, status: outcome.kind, billing: 'none', data, errorCode: outcome.code, errorMessage: outcome.message };
}

function leadOf(outcome: LookupOutcome): Lead | CompanyLead | undefined {
  return isAnswered(outcome) ? ((outcome.data as { lead?: Lead }).lead ?? undefined) : undefined;
}
