// The first phase of a file's run: its input's header and key columns and the columns the run adds
// (checked before any request), its outputs locked, then the run opened (open-run.ts) with its
// writer. Each resource is registered for release as it is made.
import { ConfigError } from '../api/errors.js';
import { checkReportPath } from '../report/report-path.js';
import { BatchLookups } from '../lookup/batch-lookups.js';
import { domainColumnFor } from '../plan/targets.js';
import { fromBytes } from '../read/index.js';
import { isMemberField } from '../write/columns.js';
import { OutputLock } from '../write/output-lock.js';
import type { OutputOption } from '../write/output-words.js';
import { placeOf } from '../write/sinks.js';
import { isStandardOutput } from '../write/output-place.js';
import { RowWriter } from '../write/row-writer.js';
import { openRun, type RunInput, type RunState } from './open-run.js';
import { inputName, isStreamInput, unlessInterrupted } from './input-wait.js';
import type { Resources } from './resources.js';
import { readKeyed } from './keyed-input.js';
import type { EnrichSettings } from './settings.js';
import { runColumns } from './run-columns.js';

const OUTPUTS_WAIT = 'Interrupted while the outputs were opened (a FIFO waits for its reader): nothing was looked up';

export async function prepare(settings: EnrichSettings, resources: Resources): Promise<RunState> {
  // The input first: a wrong file, column or --fields is the first thing to fix, and costs no request.
  const opening = openInput(settings, resources);
  const input = isStreamInput(settings.input) ? await unlessInterrupted(opening, settings.signal, inputName(settings.input)) : await opening;
  const fifo = claimOutputs(settings, resources);
  refuseBinaryOnTerminal(settings);
  // A CSV of one lookup kind without --with writes only the answer's own columns: the store may hand
  // them over as cells (no JSON.parse). JSONL, a waterfall, --with and a `lead.MEMBER` field need the parsed answers.
  const cellsOnly = settings.format === 'csv' && settings.with.length === 0 && input.targets.length === 1 && !settings.fields?.some(isMemberField);
  const made: { writer?: RowWriter } = {};
  const run = await openRun(settings, resources, {
    input,
    storedForm: cellsOnly ? 'cells' : 'data',
    writer: () => {
      const writer = openWriter(settings, input);
      resources.onFailure(() => writer.abort());
      made.writer = writer;
      return writer;
    },
  });
  // A workbook output's parts are checked and copied now, and a FIFO waits for its reader: what could
  // stop the outputs is found before the first lookup.
  const ready = made.writer?.ready();
  await (fifo && ready ? unlessInterrupted(ready, settings.signal, 'the outputs', OUTPUTS_WAIT) : ready);
  return run;
}

/**
 * The input's dialect and header, which columns hold the keys, and the columns the run adds:
 * all of it checked before any request (a wrong --column or --fields is the user's to fix).
 */
async function openInput(settings: EnrichSettings, resources: Resources): Promise<RunInput> {
  const { targets, headerLine, source } = await readKeyed(settings, settings, (read) => {
    resources.onFailure(() => read.destroy());
    // A workbook output copies the input's parts from the zip the reader opened: kept open for it
    // even when the reader is done first (--limit stops it while the key columns are found).
    const zip = settings.format === 'xlsx' ? read.workbook?.zip.hold() : undefined;
    if (zip) resources.defer(() => zip.close());
  });
  const header = source.header.map(fromBytes);
  const domainColumn = headerLine ? domainColumnFor(header, targets, settings.with) : undefined;
  return { source, targets, domainColumn, headerLine, ...runColumns(settings, targets, header) };
}

/**
 * The output, the sidecar and the changes file are this run's alone: each name's place found (what
 * no output may be, a folder or a socket, refused: write/output-place.ts), and a second run on a
 * file or a FIFO stops here, before any request. A link's target is locked, where the bytes go; a
 * device takes any number of writers (/dev/null), a standard stream is no file of the run's.
 * True when an output is a FIFO, whose opening waits for its reader.
 */
function claimOutputs(settings: EnrichSettings, resources: Resources): boolean {
  let fifo = false;
  const targets: Array<[unknown, string, OutputOption]> = [
    [settings.output, 'output', 'output'],
    [settings.errors, 'error sidecar', 'errors'],
    [settings.changes, 'changes file', 'changes'],
  ];
  for (const [target, what, option] of targets) {
    if (typeof target !== 'string' || target === '-') continue;
    const place = placeOf(target, option);
    fifo ||= place.how === 'fifo';
    if (place.how !== 'file' && place.how !== 'fifo') continue;
    const lock = OutputLock.acquire(place.target, what, option);
    resources.defer(() => lock.release());
  }
  if (settings.report) checkReportPath(settings.report);
  return fifo;
}

/** A workbook is zip bytes: on a terminal it is noise that may drive it, so it is refused, as gzip refuses. */
function refuseBinaryOnTerminal(settings: EnrichSettings): void {
  const stdout = (settings.stdout ?? process.stdout) as { isTTY?: boolean };
  if (!isStandardOutput(settings.output) || settings.format !== 'xlsx' || stdout.isTTY !== true) return;
  throw new ConfigError('Refusing to write an .xlsx workbook to a terminal: send stdout to a file (> out.xlsx), or give -o out.xlsx');
}

function openWriter(settings: EnrichSettings, input: RunInput): RowWriter {
  sayWhenTabsInCsv(settings, input.source.delimiter);
  return new RowWriter({
    output: settings.output,
    errors: settings.errors,
    changes: settings.changes,
    format: settings.format,
    header: input.source.header,
    columns: input.columns,
    recordDelimiter: input.source.recordDelimiter,
    delimiter: settings.outputDelimiter ?? input.source.delimiter,
    bom: input.source.outputBom,
    headerLine: input.headerLine,
    sheet: input.source,
    warn: settings.warn,
    ...(settings.stdout ? { stdout: settings.stdout } : {}),
  });
}

/**
 * The outputs use the input's delimiter: a tab-separated input (Excel's "Unicode text") written to
 * a file named `.csv` is said so, since a `.csv` is taken for commas.
 */
function sayWhenTabsInCsv(settings: EnrichSettings, delimiter: string): void {
  if (delimiter !== '\t' || settings.format !== 'csv' || settings.outputDelimiter !== undefined) return;
  const named = [settings.output, settings.errors].filter((file): file is string => typeof file === 'string' && /\.csv(\.gz)?$/i.test(file));
  if (named.length > 0) settings.warn(`the input is tab-separated, and so are ${named.join(' and ')} (the outputs keep the input's delimiter)`);
}

/** The look-up step of a prepared run's rows (plan → look up), the same for enrich and enrichRows. */
export function batchLookupsFor(run: Pick<RunState, 'settings' | 'source' | 'targets' | 'domainColumn' | 'lookups' | 'complete' | 'listing'>): BatchLookups {
  return new BatchLookups({
    targets: run.targets,
    domainColumn: run.domainColumn,
    extras: run.settings.with,
    lookups: run.lookups,
    width: run.source.header.length,
    shard: run.settings.shard,
    complete: run.complete,
    carried: run.listing?.report,
  });
}
