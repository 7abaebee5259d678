// One input row once the run is done with it: what the look-up step hands to the writer and the
// run's tally. Shared by lookup/, write/ and run/, so it lives below all three.
import type { ErrorCode, LeadEnrichError } from '../api/errors.js';
import type { CompanyLead, Lead, MxResult, Operation, WhoisResult } from '../api/types.js';
import type { LookupKind } from './kinds.js';

export type RowStatus = 'found' | 'not_found' | 'error' | 'skipped';

/**
 * How a row's answer was obtained (`lead_billing`, docs/reference.md, "Billing"). `stale`: the
 * stored answer, older than --max-age, that this run could not look up again (docs/cli-contract.md,
 * "A stale answer is better than none").
 */
export type Billing = 'charged' | 'free' | 'cached' | 'duplicate' | 'stale' | 'none';

/** Each billing word at 0: a tally's start. */
export function noBilling(): Record<Billing, number> {
  return { charged: 0, free: 0, cached: 0, duplicate: 0, stale: 0, none: 0 };
}

/** The API's answers for one row, as the writer turns them into added columns. */
export interface RowData {
  lead?: Lead | CompanyLead | undefined;
  mx?: MxResult | undefined;
  whois?: WhoisResult | undefined;
  /** With --with company: the company found by domain (interface 4.3). */
  company?: CompanyLead | undefined;
}

/**
 * The answer a key had before this run looked it up again (older than --max-age, or --refresh):
 * what the new one is compared with (docs/cli-contract.md, "What changed since the last answer").
 */
export interface EarlierAnswer {
  /** The operation and key looked up again (the row's own, or the domain of a --with lookup). */
  op: Operation;
  key: string;
  /** Whether the earlier answer found something, and whether this run's does. */
  found: boolean;
  foundNow: boolean;
  /** The API's `data` then; undefined when `same`. */
  data: unknown;
  /** When the earlier answer was fetched, and when this run's was (epoch ms). */
  fetchedAt: number;
  refetchedAt: number;
  /** The new answer is the same answer: nothing can have changed. */
  same?: boolean | undefined;
}

/** A row's lookups looked up again by this run, each with its earlier answer. */
export type EarlierAnswers = { [part in 'lead' | 'mx' | 'whois' | 'company']?: EarlierAnswer | undefined };

/**
 * A change an earlier run stored and no --changes file has listed yet (docs/cli-contract.md,
 * "Reported once, never absorbed"): one answer of a key (`data`, fetched at `fetchedAt`) and the
 * answer that replaced it (`dataNow`, fetched at `refetchedAt`).
 */
export interface CarriedChange extends EarlierAnswer {
  dataNow: unknown;
  /** False when either answer cannot be compared (a key the API refused, data that is not JSON): no line, but listed all the same. */
  comparable: boolean;
}

/** The carried changes of the keys a row stands for, by the lookup they belong to. */
export type CarriedChanges = { [part in keyof EarlierAnswers]?: CarriedChange[] | undefined };

/** One field of a row whose cell changed since the earlier answer (a line of --changes). */
export interface FieldChange {
  /** `status` (found became not found, or the reverse), else the added column's name as --fields names it. */
  field: string;
  key: string;
  /** The cells, as written (before formula escaping). */
  before: string;
  after: string;
  beforeFetchedAt: number;
  afterFetchedAt: number;
}

export interface FinishedRow {
  /** 1-based data row number in the input (docs/cli-contract.md, "The error sidecar"). */
  row: number;
  /** Input cells, as byte strings. */
  cells: string[];
  status: RowStatus;
  billing: Billing;
  data: RowData;
  /**
   * The lookup's own added columns as the store keeps them (write/stored-cells.ts: one CSV record,
   * comma-separated, formula-escaped), when the run asked for cells instead of parsed answers;
   * `data` then holds no lead.
   */
  cellsRecord?: string | undefined;
  /** In a waterfall: the kind that answered, or the last one tried (`lead_source`). */
  source?: LookupKind | undefined;
  /** What each --with operation cost (mx_billing, whois_billing). */
  extraBilling?: { mx?: Billing; whois?: Billing; company?: Billing } | undefined;
  /** With --with company: how the company lookup went (`skipped`: no domain, or a free mail one). */
  companyStatus?: RowStatus | undefined;
  /** How each --with operation went, for the rows whose own lookup answered (the report's --with statuses). */
  extraStatus?: { mx?: RowStatus; whois?: RowStatus; company?: RowStatus } | undefined;
  /** In a waterfall: the kinds that answered `not_found` before the row's last one (the report's match rate per kind). */
  missedBy?: LookupKind[] | undefined;
  /**
   * --fill: the input cells filled from the answer, by column index, as text (not formula-escaped:
   * the CSV writer escapes them as it does added cells). `cells` stay as read (the sidecar's).
   */
  filled?: Map<number, string> | undefined;
  /**
   * Why the row has no answer (`error`, `skipped`), or, with `unrefreshed`, why a stale answer it
   * carries was not refreshed (the sidecar's `error_code` and `error_message`).
   */
  errorCode?: ErrorCode | undefined;
  errorMessage?: string | undefined;
  /** The API's failure behind `errorCode`, when there was one: its class, `status` and `apiCode` (enrichRows' `error`). */
  failure?: LeadEnrichError | undefined;
  /**
   * Written with a stored answer older than --max-age (`lead_billing` `stale`, or a --with
   * lookup's billing) that this run could not refresh: what the row would have been without it,
   * `error` (the refresh failed) or `skipped` (a stop: budget, reserve, daily limit, patience,
   * --max-errors, interrupt). `errorCode` says why; `status` is the stored answer's.
   */
  unrefreshed?: 'error' | 'skipped' | undefined;
  /** An `error` the store answered (a key refused before): no request of this run made it. */
  stored?: true | undefined;
  /** The lookups of this row that this run looked up again, and what they answered before. */
  earlier?: EarlierAnswers | undefined;
  /** Set before the row is counted and written, when it has `earlier`: its changed fields ([] when none). */
  changes?: FieldChange[] | undefined;
  /** --changes: the changes of this row's keys that earlier runs stored and no --changes file listed. */
  carried?: CarriedChanges | undefined;
  /** Their changed fields, as this run's columns write them: lines of the --changes file, not of `lead_changed`. */
  carriedChanges?: FieldChange[] | undefined;
}

/**
 * Whether a row goes to the error sidecar: what a person or a re-run must act on (docs/cli-contract.md,
 * "The error sidecar"): errors and skipped rows, but not rows skipped as `complete` (--fill,
 * --only-missing: done already, only counted in the summary); and rows written with a stale answer
 * that the run could not refresh (a re-run refreshes them).
 */
export function needsAction(row: Pick<FinishedRow, 'status' | 'errorCode' | 'unrefreshed'>): boolean {
  return row.status === 'error' || (row.status === 'skipped' && row.errorCode !== 'complete') || row.unrefreshed !== undefined;
}

/** What a row counts as for the exit status and --max-errors: a stale row as the lookup it could not make. */
export function effectiveStatus(row: Pick<FinishedRow, 'status' | 'unrefreshed'>): RowStatus {
  return row.unrefreshed ?? row.status;
}
