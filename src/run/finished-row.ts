// One input row once the run is done with it: what the writer writes and the tally counts.
import type { Billing } from '../lookup/outcome.js';
import type { LookupKind } from '../plan/normalize.js';
import type { RowData } from '../write/columns.js';

export type { Billing } from '../lookup/outcome.js';

export type RowStatus = 'found' | 'not_found' | 'error' | 'skipped';

export interface FinishedRow {
  /** 1-based data row number in the input (cli-contract.md, "The error sidecar"). */
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
  errorCode?: string | undefined;
  errorMessage?: string | undefined;
}

