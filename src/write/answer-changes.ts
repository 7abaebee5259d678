// What changed in a row's answers since the earlier ones (docs/cli-contract.md, "What changed since
// the last answer"). For each lookup of the row that this run looked up again (the row's own key,
// and the domain of a --with lookup), its new answer against the one the store held before:
// found became not found or the reverse is the field `status` (`company_status` for --with
// company); otherwise each column the run writes, and each input cell --fill fills, is compared as
// its cell is written, by rendering the row a second time with the earlier answer in place. Fields
// are named as --fields names the columns, without --prefix; a filled cell by its input column's
// name. A row whose every answer came from the store has no `changes`.
// With --changes, a change an earlier run stored and no file listed (CarriedChange) is compared
// the same way, as this run writes the row where its key stands, or a row of that answer alone
// when no row of the file stands for it.
import type { CompanyLead, MxResult, WhoisResult } from '../api/types.js';
import type { CarriedChange, EarlierAnswer, EarlierAnswers, FieldChange, FinishedRow, RowData } from '../core/rows.js';
import { BOOKKEEPING_COLUMNS, type ColumnSet } from './columns.js';
import type { CellFill } from './cell-fill.js';
import { escapeFormula } from './csv-lines.js';
import { fromBytes } from '../read/index.js';

export type Part = keyof EarlierAnswers;

/** The row's own lookup first, then the --with lookups, as the columns come. */
const PARTS: readonly Part[] = ['lead', 'mx', 'whois', 'company'];

/** The field that says a lookup went from found to not found, or back. */
const STATUS_FIELDS: Partial<Record<Part, string>> = { lead: 'status', company: 'company_status' };

const statusWord = (found: boolean) => (found ? 'found' : 'not_found');

/** An answer where the row keeps that lookup's answer (batch-lookups.ts: a --with answer only when found). */
function partData(part: Part, found: boolean, answer: unknown): RowData[Part] {
  const data = answer as { lead?: unknown } | undefined;
  if (part === 'lead') return data?.lead as RowData['lead'];
  if (!found) return undefined;
  return part === 'company' ? (data?.lead as CompanyLead) : (answer as MxResult & WhoisResult);
}

/**
 * The row as it would have been written with `answer` for one of its lookups: only that lookup's
 * answer differs. Rendered from its data: a stored record (cellsRecord) is the row's own answer as
 * it is now, and a run keeps one only without --with (run/prepare.ts), so only the row's own lookup
 * is compared where it has one.
 */
function rowWith(row: FinishedRow, part: Part, found: boolean, answer: unknown): FinishedRow {
  return { ...row, cellsRecord: undefined, data: { ...row.data, [part]: partData(part, found, answer) } };
}

export class AnswerChanges {
  readonly #columns: ColumnSet;
  readonly #fill: CellFill | undefined;
  /** The columns that hold what an answer says (not how the run went). */
  readonly #compared: number[];
  /** The input columns --fill fills, each once, with its name in the header. */
  readonly #filled: Array<{ column: number; name: string }>;

  constructor(columns: ColumnSet, fill?: CellFill) {
    this.#columns = columns;
    this.#fill = fill;
    this.#compared = columns.fields.flatMap((field, i) => (BOOKKEEPING_COLUMNS.has(field) ? [] : [i]));
    const columnsFilled = new Map((fill?.targets ?? []).map((t) => [t.column, t.columnName]));
    this.#filled = [...columnsFilled].map(([column, name]) => ({ column, name }));
  }

  /**
   * Sets `row.changes` on a row that has earlier answers (its changed fields, [] when none), and
   * `row.carriedChanges` on one that stands for changes no --changes file listed yet.
   */
  apply(row: FinishedRow): void {
    if (row.earlier !== undefined) row.changes = this.#own(row, row.earlier);
    if (row.carried !== undefined)
      row.carriedChanges = PARTS.flatMap((part) => (row.carried![part] ?? []).flatMap((change) => this.#carried(row, part, change)));
  }

  /** The fields carried changes of a key that no row of this run stands for changed: a row of that answer alone. */
  alone(part: Part, changes: readonly CarriedChange[]): FieldChange[] {
    const row: FinishedRow = { row: 0, cells: [], status: 'found', billing: 'none', data: {} };
    return changes.flatMap((change) => this.#carried(row, part, change));
  }

  #own(row: FinishedRow, earlier: EarlierAnswers): FieldChange[] {
    const changes: FieldChange[] = [];
    let now: string[] | undefined;
    for (const part of PARTS) {
      const then = earlier[part];
      if (then === undefined || then.same) continue;
      if (this.#statusChange(changes, part, then)) continue;
      now ??= this.#cells(row);
      this.#compare(changes, then, this.#cells(rowWith(row, part, then.found, then.data)), now);
    }
    return changes;
  }

  #carried(row: FinishedRow, part: Part, change: CarriedChange): FieldChange[] {
    const changes: FieldChange[] = [];
    if (!change.comparable || this.#statusChange(changes, part, change)) return changes;
    this.#compare(
      changes,
      change,
      this.#cells(rowWith(row, part, change.found, change.data)),
      this.#cells(rowWith(row, part, change.foundNow, change.dataNow)),
    );
    return changes;
  }

  /** Found became not found or the reverse, for a lookup that has a status field: that field alone. */
  #statusChange(changes: FieldChange[], part: Part, then: EarlierAnswer): boolean {
    const status = STATUS_FIELDS[part];
    if (status === undefined || then.found === then.foundNow) return false;
    changes.push({ field: status, ...stampOf(then), before: statusWord(then.found), after: statusWord(then.foundNow) });
    return true;
  }

  /** The cells compared, as text: the answer columns written, then the cells --fill fills (the input cell where it fills none). */
  #cells(row: FinishedRow): string[] {
    const values = this.#columns.values(row);
    const cells = this.#compared.map((i) => values[i]!);
    if (this.#filled.length === 0) return cells;
    const filled = this.#fill!.filledOf(row);
    for (const { column } of this.#filled) cells.push(filled?.get(column) ?? fromBytes(row.cells[column] ?? ''));
    return cells;
  }

  #compare(changes: FieldChange[], then: EarlierAnswer, before: string[], after: string[]): void {
    const stamp = stampOf(then);
    const fields = this.#compared.length;
    for (let i = 0; i < before.length; i += 1) {
      // A stored record's cells are formula-escaped already: compared as they are written.
      if (escapeFormula(before[i]!) === escapeFormula(after[i]!)) continue;
      const field = i < fields ? this.#columns.fields[this.#compared[i]!]! : this.#filled[i - fields]!.name;
      changes.push({ field, ...stamp, before: before[i]!, after: after[i]! });
    }
  }
}

function stampOf(then: EarlierAnswer): Pick<FieldChange, 'key' | 'beforeFetchedAt' | 'afterFetchedAt'> {
  return { key: then.key, beforeFetchedAt: then.fetchedAt, afterFetchedAt: then.refetchedAt };
}

/** The header of the --changes file. */
export const CHANGES_HEADER = ['row', 'key', 'field', 'before', 'after', 'before_fetched_at', 'after_fetched_at'];

/** Records of the --changes file for `changes` at data row `row` (0: no row of the file), the header's cells as text (changes-file.ts writes them in the file's format). */
export function changeRecordsOf(row: number, changes: readonly FieldChange[]): string[][] {
  const iso = (ms: number) => new Date(ms).toISOString();
  const at = row === 0 ? '' : String(row);
  return changes.map((c) => [at, c.key, c.field, c.before, c.after, iso(c.beforeFetchedAt), iso(c.afterFetchedAt)]);
}

/** A row's records of the --changes file: its own changes, then the carried ones of its keys. */
export function changeRecords(row: FinishedRow): string[][] {
  return changeRecordsOf(row.row, [...(row.changes ?? []), ...(row.carriedChanges ?? [])]);
}
