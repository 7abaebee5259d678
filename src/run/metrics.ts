// What a run has done with its rows: read, written, by status, billing and error code. Owned by
// the run loop (run-rows.ts), which counts each batch as it is read and each row as it is
// written; everyone else reads it (the progress line, the summary). What the requests did is the
// request path's own count (RequestPath.counts), not kept here.
import type { LookupKind } from '../core/kinds.js';
import { effectiveStatus, noBilling, type Billing, type FieldChange, type FinishedRow, type RowStatus } from '../core/rows.js';
import { hasInvalidUtf8 } from '../read/index.js';
import type { FillRates } from '../write/fill-rates.js';

type ExtraName = 'mx' | 'whois' | 'company';

/** Of the rows whose answer was compared with an earlier one (a key looked up again): how many changed, and how many per field. */
export interface ChangeCounts {
  compared: number;
  rows: number;
  fields: Record<string, number>;
}

/** Error codes that are the input's own (docs/cli-contract.md, "The file's problems are not the API's"). */
export const FILE_PROBLEMS: ReadonlySet<string> = new Set(['invalid_input', 'bad_request']);

/**
 * Whether a row was looked up: its answer came from a request of this run (charged or free), or
 * its request failed (an error not stored, nor the input's malformed key; a stale answer's refresh
 * that failed too). The one rule for the summary's rows looked up and for --max-errors' share of them.
 */
export function lookedUp(row: FinishedRow): boolean {
  return row.billing === 'charged' || row.billing === 'free' || (effectiveStatus(row) === 'error' && row.errorCode !== 'invalid_input' && !row.stored);
}

/**
 * The rows written with a stale answer this run could not refresh (docs/cli-contract.md, "A stale
 * answer is better than none"): how many, how many of them because the refresh failed (errors, for
 * the exit status), and per code of what stopped the refresh.
 */
export interface StaleCounts {
  rows: number;
  errors: number;
  reasons: Record<string, number>;
}

export class RunMetrics {
  /** When the run began (before its start-up reads): the summary's elapsed time counts from here. */
  readonly startedAt: number;
  /** The one lookup kind of a run that is not a waterfall (its rows carry no `source`). */
  readonly #kind: LookupKind | undefined;
  #rowsRead = 0;
  #rowsPlanned = 0;
  #rows = 0;
  #rowsLookedUp = 0;
  #invalidUtf8Cells = 0;
  #fileErrors = 0;
  readonly #status: Record<RowStatus, number> = { found: 0, not_found: 0, error: 0, skipped: 0 };
  readonly #billing: Record<Billing, number> = noBilling();
  readonly #errorCodes: Record<string, number> = {};
  readonly #stale: StaleCounts = { rows: 0, errors: 0, reasons: {} };
  readonly #skipReasons: Record<string, number> = {};
  readonly #extraBilling: Partial<Record<ExtraName, Record<Billing, number>>> = {};
  readonly #foundBy: Partial<Record<LookupKind, number>> = {};
  /** Rows a kind answered (found or not found), per kind: the denominator of its match rate. */
  readonly #answeredBy: Partial<Record<LookupKind, number>> = {};
  readonly #extraStatus: Partial<Record<ExtraName, Record<RowStatus, number>>> = {};
  /** --fill: cells filled, per input column index. */
  readonly #filled = new Map<number, number>();
  readonly #fillRates: FillRates | undefined;
  readonly #changed: ChangeCounts = { compared: 0, rows: 0, fields: {} };

  constructor(kind: LookupKind | undefined, startedAt: number = Date.now(), fillRates?: FillRates) {
    this.#kind = kind;
    this.startedAt = startedAt;
    this.#fillRates = fillRates;
  }

  /**
   * A batch was read. `utf8` when the input is read as UTF-8 and has shown bytes that are not:
   * then its cells holding such bytes (copied through unchanged) are counted for the summary.
   */
  read(batch: readonly string[][], utf8: boolean): void {
    this.#rowsRead += batch.length;
    if (!utf8) return;
    for (const cells of batch) for (const cell of cells) if (hasInvalidUtf8(cell)) this.#invalidUtf8Cells += 1;
  }

  /** Rows of a batch this run will write (another shard's rows are left out). */
  planned(rows: number): void {
    this.#rowsPlanned += rows;
  }

  /** A row was written. */
  count(row: FinishedRow): void {
    this.#rows += 1;
    this.#status[row.status] += 1;
    this.#billing[row.billing] += 1;
    if (lookedUp(row)) this.#rowsLookedUp += 1;
    if (row.extraBilling) {
      for (const [extra, billing] of Object.entries(row.extraBilling) as Array<[ExtraName, Billing]>) {
        const counts = (this.#extraBilling[extra] ??= noBilling());
        counts[billing] += 1;
      }
    }
    if (row.status === 'found' || row.status === 'not_found') this.#answered(row);
    if (row.extraStatus) {
      for (const [extra, status] of Object.entries(row.extraStatus) as Array<[ExtraName, RowStatus]>) {
        (this.#extraStatus[extra] ??= { found: 0, not_found: 0, error: 0, skipped: 0 })[status] += 1;
      }
    }
    if (row.filled) for (const column of row.filled.keys()) this.#filled.set(column, (this.#filled.get(column) ?? 0) + 1);
    if (row.changes) this.#compared(row.changes);
    if (row.unrefreshed) this.#staleRow(row.unrefreshed, row.errorCode ?? '');
    else if (row.errorCode) this.#errorCodes[row.errorCode] = (this.#errorCodes[row.errorCode] ?? 0) + 1;
    if (row.errorCode && row.status === 'skipped') this.#skipReasons[row.errorCode] = (this.#skipReasons[row.errorCode] ?? 0) + 1;
    if (row.status === 'error' && FILE_PROBLEMS.has(row.errorCode ?? '')) this.#fileErrors += 1;
  }

  #staleRow(unrefreshed: 'error' | 'skipped', code: string): void {
    const stale = this.#stale;
    stale.rows += 1;
    if (unrefreshed === 'error') stale.errors += 1;
    stale.reasons[code] = (stale.reasons[code] ?? 0) + 1;
  }

  /** The rows written with a stale answer this run could not refresh. */
  get stale(): Readonly<StaleCounts> {
    return this.#stale;
  }

  /** A row with an answer: per kind, answered and found (a waterfall's misses before it too), and its fill rates. */
  #answered(row: FinishedRow): void {
    const kind = row.source ?? this.#kind;
    if (kind) this.#answeredBy[kind] = (this.#answeredBy[kind] ?? 0) + 1;
    if (row.missedBy) for (const missed of row.missedBy) this.#answeredBy[missed] = (this.#answeredBy[missed] ?? 0) + 1;
    if (row.status !== 'found') return;
    if (kind) this.#foundBy[kind] = (this.#foundBy[kind] ?? 0) + 1;
    this.#fillRates?.count(row);
  }

  /** A row compared with its earlier answers: a field that changed for two of its lookups counts once. */
  #compared(changes: readonly FieldChange[]): void {
    const changed = this.#changed;
    changed.compared += 1;
    if (changes.length > 0) changed.rows += 1;
    for (const field of new Set(changes.map((change) => change.field))) changed.fields[field] = (changed.fields[field] ?? 0) + 1;
  }

  /** What changed since the earlier answers (summary: `changed`). */
  get changed(): Readonly<ChangeCounts> {
    return this.#changed;
  }

  /** Rows in `error` for the file's own problem: a malformed key, or one the API refused (exit 5). */
  get fileErrors(): number {
    return this.#fileErrors;
  }

  /** Rows read (parsed) so far: ahead of `rows` by the rows in the window. */
  get rowsRead(): number {
    return this.#rowsRead;
  }
  /** Rows read that this run writes (with --shard, its own shard's). */
  get rowsPlanned(): number {
    return this.#rowsPlanned;
  }
  /** Rows written. */
  get rows(): number {
    return this.#rows;
  }
  /** Rows written whose answer came from a request, not from the store. */
  get rowsLookedUp(): number {
    return this.#rowsLookedUp;
  }
  /** In a file read as UTF-8: cells holding bytes that are not UTF-8 (copied through unchanged). */
  get invalidUtf8Cells(): number {
    return this.#invalidUtf8Cells;
  }
  get status(): Readonly<Record<RowStatus, number>> {
    return this.#status;
  }
  get billing(): Readonly<Record<Billing, number>> {
    return this.#billing;
  }
  get errorCodes(): Readonly<Record<string, number>> {
    return this.#errorCodes;
  }
  /** The codes of the skipped rows alone (no_key, complete, credit_reserve, ...): reasons, not errors. */
  get skipReasons(): Readonly<Record<string, number>> {
    return this.#skipReasons;
  }
  /** How each --with operation was billed, row by row (mx_billing, whois_billing, company_billing). */
  get extraBilling(): Readonly<Partial<Record<ExtraName, Record<Billing, number>>>> {
    return this.#extraBilling;
  }
  /** Rows found, per lookup kind (with one kind, all of them under it). */
  get foundBy(): Readonly<Partial<Record<LookupKind, number>>> {
    return this.#foundBy;
  }

  /** Rows each kind answered, found or not (a waterfall row counts under every kind that answered it). */
  get answeredBy(): Readonly<Partial<Record<LookupKind, number>>> {
    return this.#answeredBy;
  }
  /** How each --with operation went, of the rows whose own lookup answered. */
  get extraStatus(): Readonly<Partial<Record<ExtraName, Record<RowStatus, number>>>> {
    return this.#extraStatus;
  }
  /** --fill: cells filled, per input column index. */
  get filled(): ReadonlyMap<number, number> {
    return this.#filled;
  }
  /** Found rows holding a value, per added column (without --prefix). */
  get fillRates(): Record<string, number> {
    return this.#fillRates?.counts ?? {};
  }

  get elapsedMs(): number {
    return Date.now() - this.startedAt;
  }
}
