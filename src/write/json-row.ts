import type { FinishedRow } from '../core/rows.js';
import { fromBytes } from '../read/index.js';
import { changedCell } from './columns.js';

/**
 * `--format jsonl`: the input as an object (duplicate header names get _2, _3; --fill's values in
 * place) and the full results; with --changes (`changed`), `lead_changed` as the CSV has it; `error`,
 * `reason` or `stale` (why a stale answer was not refreshed) with the sidecar's code and message.
 */
export function jsonRow(row: FinishedRow, header: string[], changed = false): Record<string, unknown> {
  const input: Record<string, string> = {};
  // --fill: `input` holds the filled cells, and `filled` names them (by their key in `input`).
  const filled: Record<string, string> = {};
  header.forEach((name, i) => {
    let key = fromBytes(name);
    for (let n = 2; Object.hasOwn(input, key); n += 1) key = `${fromBytes(name)}_${n}`;
    const value = row.filled?.get(i);
    input[key] = value ?? fromBytes(row.cells[i] ?? '');
    if (value !== undefined) filled[key] = value;
  });
  return {
    row: row.row,
    lead_status: row.status,
    ...(row.source === undefined ? {} : { lead_source: row.source }),
    lead_billing: row.billing,
    ...(changed ? { lead_changed: changedCell(row) } : {}),
    ...(row.extraBilling?.mx === undefined ? {} : { mx_billing: row.extraBilling.mx }),
    ...(row.extraBilling?.whois === undefined ? {} : { whois_billing: row.extraBilling.whois }),
    ...(row.companyStatus === undefined ? {} : { company_status: row.companyStatus }),
    ...(row.extraBilling?.company === undefined ? {} : { company_billing: row.extraBilling.company }),
    input,
    ...(row.filled ? { filled } : {}),
    ...(row.data.lead === undefined ? {} : { lead: row.data.lead }),
    ...(row.data.mx === undefined ? {} : { mx: row.data.mx }),
    ...(row.data.whois === undefined ? {} : { whois: row.data.whois }),
    ...(row.data.company === undefined ? {} : { company: row.data.company }),
    // A skipped row (an empty key, a complete one, the reserve) is no error: it says its reason; a
    // row written with a stale answer says why it was not refreshed.
    ...(row.errorCode === undefined
      ? {}
      : { [row.unrefreshed ? 'stale' : row.status === 'skipped' ? 'reason' : 'error']: { code: row.errorCode, message: row.errorMessage ?? '' } }),
  };
}
