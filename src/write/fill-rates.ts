// The fill rate of each added column: of the rows found, how many hold a value in it (docs/cli-contract.md,
// "Report"; the summary's one line). Counted as rows are written, in memory that does not grow
// with the rows. A row whose own columns come as the store's record (cellsRecord) is not split
// into cells for it: its cells are only counted where they lie (countNonEmpty), so the known-rows
// path stays fast.
import type { LookupKind } from '../core/kinds.js';
import type { FinishedRow } from '../core/rows.js';
import { columnsFor, ownColumnNames, type ColumnFlags, type ColumnSet } from './columns.js';
import { countNonEmpty } from './stored-cells.js';

export class FillRates {
  /** The columns counted (without --prefix), in order. */
  readonly names: readonly string[];
  /** Found rows holding a value, per counted column, of the rows that came with parsed answers. */
  readonly #counts: number[];
  /** The same per cell of the stored record (the lookup's own columns), of the rows that came as records. */
  readonly #recordCounts: Float64Array;
  readonly #values: ColumnSet;
  /** Each counted column's place in the stored record, or -1: then a stored record is not enough. */
  readonly #ownIndex: number[];
  readonly #allOwn: boolean;

  constructor(kind: LookupKind, flags: ColumnFlags, names: readonly string[]) {
    this.names = names;
    this.#counts = names.map(() => 0);
    this.#values = columnsFor(kind, flags, { fields: names });
    const own = ownColumnNames(kind);
    this.#ownIndex = names.map((name) => own.indexOf(name));
    this.#allOwn = this.#ownIndex.every((i) => i >= 0);
    // Only as far as the last column counted: the rest of a record need not be looked at.
    this.#recordCounts = new Float64Array(this.#allOwn ? Math.max(0, ...this.#ownIndex.map((i) => i + 1)) : 0);
  }

  /** A found row. */
  count(row: FinishedRow): void {
    if (row.cellsRecord !== undefined && this.#allOwn) {
      countNonEmpty(row.cellsRecord, this.#recordCounts);
      return;
    }
    if (this.names.length === 0) return;
    const values = this.#values.values(row);
    for (let i = 0; i < values.length; i += 1) if (values[i] !== '') this.#counts[i]! += 1;
  }

  /** Found rows holding a value, per column (without --prefix), in order. */
  get counts(): Record<string, number> {
    return Object.fromEntries(this.names.map((name, i) => [name, this.#counts[i]! + (this.#allOwn ? this.#recordCounts[this.#ownIndex[i]!]! : 0)]));
  }
}
