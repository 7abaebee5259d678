// One input row once the run is done with it: what the look-up step hands to the writer and the
// run's tally. Shared by lookup/, write/ and run/, so it lives below all three.
import type { CompanyLead, Lead, MxResult, WhoisResult } from '../api/types.js';
import type { LookupKind } from './kinds.js';

export type RowStatus = 'found' | 'not_found' | 'error' | 'skipped';

/** How a row's answer was obtained (`lead_billing`, docs/reference.md, "Billing"). */
export type Billing = 'charged' | 'free' | 'cached' | 'duplicate' | 'none';

/** The API's answers for one row, as the writer turns them into added columns. */
export interface RowData {
  lead?: Lead | CompanyLead | undefined;
  mx?: MxResult | undefined;
  whois?: WhoisResult | undefined;
  /** With --with company: the company found by domain (interface 4.3). */
  company?: CompanyLead | undefined;
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
  errorCode?: string | undefined;
  errorMessage?: string | undefined;
  /** An `error` the store answered (a key refused before): no request of this run made it. */
  stored?: true | undefined;
}

/**
 * Whether a row goes to the error sidecar: what a person or a re-run must act on (docs/cli-contract.md,
 * "The error sidecar"): errors and skipped rows, but not rows skipped as `complete` (--fill,
 * --only-missing: done already, only counted in the summary).
 */
export function needsAction(row: Pick<FinishedRow, 'status' | 'errorCode'>): boolean {
  return row.status === 'error' || (row.status === 'skipped' && row.errorCode !== 'complete');
}
