// The one metrics object of a run: the request path counts requests, retries and 429s into it,
// the run counts rows into it as they are written; the progress line and the summary read it.
import type { RequestCounters } from '../lookup/request-path/request.js';
import type { LookupKind } from '../plan/normalize.js';
import type { Billing, FinishedRow, RowStatus } from './finished-row.js';

export class RunMetrics implements RequestCounters {
  readonly startedAt = Date.now();
  requests = 0;
  retries = 0;
  rateLimited = 0;
  /** Rows read (parsed) so far: ahead of `rows` by the rows in the window. */
  rowsRead = 0;
  /** Rows written. */
  rows = 0;
  /** In a file read as UTF-8: cells holding bytes that are not UTF-8 (copied through unchanged). */
  readonly invalidUtf8 = { cells: 0 };
  /** Rows written whose answer came from a request, not from the store. */
  rowsLookedUp = 0;
  readonly status: Record<RowStatus, number> = { found: 0, not_found: 0, error: 0, skipped: 0 };
  readonly billing: Record<Billing, number> = { charged: 0, free: 0, cached: 0, duplicate: 0, none: 0 };
  readonly errorCodes: Record<string, number> = {};
  /** How each --with operation was billed, row by row (mx_billing, whois_billing, company_billing). */
  readonly extraBilling: Partial<Record<'mx' | 'whois' | 'company', Record<Billing, number>>> = {};
  /** Rows found, per lookup kind (with one kind, all of them under it). */
  readonly foundBy: Partial<Record<LookupKind, number>> = {};
  /** The one lookup kind of a run that is not a waterfall (its rows carry no `source`). */
  kind: LookupKind | undefined;

  /** A row was written. */
  count(row: FinishedRow): void {
    this.rows += 1;
    this.status[row.status] += 1;
    this.billing[row.billing] += 1;
    if (row.billing === 'charged' || row.billing === 'free' || (row.status === 'error' && row.errorCode !== 'invalid_input')) this.rowsLookedUp += 1;
    if (row.extraBilling) {
      for (const [extra, billing] of Object.entries(row.extraBilling) as Array<['mx' | 'whois' | 'company', Billing]>) {
        const counts = (this.extraBilling[extra] ??= { charged: 0, free: 0, cached: 0, duplicate: 0, none: 0 });
        counts[billing] += 1;
      }
    }
    if (row.status === 'found') {
      const kind = row.source ?? this.kind;
      if (kind) this.foundBy[kind] = (this.foundBy[kind] ?? 0) + 1;
    }
    if (row.errorCode) this.errorCodes[row.errorCode] = (this.errorCodes[row.errorCode] ?? 0) + 1;
  }

  get elapsedMs(): number {
    return Date.now() - this.startedAt;
  }
}
