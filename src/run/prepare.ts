// The first phase of a run: everything it needs before the first row is read — the input's
// header and key columns and the columns the run adds (checked before any request), the look-up
// side (prepare-lookups.ts: store, request path, account, credits, gate), and the writer. Each
// resource is registered for release as it is made.
import { BatchLookups } from '../lookup/batch-lookups.js';
import { keyColumns } from '../plan/key-columns.js';
import type { LookupTarget } from '../plan/plan.js';
import { columnKind, domainColumnFor } from '../plan/targets.js';
import { fromBytes, openCsv, type CsvSource } from '../read/index.js';
import { checkColumnChoice } from '../write/column-choice.js';
import { columnsFor, type ColumnSet } from '../write/columns.js';
import { RowWriter, type RowSink } from '../write/row-writer.js';
import { prepareLookups, type PreparedLookups } from './prepare-lookups.js';
import type { Resources } from './resources.js';
import type { EnrichSettings } from './settings.js';

export interface PreparedRun extends PreparedLookups, OpenedInput {
  settings: EnrichSettings;
  writer: RowSink;
}

export async function prepare(settings: EnrichSettings, resources: Resources): Promise<PreparedRun> {
  // The input first: a wrong file, column or --fields is the first thing to fix, and costs no request.
  const input = await openInput(settings, resources);
  // A CSV of one lookup kind without --with writes only the answer's own columns: the store may hand
  // them over as cells (no JSON.parse). JSONL, a waterfall and --with need the parsed answers.
  const cellsOnly = settings.format === 'csv' && settings.extras.length === 0 && input.targets.length === 1;
  const lookups = await prepareLookups(settings, resources, cellsOnly ? 'cells' : 'data');
  const writer = openWriter(settings, input);
  resources.onFailure(() => writer.abort());
  return { settings, ...input, ...lookups, writer };
}

export interface OpenedInput {
  source: CsvSource;
  targets: LookupTarget[];
  domainColumn: LookupTarget | undefined;
  headerLine: boolean;
  columns: ColumnSet;
}

/**
 * The input's dialect and header, which columns hold the keys, and the columns the run adds:
 * all of it checked before any request (a wrong --column or --fields is the user's to fix).
 */
async function openInput(settings: EnrichSettings, resources: Resources): Promise<OpenedInput> {
  const read = await openCsv(settings.input, {
    ...(settings.delimiter === undefined ? {} : { delimiter: settings.delimiter }),
    ...(settings.encoding === undefined ? {} : { encoding: settings.encoding }),
    header: settings.header,
  });
  resources.onFailure(() => read.destroy());
  const inputName = typeof settings.input === 'string' ? (settings.input === '-' ? 'standard input' : settings.input) : 'the input stream';
  const { targets, headerLine, source } = await keyColumns(read, { by: settings.by, columns: settings.columns, header: settings.header, inputName, warn: settings.warn });
  const header = source.header.map(fromBytes);
  const domainColumn = headerLine ? domainColumnFor(header, targets, settings.extras) : undefined;
  return { source, targets, domainColumn, headerLine, columns: addedColumns(settings, targets, header) };
}

/** The columns the run adds, checked against the input's header (before any request). */
export function addedColumns(settings: EnrichSettings, targets: readonly LookupTarget[], header: readonly string[]): ColumnSet {
  const flags = { mx: settings.extras.includes('mx'), whois: settings.extras.includes('whois'), company: settings.extras.includes('company'), source: targets.length > 1 };
  const choice = { prefix: settings.prefix, fields: settings.fields };
  checkColumnChoice(columnKind(targets), flags, choice, header);
  return columnsFor(columnKind(targets), flags, choice);
}

function openWriter(settings: EnrichSettings, input: OpenedInput): RowWriter {
  sayWhenTabsInCsv(settings, input.source.delimiter);
  return new RowWriter({
    output: settings.output,
    errors: settings.errors,
    format: settings.format,
    header: input.source.header,
    columns: input.columns,
    recordDelimiter: input.source.recordDelimiter,
    delimiter: input.source.delimiter,
    bom: input.source.outputBom,
    headerLine: input.headerLine,
    ...(settings.stdout ? { stdout: settings.stdout } : {}),
  });
}

/**
 * The outputs use the input's delimiter: a tab-separated input (Excel's "Unicode text") written to
 * a file named `.csv` is said so, since a `.csv` is taken for commas.
 */
function sayWhenTabsInCsv(settings: EnrichSettings, delimiter: string): void {
  if (delimiter !== '\t' || settings.format !== 'csv') return;
  const named = [settings.output, settings.errors].filter((file): file is string => typeof file === 'string' && /\.csv(\.gz)?$/i.test(file));
  if (named.length > 0) settings.warn(`the input is tab-separated, and so are ${named.join(' and ')} (the outputs keep the input's delimiter)`);
}

/** The look-up step of a prepared run's rows (plan → look up), the same for enrich and enrichRows. */
export function batchLookupsFor(run: Pick<PreparedRun, 'settings' | 'source' | 'targets' | 'domainColumn' | 'lookups'>): BatchLookups {
  return new BatchLookups({
    targets: run.targets,
    domainColumn: run.domainColumn,
    extras: run.settings.extras,
    lookups: run.lookups,
    width: run.source.header.length,
    shard: run.settings.shard,
  });
}
