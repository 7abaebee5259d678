// What changed in a row's answers since the earlier ones (docs/cli-contract.md, "What changed since
// the last answer"). For each lookup of the row that this run looked up again (the row's own key,
// and the domain of a --with lookup), its new answer against the one the store held before:
// found became not found or the reverse is the field `status` (`company_status` for --with
// company); otherwise each column the run writes is compared as its cell is written, by rendering
// the row a second time with the earlier answer in place. Fields are named as --fields names the
// columns, without --prefix. A row whose every answer came from the store has no `changes`.
import type { CompanyLead, MxResult, WhoisResult } from '../api/types.js';
import type { EarlierAnswer, EarlierAnswers, FieldChange, FinishedRow, RowData } from '../core/rows.js';
import { BOOKKEEPING_COLUMNS, type ColumnSet } from './columns.js';
import { escapeFormula } from './csv-lines.js';

type Part = keyof EarlierAnswers;

/** The row's own lookup first, then the --with lookups, as the columns come. */
const PARTS: readonly Part[] = ['lead', 'mx', 'whois', 'company'];

/** The field that says a lookup went from found to not found, or back. */
const STATUS_FIELDS: Partial<Record<Part, string>> = { lead: 'status', company: 'company_status' };

const statusWord = (found: boolean) => (found ? 'found' : 'not_found');

/** An earlier answer where the row keeps that lookup's answer (batch-lookups.ts: a --with answer only when found). */
function partData(part: Part, earlier: EarlierAnswer): RowData[Part] {
  const data = earlier.data as { lead?: unknown } | undefined;
  if (part === 'lead') return data?.lead as RowData['lead'];
  if (!earlier.found) return undefined;
  return part === 'company' ? (data?.lead as CompanyLead) : (earlier.data as MxResult & WhoisResult);
}

export class AnswerChanges {
  readonly #columns: ColumnSet;
  /** The columns that hold what an answer says (not how the run went). */
  readonly #compared: number[];

  constructor(columns: ColumnSet) {
    this.#columns = columns;
    this.#compared = columns.fields.flatMap((field, i) => (BOOKKEEPING_COLUMNS.has(field) ? [] : [i]));
  }

  /** Sets `row.changes` on a row that has earlier answers: its changed fields, [] when none. */
  apply(row: FinishedRow): void {
    const earlier = row.earlier;
    if (earlier === undefined) return;
    const changes: FieldChange[] = [];
    let now: string[] | undefined;
    for (const part of PARTS) {
      const then = earlier[part];
      if (then === undefined || then.same) continue;
      const stamp = { key: then.key, beforeFetchedAt: then.fetchedAt, afterFetchedAt: then.refetchedAt };
      const status = STATUS_FIELDS[part];
      if (status !== undefined && then.found !== then.foundNow) {
        changes.push({ field: status, ...stamp, before: statusWord(then.found), after: statusWord(then.foundNow) });
        continue;
      }
      now ??= this.#columns.values(row);
      // The row as it would have been written then: only this lookup's answer differs.
      const before = this.#columns.values({ ...row, cellsRecord: part === 'lead' ? undefined : row.cellsRecord, data: { ...row.data, [part]: partData(part, then) } });
      for (const i of this.#compared) {
        // A stored record's cells are formula-escaped already: compared as they are written.
        if (escapeFormula(before[i]!) !== escapeFormula(now[i]!)) changes.push({ field: this.#columns.fields[i]!, ...stamp, before: before[i]!, after: now[i]! });
      }
    }
    row.changes = changes;
  }
}

/** The header of the --changes file. */
export const CHANGES_HEADER = ['row', 'key', 'field', 'before', 'after', 'before_fetched_at', 'after_fetched_at'];

/** A row's records of the --changes file, the header's cells as text (changes-file.ts writes them in the file's format). */
export function changeRecords(row: FinishedRow): string[][] {
  const iso = (ms: number) => new Date(ms).toISOString();
  return (row.changes ?? []).map((c) => [String(row.row), c.key, c.field, c.before, c.after, iso(c.beforeFetchedAt), iso(c.afterFetchedAt)]);
}
