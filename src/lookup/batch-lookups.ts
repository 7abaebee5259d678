// The look-up step for a batch of rows, planned by plan/ (planRow): each row is finished at once
// (a malformed or empty key), or comes with the function that looks it up, synchronous when every
// answer is already known (one store query per batch). The caller starts each one, so it decides
// how many wait for the network. A waterfall (`--by email,url`) tries the row's keys in order until
// one is found; `--with mx,whois,company` adds the domain's answers once the row's own lookup is done.
import type { CompanyLead, Lead, MxResult, WhoisResult } from '../api/types.js';
import type { BillableOperation } from './credits.js';
import type { Lookups } from './lookups.js';
import { INTERRUPTED, isAnswered, type LookupOutcome, type Unanswered } from './outcome.js';
import type { Extra } from '../core/kinds.js';
import { fromBytes } from '../read/index.js';
import { extraDomains } from '../plan/extra-domains.js';
import { isComplete, type CompleteRule } from '../plan/complete-row.js';
import type { CarriedChanges, FinishedRow } from '../core/rows.js';
import type { RowData } from '../core/rows.js';
import type { ChangeReport } from '../store/change-report.js';
import { LOOKUP_OPERATION, planRow, planWaterfallRow, type LookupTarget, type Shard, type WaterfallKey } from '../plan/plan.js';

export interface BatchLookupsOptions {
  /** The kinds to try, in order, each with its column: one, or a waterfall. */
  targets: LookupTarget[];
  /** The column the --with domain comes from, when there is one besides the key. */
  domainColumn: LookupTarget | undefined;
  extras: Extra[];
  lookups: Lookups;
  /** The header's width. */
  width: number;
  shard: Shard | undefined;
  /** --fill / --only-missing: a row whose cells in these columns all hold values is not looked up. */
  complete?: CompleteRule | undefined;
  /** --changes: the changes earlier runs stored and no file listed, given to the first row of each key. */
  carried?: Pick<ChangeReport, 'prefetch' | 'take'> | undefined;
}

/** A planned row: finished already, or the function that finishes it (and its keys: what it becomes if a halt gives it up, interrupted()). */
export interface PlannedRow {
  row: number;
  cells: string[];
  result: FinishedRow | (() => FinishedRow | Promise<FinishedRow>);
  keyed: KeyedRow | undefined;
}

/** A row with its keys to try, in order: the first, and (in a waterfall) the rest. */
export interface KeyedRow {
  row: number;
  cells: string[];
  first: WaterfallKey;
  rest: WaterfallKey[] | undefined;
  /** The kinds that answered not_found so far (a waterfall's). */
  missed?: WaterfallKey['target']['kind'][];
}

const opOf = (target: LookupTarget): BillableOperation => LOOKUP_OPERATION[target.kind] as BillableOperation;

export class BatchLookups {
  readonly #options: BatchLookupsOptions;
  readonly #waterfall: boolean;

  constructor(options: BatchLookupsOptions) {
    this.#options = options;
    this.#waterfall = options.targets.length > 1;
  }

  /** Plans the rows of a batch (another shard's rows are left out), prefetching their known answers. */
  plan(batch: string[][], firstRow: number): PlannedRow[] {
    const planned: Array<KeyedRow | FinishedRow> = [];
    const keysByOp = new Map<BillableOperation, Set<string>>();
    const want = ({ target, key }: WaterfallKey): void => {
      const op = opOf(target);
      let keys = keysByOp.get(op);
      if (!keys) keysByOp.set(op, (keys = new Set()));
      keys.add(key);
    };
    for (let i = 0; i < batch.length; i += 1) {
      const p = this.#planOne(batch[i]!, firstRow + i);
      if (p === undefined) continue;
      planned.push(p);
      if (!('first' in p)) continue;
      want(p.first);
      if (p.rest) for (const key of p.rest) want(key);
    }
    // One store query per operation for the batch's keys instead of one per row.
    const byOp = new Map([...keysByOp].map(([op, keys]) => [op, [...keys]]));
    this.#options.lookups.prefetch(byOp);
    this.#options.carried?.prefetch(byOp);
    return planned.map((p) =>
      'first' in p ? { row: p.row, cells: p.cells, result: () => this.#tryFrom(p, 0), keyed: p } : { row: p.row, cells: p.cells, result: p, keyed: undefined },
    );
  }

  /** A row whose lookup a halt gave up: `interrupted`, with its first key's stored answer when it has one (a stale answer is better than none). */
  interrupted(planned: PlannedRow): FinishedRow {
    const p = planned.keyed;
    if (!p)
      return {
        row: planned.row,
        cells: planned.cells,
        status: 'skipped',
        billing: 'none',
        data: {},
        errorCode: INTERRUPTED.code,
        errorMessage: INTERRUPTED.message,
      };
    const outcome = this.#options.lookups.orStale(opOf(p.first.target), p.first.key, INTERRUPTED);
    return finished(p.cells, p.row, outcome, { lead: leadOf(outcome) });
  }

  #planOne(cells: string[], row: number): KeyedRow | FinishedRow | undefined {
    const { targets, width, shard, complete } = this.#options;
    // Another shard's row first: each worker writes only its own shard's rows, complete or not.
    const planned = this.#waterfall ? planWaterfallRow(cells, targets, width, shard) : planRow(cells, targets[0]!, width, shard);
    if (planned.kind === 'elsewhere') return undefined;
    if (complete && isComplete(cells, complete)) {
      const done: FinishedRow = { row, cells, status: 'skipped', billing: 'none', data: {}, errorCode: 'complete', errorMessage: complete.message };
      if (planned.kind === 'key' || planned.kind === 'keys')
        this.#carry(done, 'lead', planned.kind === 'key' ? [{ target: targets[0]!, key: planned.key }] : planned.keys);
      return done;
    }
    if (planned.kind === 'key') return { row, cells, first: { target: targets[0]!, key: planned.key }, rest: undefined };
    if (planned.kind === 'keys') return { row, cells, first: planned.keys[0]!, rest: planned.keys.slice(1) };
    return unplanned(cells, row, planned);
  }

  /**
   * Tries the row's key number `i`; a `not_found` answer, or a key the API refuses (`bad_request`),
   * passes on to the next key (docs/cli-contract.md, "Waterfall").
   */
  #tryFrom(p: KeyedRow, i: number): FinishedRow | Promise<FinishedRow> {
    const attempt = i === 0 ? p.first : p.rest![i - 1]!;
    const outcome = this.#options.lookups.resolve(opOf(attempt.target), attempt.key, i > 0);
    const passesOn = (o: LookupOutcome) => o.kind === 'not_found' || (o.kind === 'error' && o.code === 'bad_request');
    const settle = (o: LookupOutcome): FinishedRow | Promise<FinishedRow> => {
      if (!passesOn(o) || i >= (p.rest?.length ?? 0)) return this.#finish(p, attempt, o);
      if (o.kind === 'not_found') (p.missed ??= []).push(attempt.target.kind);
      return this.#tryFrom(p, i + 1);
    };
    return outcome instanceof Promise ? outcome.then(settle) : settle(outcome);
  }

  /** --changes: the carried changes of the keys this row stands for (the first row of each key takes them). */
  #carry(row: FinishedRow, part: keyof CarriedChanges, keys: ReadonlyArray<{ op?: BillableOperation; target?: LookupTarget; key: string }>): void {
    const carried = this.#options.carried;
    if (!carried) return;
    for (const { op, target, key } of keys) {
      const changes = carried.take(op ?? opOf(target!), key);
      if (changes) ((row.carried ??= {})[part] ??= []).push(...changes);
    }
  }

  #finish(p: KeyedRow, attempt: WaterfallKey, outcome: LookupOutcome): FinishedRow | Promise<FinishedRow> {
    const done = finished(p.cells, p.row, outcome, { lead: leadOf(outcome) });
    if (this.#options.carried) this.#carry(done, 'lead', [p.first, ...(p.rest ?? [])]);
    if (this.#waterfall) {
      done.source = attempt.target.kind;
      if (p.missed) done.missedBy = p.missed;
    }
    return this.#options.extras.length === 0 ? done : this.#withExtras(p, attempt, done);
  }

  /** The row's extra lookups (--with), each once per distinct domain through the store. */
  async #withExtras(p: KeyedRow, attempt: WaterfallKey, base: FinishedRow): Promise<FinishedRow> {
    if (base.status !== 'found' && base.status !== 'not_found') return base;
    const { extras, lookups, domainColumn } = this.#options;
    const lead = base.data.lead;
    const domains = extraDomains(extras, {
      attempt,
      lead,
      domainCell: domainColumn ? fromBytes(p.cells[domainColumn.columnIndex] ?? '') : undefined,
      emailKey: [p.first, ...(p.rest ?? [])].find((k) => k.target.kind === 'email')?.key,
    });
    const domain = domains.mx ?? domains.whois;
    const company = domains.company;
    const ask = (extra: Extra) =>
      domains[extra] === undefined ? undefined : lookups.resolve(extra === 'company' ? 'lookup_domain' : extra, domains[extra], true);
    const [mx, whois, firm] = await Promise.all([ask('mx'), ask('whois'), ask('company')]);
    base.extraBilling = {
      ...(mx ? { mx: mx.billing } : {}),
      ...(whois ? { whois: whois.billing } : {}),
      ...(firm ? { company: firm.billing } : extras.includes('company') ? { company: 'none' as const } : {}),
    };
    if (extras.includes('company')) base.companyStatus = firm?.kind ?? 'skipped';
    base.extraStatus = {
      ...(extras.includes('mx') ? { mx: mx?.kind ?? 'skipped' } : {}),
      ...(extras.includes('whois') ? { whois: whois?.kind ?? 'skipped' } : {}),
      ...(extras.includes('company') ? { company: firm?.kind ?? 'skipped' } : {}),
    };
    base.data = {
      lead,
      ...(mx?.kind === 'found' ? { mx: mx.data as MxResult } : {}),
      ...(whois?.kind === 'found' ? { whois: whois.data as WhoisResult } : {}),
      ...(firm?.kind === 'found' ? { company: (firm.data as { lead?: CompanyLead }).lead } : {}),
    };
    // The --with lookups this run made again, with their earlier answers, beside the row's own.
    for (const [extra, outcome] of [
      ['mx', mx],
      ['whois', whois],
      ['company', firm],
    ] as const) {
      if (outcome && isAnswered(outcome) && outcome.earlier) (base.earlier ??= {})[extra] = outcome.earlier;
      const key = domains[extra];
      if (key !== undefined) this.#carry(base, extra, [{ op: extra === 'company' ? 'lookup_domain' : extra, key }]);
    }
    // An extra that failed makes the row an error (the sidecar says which), as its own lookup would;
    // one with a stale answer keeps it, and says why it was not refreshed, unless the row says so already.
    for (const [name, outcome, of] of [
      ['MX', mx, domain],
      ['Whois', whois, domain],
      ['Company', firm, company],
    ] as const) {
      if (!outcome || (base.status !== 'found' && base.status !== 'not_found')) continue;
      if (isAnswered(outcome)) {
        if (outcome.stale && base.unrefreshed === undefined) unrefreshed(base, outcome.stale, `${name} of ${of}: ${outcome.stale.message}`);
        continue;
      }
      base.status = outcome.kind;
      base.errorCode = outcome.code;
      base.errorMessage = `${name} of ${of}: ${outcome.message}`;
      base.unrefreshed = undefined;
      base.failure = outcome.failure;
    }
    return base;
  }
}

/** A row with no key to look up: malformed (`error`/`invalid_input`) or empty (`skipped`/`no_key`). */
function unplanned(cells: string[], row: number, planned: { kind: 'invalid' | 'no_key'; message: string }): FinishedRow {
  return planned.kind === 'invalid'
    ? { row, cells, status: 'error', billing: 'none', data: {}, errorCode: 'invalid_input', errorMessage: planned.message }
    : { row, cells, status: 'skipped', billing: 'none', data: {}, errorCode: 'no_key', errorMessage: planned.message };
}

function finished(cells: string[], row: number, outcome: LookupOutcome, data: RowData): FinishedRow {
  if (!isAnswered(outcome)) {
    return {
      row,
      cells,
      status: outcome.kind,
      billing: 'none',
      data,
      errorCode: outcome.code,
      errorMessage: outcome.message,
      ...failureOf(outcome),
      ...(outcome.stored ? { stored: true } : {}),
    };
  }
  const done: FinishedRow = { row, cells, status: outcome.kind, billing: outcome.billing, data, cellsRecord: outcome.cellsRecord };
  if (outcome.earlier) done.earlier = { lead: outcome.earlier };
  if (outcome.stale) unrefreshed(done, outcome.stale, outcome.stale.message);
  return done;
}

/** The row keeps a stale answer: why it was not refreshed, in the sidecar's words (`message`: as the row says it). */
function unrefreshed(row: FinishedRow, why: Unanswered, message: string): void {
  row.unrefreshed = why.kind;
  row.errorCode = why.code;
  row.errorMessage = message;
  if (why.failure) row.failure = why.failure;
}

function failureOf(outcome: Unanswered): Pick<FinishedRow, 'failure'> {
  return outcome.failure ? { failure: outcome.failure } : {};
}

function leadOf(outcome: LookupOutcome): Lead | CompanyLead | undefined {
  return isAnswered(outcome) ? ((outcome.data as { lead?: Lead } | undefined)?.lead ?? undefined) : undefined;
}
