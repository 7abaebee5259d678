// --fill: the input's own columns filled from the answer (docs/cli-contract.md, "Filling the input's own
// columns"). Each pair names an input column and an added column (a field: `lead_title`,
// `company_name`, `mx_primary`, ...), both checked before any request; then, row by row, a blank
// cell (or any cell, with --overwrite) takes the field's value when the answer has one. Several
// pairs may name one column: the first field with a value fills it (`Company=lead_company_name,
// Company=company_name`). A field is named as --fields names it (no --prefix); with --prefix, the
// prefixed name as the run would write it is taken too.
import { ConfigError } from '../api/errors.js';
import type { LookupKind } from '../core/kinds.js';
import type { FinishedRow } from '../core/rows.js';
import { said } from '../api/caller-words.js';
import { didYouMean } from '../options/did-you-mean.js';
import { optionWord } from '../options/option-table.js';
import type { FillPair } from '../options/rules.js';
import { isBlank } from '../plan/complete-row.js';
import { inputColumnIndex } from '../plan/named-columns.js';
import { addedColumnNames, columnsFor, type ColumnFlags, type ColumnSet } from './columns.js';

/** A --fill pair once checked: the input column's index and the field's name without --prefix. */
export interface FillTarget {
  column: number;
  columnName: string;
  field: string;
}

/** The added columns a field may not be: they say how the run went, not what the answer holds. */
const NOT_FIELDS: ReadonlySet<string> = new Set(['lead_status', 'lead_changed']);

/** The field as the run knows it, or a ConfigError with what it may be. */
function fieldOf(field: string, known: readonly string[], prefix: string): string {
  if (known.includes(field)) return field;
  if (prefix !== '' && field.startsWith(prefix) && known.includes(field.slice(prefix.length))) return field.slice(prefix.length);
  const extra = /^(mx|whois|company)_/.exec(field)?.[1];
  // `title` for lead_title, `Company_Name` for company_name: the added column it names without its prefix or case.
  const lower = field.toLowerCase();
  const guess = known.find((name) => name === lower || name === `lead_${lower}`) ?? didYouMean(field, known);
  const hint = extra && !known.some((name) => name.startsWith(`${extra}_`)) ? `: ${addWith(extra)}` : guess ? ` (did you mean ${guess}?)` : '';
  throw new ConfigError(`Invalid option ${optionWord('fill')}: this run adds no column named '${field}'${hint}; a field is one of ${known.join(', ')}`);
}

/** How the reader asks for an extra lookup: `add --with mx`, or `add 'mx' to with`. */
export function addWith(extra: string): string {
  return said({ cli: `add --with ${extra}`, library: `add '${extra}' to with` });
}

/** The pairs checked against the input's header and the run's added columns (before any request). */
export function fillTargets(pairs: readonly FillPair[], header: readonly string[], kind: LookupKind, flags: ColumnFlags, prefix: string): FillTarget[] {
  const known = addedColumnNames(kind, flags).filter((name) => !NOT_FIELDS.has(name));
  return pairs.map(({ column, field }) => ({
    column: inputColumnIndex(header, column, optionWord('fill')),
    columnName: column,
    field: fieldOf(field, known, prefix),
  }));
}

export class CellFill {
  readonly #targets: readonly FillTarget[];
  readonly #overwrite: boolean;
  /** The fields' values for a row, in the order of the targets. */
  readonly #values: ColumnSet;

  constructor(targets: readonly FillTarget[], kind: LookupKind, flags: ColumnFlags, overwrite: boolean) {
    this.#targets = targets;
    this.#overwrite = overwrite;
    this.#values = columnsFor(kind, flags, { fields: targets.map((t) => t.field) });
  }

  get targets(): readonly FillTarget[] {
    return this.#targets;
  }

  /** The input columns a row must hold values in to need no lookup: none with --overwrite. */
  get completeColumns(): FillTarget[] {
    if (this.#overwrite) return [];
    return this.#targets.filter((t, i) => this.#targets.findIndex((u) => u.column === t.column) === i);
  }

  /** Sets `row.filled`: the cells this row's answer fills. */
  apply(row: FinishedRow): void {
    if (row.status === 'skipped') return;
    const filled = this.filledOf(row);
    if (filled) row.filled = filled;
  }

  /** The cells the row's answers fill, by column index (undefined: none), whatever the row's status. */
  filledOf(row: FinishedRow): Map<number, string> | undefined {
    let filled: Map<number, string> | undefined;
    let values: string[] | undefined;
    for (let i = 0; i < this.#targets.length; i += 1) {
      const { column } = this.#targets[i]!;
      if (filled?.has(column) || (!this.#overwrite && !isBlank(row.cells[column]))) continue;
      values ??= this.#values.values(row);
      const value = values[i]!;
      // An answer without the field leaves the cell as it was (with --overwrite too).
      if (value !== '') (filled ??= new Map()).set(column, value);
    }
    return filled;
  }
}
