// Reads and plans every row as a run would and checks each distinct key against the store: the
// dry run's counts, and, cut short, what a run needs to know before it starts (whether it has any
// lookup to make at all, and whether it may spend more than the confirmation threshold).
import type { BillableOperation } from '../core/kinds.js';
import { fromBytes } from '../read/index.js';
import { noteExtras, type KeyCensus, type RowExtras } from '../plan/key-census.js';
import { isComplete } from '../plan/complete-row.js';
import { domainColumnFor } from '../plan/targets.js';
import { keyWarning } from '../plan/key-warning.js';
import { LOOKUP_OPERATION, planWaterfallRow, type LookupKind } from '../plan/plan.js';
import type { Extra } from './enrich-options.js';
import { runColumns } from './run-columns.js';
import { readKeyed } from './keyed-input.js';
import type { EnrichSettings } from './settings.js';

export interface RowCounts {
  rows: number;
  invalidRows: number;
  noKeyRows: number;
  completeRows: number;
  lookupsSaved: number;
  lookup: { kind: LookupKind; column: string; with: Extra[]; order: Array<{ kind: LookupKind; column: string }> };
  distinctKeys: Record<string, number>;
  alreadyKnown: Record<string, number>;
  lookupsToMake: number;
  lookupsExpected: number;
  warning: string | undefined;
  /** The count stopped once more than `stopAbove` lookups were needed: the figures are of the rows read until then. */
  cut: boolean;
  /** The count stopped at `maxRows`, every key stored until then: the rest of the file was not read. */
  cutAtRows: boolean;
}

export interface CountOptions {
  /** Stop reading once the lookups to make exceed this (a question answered early, not a whole count). */
  stopAbove?: number | undefined;
  /** Stop reading after about this many rows (a whole batch is counted), the question left open. */
  maxRows?: number | undefined;
  /** A count before the run itself: its lines about the file (title lines, footer, --limit) are the run's to say, once. */
  quiet?: boolean | undefined;
}

/** The store's answers as the run sees them (its service, --max-age, --refresh): a fresh census of them at each call. */
export type StoredAnswers = () => KeyCensus;

export async function countRows(settings: EnrichSettings, stored: StoredAnswers, options: CountOptions = {}): Promise<RowCounts> {
  const quiet = () => {};
  const warn = options.quiet ? quiet : settings.warn;
  const { targets, headerLine, source } = await readKeyed(settings, { notice: options.quiet ? quiet : settings.notice, warn });
  const extras = settings.with;
  const domainColumn = headerLine ? domainColumnFor(source.header.map(fromBytes), targets, extras) : undefined;
  const census = stored();
  // --fill / --only-missing: the rows complete already are counted apart; what they save is what a
  // census of every row would look up beyond the census of the rows looked up.
  const { complete } = runColumns(settings, targets, source.header.map(fromBytes));
  const everyRow = complete ? stored() : undefined;
  const counts = { rows: 0, invalidRows: 0, noKeyRows: 0, completeRows: 0 };
  let cut = false;
  let cutAtRows = false;
  try {
    for await (const batch of source.batches) {
      for (const cells of batch) {
        const planned = planWaterfallRow(cells, targets, source.header.length, settings.shard);
        if (planned.kind === 'elsewhere') continue;
        counts.rows += 1;
        const isDone = complete !== undefined && isComplete(cells, complete);
        if (isDone) counts.completeRows += 1;
        if (planned.kind !== 'keys') {
          if (isDone) continue;
          if (planned.kind === 'invalid') counts.invalidRows += 1;
          else counts.noKeyRows += 1;
          continue;
        }
        const row = { extras, keys: planned.keys, domainCell: domainColumn ? fromBytes(cells[domainColumn.columnIndex] ?? '') : undefined };
        for (const each of isDone ? [everyRow!] : everyRow ? [census, everyRow] : [census]) walkRow(each, row);
      }
      if (options.stopAbove !== undefined && census.worst > options.stopAbove) {
        cut = true;
        break;
      }
      if (options.maxRows !== undefined && counts.rows >= options.maxRows) {
        cutAtRows = true;
        break;
      }
    }
  } finally {
    if (cut || cutAtRows) source.destroy();
  }
  return {
    ...counts,
    lookup: {
      kind: targets[0]!.kind,
      column: targets[0]!.columnName,
      with: extras,
      order: targets.map((t) => ({ kind: t.kind, column: t.columnName })),
    },
    distinctKeys: census.distinct(),
    alreadyKnown: census.known,
    lookupsToMake: census.worst,
    lookupsSaved: everyRow ? everyRow.worst - census.worst : 0,
    lookupsExpected: census.expected,
    warning: keyWarning(counts, source, targets),
    cut,
    cutAtRows,
  };
}

/** A row's keys through the census (the store's answers first), --with included. */
function walkRow(census: KeyCensus, row: RowExtras): void {
  const answering = census.walk(row.keys.map((attempt) => ({ op: LOOKUP_OPERATION[attempt.target.kind] as BillableOperation, key: attempt.key, attempt })));
  if (row.extras.length > 0) noteExtras(census, row, answering);
}
