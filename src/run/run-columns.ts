// The columns a run writes and fills, and which rows it need not look up (--fill, --only-missing):
// told from the input's header before any request, by the run and its dry run alike.
import type { LookupTarget } from '../plan/plan.js';
import { columnKind } from '../plan/targets.js';
import { checkColumnChoice } from '../write/column-choice.js';
import { addedColumnNames, BOOKKEEPING_COLUMNS, columnsFor, type ColumnFlags, type ColumnSet } from '../write/columns.js';
import { FillRates } from '../write/fill-rates.js';
import { AnswerChanges } from '../write/answer-changes.js';
import { CellFill, fillTargets } from '../write/cell-fill.js';
import { completeRule, type CompleteRule } from '../plan/complete-row.js';
import { inputColumnIndex } from '../plan/named-columns.js';
import { optionWord } from '../options/option-table.js';
import type { EnrichSettings } from './settings.js';

/** The columns a run writes and fills, and which rows it need not look up: all checked before any request. */
export interface RunColumns {
  columns: ColumnSet;
  /** --fill. */
  fill: CellFill | undefined;
  /** --fill (without --overwrite) and --only-missing: rows complete already. */
  complete: CompleteRule | undefined;
  /** The fill rate of each column the answers give: those written, and those --fill reads. */
  fillRates: FillRates;
  /** What changed in the answers of keys looked up again, compared as the columns are written (with or without --changes). */
  changes: AnswerChanges;
}

/** The columns the run adds and fills, checked against the input's header (before any request). */
export function runColumns(settings: EnrichSettings, targets: readonly LookupTarget[], header: readonly string[]): RunColumns {
  const kind = columnKind(targets);
  const flags: ColumnFlags = {
    mx: settings.with.includes('mx'),
    whois: settings.with.includes('whois'),
    company: settings.with.includes('company'),
    source: targets.length > 1,
  };
  const choice = { prefix: settings.prefix, fields: settings.fields };
  // --changes adds lead_changed to the output alone: no field fills from it, nor has a fill rate.
  const written = { ...flags, changed: settings.changes !== undefined };
  checkColumnChoice(kind, written, choice, header);
  const fill = settings.fill ? new CellFill(fillTargets(settings.fill, header, kind, flags, settings.prefix), kind, flags, settings.overwrite) : undefined;
  // A row is complete when every cell it could fill, and every --only-missing cell, holds a value.
  const needed = new Map<number, string>((fill?.completeColumns ?? []).map((t) => [t.column, t.columnName]));
  for (const name of settings.onlyMissing ?? []) needed.set(inputColumnIndex(header, name, optionWord('onlyMissing')), name);
  const complete = needed.size > 0 ? completeRule([...needed.keys()], [...needed.values()]) : undefined;
  const answered = (settings.fields ?? addedColumnNames(kind, flags)).filter((name) => !BOOKKEEPING_COLUMNS.has(name));
  const rated = [...new Set([...answered, ...(fill?.targets.map((t) => t.field) ?? [])])];
  const columns = columnsFor(kind, written, choice);
  return { columns, fill, complete, fillRates: new FillRates(kind, flags, rated), changes: new AnswerChanges(columns, fill) };
}
