// The write step: the enriched output, the error sidecar and the changes file, rows in input order.
// Each file goes to a temporary file beside its destination and is renamed into place only when
// complete, so a killed run never leaves a file that looks finished (docs/cli-contract.md); a FIFO
// or a device is written as it is, never replaced (output-place.ts).
// CSV text is handled as latin1 "byte strings" end to end (read.ts): every input byte comes out
// exactly as it went in, valid UTF-8 or not; added cells are encoded to UTF-8 bytes here.
import { once } from 'node:events';
import fs from 'node:fs';
import type { Writable } from 'node:stream';
import { needsAction, type FinishedRow } from '../core/rows.js';
import { jsonText } from '../core/terminal-text.js';
import type { ColumnSet } from './columns.js';
import { csvLines, escapeFormula } from './csv-lines.js';
import { jsonRow } from './json-row.js';
import { assertNotFolder, openSink, type Sink } from './sinks.js';
import { whyNotWritable } from './output-place.js';
import { LeadEnrichError, UnwritableOutputError } from '../api/errors.js';
import { toBytes, type CsvSource } from '../read/index.js';
import { WorkbookOutput } from './workbook-output.js';
import { changeRecords } from './answer-changes.js';
import { ChangesFile, changesFormatOf } from './changes-file.js';

export { csvLines } from './csv-lines.js';
export type { FinishedRow, RowStatus, Billing } from '../core/rows.js';

/** Where finished rows go, in input order: the CSV/JSONL writer, or a library caller's loop. */
export interface RowSink {
  /** Takes rows in order; resolves when it can take more (back-pressure to the reader). */
  writeRows(rows: readonly FinishedRow[]): Promise<void> | undefined;
  /** --changes: lines of no row, after the rows (a sink without a changes file has none). */
  writeChangeLines?(lines: readonly string[][]): Promise<void> | undefined;
  /** The rows are all written: make the outputs complete. */
  commit(): Promise<{ output: string | undefined; errors: string | undefined; changes?: string | undefined }>;
  /** The run failed: leave nothing that looks finished. */
  abort(): Promise<void>;
}

export interface WriterOptions {
  /** File path, '-' for stdout, or a stream. */
  output: string | Writable;
  /** Sidecar path or stream; undefined when the output is stdout and no --errors was given. */
  errors: string | Writable | undefined;
  /** --changes: the file of what changed since the earlier answers (answer-changes.ts), '-' for stdout. */
  changes?: string | undefined;
  format: 'csv' | 'jsonl' | 'xlsx';
  /** Input header, as byte strings. */
  header: string[];
  columns: ColumnSet;
  /** How the input's header line ended ('\n', '\r\n' or '\r'), so the outputs look like the input. */
  recordDelimiter: string;
  /** The input's field delimiter: a semicolon file comes back with semicolons. */
  delimiter: string;
  /** Begin the outputs with a UTF-8 BOM (the input had one, or was not UTF-8: spreadsheets need it). */
  bom: boolean;
  /** Write the enriched CSV's header line (not when the input had none: --no-header). */
  headerLine: boolean;
  /** An .xlsx input's worksheet and typed cells, for a workbook output that keeps them. */
  sheet?: Pick<CsvSource, 'sheet' | 'sheetCells' | 'workbook'> | undefined;
  stdout?: Writable;
  /** Where a note about the outputs goes (a workbook's cells cut to Excel's limit). */
  warn?: ((line: string) => void) | undefined;
}

export class RowWriter implements RowSink {
  readonly #options: WriterOptions;
  readonly #out: Sink;
  readonly #err: Sink | undefined;
  readonly #changes: Sink | undefined;
  /** The changes in their file's format, written into #changes' stream. */
  readonly #changesFile: ChangesFile | undefined;
  /** The output as a workbook (format xlsx), written into #out's stream. */
  readonly #workbook: WorkbookOutput | undefined;
  readonly #width: number;
  readonly #eol: string;
  readonly #delimiter: string;
  #closed = false;
  /** The first error an output stream emitted: the run fails with it instead of the process crashing. */
  #failure: UnwritableOutputError | undefined;
  readonly #unwatch: (() => void)[] = [];

  constructor(options: WriterOptions) {
    this.#options = options;
    const stdout = options.stdout ?? process.stdout;
    this.#width = options.header.length;
    this.#out = openSink(options.output, stdout, 'output');
    try {
      this.#err = options.errors === undefined ? undefined : openSink(options.errors, stdout, 'errors');
      this.#changes = options.changes === undefined ? undefined : openSink(options.changes, stdout, 'changes');
    } catch (error) {
      for (const sink of [this.#out, this.#err]) if (sink) this.#discard(sink);
      throw error;
    }
    this.#watch(this.#out, named('output', options.output));
    if (this.#err) this.#watch(this.#err, named('error sidecar', options.errors));
    if (this.#changes) this.#watch(this.#changes, named('changes file', options.changes));
    this.#eol = options.recordDelimiter;
    this.#delimiter = options.delimiter;
    const bom = options.bom ? '\xef\xbb\xbf' : '';
    if (options.format === 'csv') {
      // The added names are escaped as added cells are (a --prefix '=x' is no formula); the input's never.
      const header = [...options.header, ...[options.columns.status, ...options.columns.names].map((name) => toBytes(escapeFormula(name)))];
      this.#out.stream.write(bom + (options.headerLine ? csvLines([header], this.#eol, this.#delimiter) : ''), 'latin1');
    }
    this.#workbook = options.format === 'xlsx' ? this.#openWorkbook(options) : undefined;
    if (this.#err) {
      this.#err.stream.write(bom + csvLines([['row', ...options.header, 'error_code', 'error_message']], this.#eol, this.#delimiter), 'latin1');
    }
    this.#changesFile =
      this.#changes &&
      new ChangesFile(this.#changes.stream, {
        format: changesFormatOf(options.changes!),
        eol: this.#eol,
        delimiter: this.#delimiter,
        bom: options.bom,
        warn: options.warn,
      });
  }

  #openWorkbook(options: WriterOptions): WorkbookOutput {
    try {
      return new WorkbookOutput({
        target: this.#out.stream,
        header: options.header,
        columns: options.columns,
        headerLine: options.headerLine,
        sheetName: options.sheet?.sheet,
        sheetCells: options.sheet?.sheetCells,
        workbook: options.sheet?.workbook,
        warn: options.warn,
      });
    } catch (error) {
      void this.abort();
      throw error;
    }
  }

  /**
   * A stream that fails (a caller's Writable, a full disk) emits 'error': with no listener that
   * would crash the caller's process; here it becomes the run's error, a LeadError (docs/cli-contract.md, "Library").
   */
  #watch(sink: Sink, what: string): void {
    const onError = (error: Error): void => {
      const reason = (error as NodeJS.ErrnoException).code ? whyNotWritable(error) : error.message;
      this.#failure ??= new UnwritableOutputError(
        `Cannot write the ${what}: ${reason}; the run stopped, and the answers it received are kept in the store for the next run`,
        { cause: error },
      );
    };
    for (const stream of new Set([sink.stream, sink.file])) {
      stream.on('error', onError);
      this.#unwatch.push(() => stream.off('error', onError));
    }
  }

  #check(): void {
    if (this.#failure) throw this.#failure;
  }

  /**
   * Resolves when the outputs are begun and nothing but their rows is left to write: a workbook's
   * other parts checked and copied. The run waits for it before its first lookup.
   */
  async ready(): Promise<void> {
    await Promise.all([this.#workbook?.ready(), this.#changesFile?.ready(), ...this.#sinks().map((sink) => sink.opening)]).catch((error: unknown) => {
      this.#check();
      throw error;
    });
    this.#check();
  }

  /** The sidecar keeps the cells as read; the output, the cells --fill filled. */
  #padded(cells: string[]): string[] {
    if (cells.length >= this.#width) return cells.length === this.#width ? cells : cells.slice(0, this.#width);
    return [...cells, ...new Array<string>(this.#width - cells.length).fill('')];
  }

  /**
   * A row's CSV line. A row whose lookup's own columns come as a stored record (stored-cells.ts) in
   * the form this output wants — comma-separated, default columns — gets that record written as it
   * is: no split, no escaping, no quoting per cell (the known-rows path).
   */
  #csvLine(row: FinishedRow, cells: string[]): string {
    const { columns } = this.#options;
    const fast = row.cellsRecord !== undefined && this.#delimiter === ',' && columns.ownLeading > 0;
    const added = fast ? columns.valuesAfterOwn(row) : columns.values(row);
    for (let i = 0; i < added.length; i += 1) added[i] = toBytes(escapeFormula(added[i]!));
    if (!fast) return csvLines([[...cells, row.status, ...added]], this.#eol, this.#delimiter);
    const after = added.length === 0 ? '' : `,${csvLines([added], '', ',')}`;
    return `${csvLines([[...cells, row.status]], '', ',')},${toBytes(row.cellsRecord!)}${after}${this.#eol}`;
  }

  /**
   * Writes rows (in order) in one go: one string and one write per batch, not per row.
   * Resolves when the streams can take more (back-pressure to the reader).
   */
  writeRows(rows: readonly FinishedRow[]): Promise<void> | undefined {
    if (this.#failure) return Promise.reject(this.#failure);
    if (rows.length === 0) return undefined;
    let full = false;
    const failed: string[][] = [];
    const changed: string[][] = [];
    let csv = '';
    const lines: string[] = [];
    this.#workbook?.addRows(rows);
    for (const row of rows) {
      const cells = this.#padded(row.cells);
      if (this.#options.format === 'csv') {
        csv += this.#csvLine(row, row.filled ? filledCells(cells, row.filled) : cells);
      } else if (this.#options.format === 'jsonl') {
        lines.push(`${jsonText(jsonRow(row, this.#options.header, this.#changes !== undefined))}\n`);
      }
      if (this.#changes && (row.changes?.length || row.carriedChanges?.length)) changed.push(...changeRecords(row));
      if (this.#err && needsAction(row)) {
        failed.push([String(row.row), ...cells, row.errorCode ?? '', toBytes(escapeFormula(row.errorMessage ?? ''))]);
      }
    }
    if (csv.length > 0) full = !this.#out.stream.write(csv, 'latin1') || full;
    if (lines.length > 0) full = !this.#out.stream.write(lines.join(''), 'utf8') || full;
    if (failed.length > 0) full = !this.#err!.stream.write(csvLines(failed, this.#eol, this.#delimiter), 'latin1') || full;
    if (changed.length > 0) full = !this.#changesFile!.add(changed) || full;
    if (this.#workbook) full = this.#out.stream.writableNeedDrain || full;
    const zipped = [this.#workbook?.drained(), this.#changesFile?.drained()].filter((wait) => wait !== undefined);
    if (zipped.length > 0) return Promise.all([...zipped, full ? this.#drained() : undefined]).then(() => undefined);
    return full ? this.#drained() : undefined;
  }

  /** --changes: lines of no row (the carried changes of keys no row stands for), after the rows. */
  writeChangeLines(records: readonly string[][]): Promise<void> | undefined {
    if (this.#failure) return Promise.reject(this.#failure);
    if (!this.#changesFile || records.length === 0) return undefined;
    if (this.#changesFile.add(records)) return this.#changesFile.drained();
    return Promise.all([this.#drained(), this.#changesFile.drained()]).then(() => undefined);
  }

  async #drained(): Promise<void> {
    const waits: Promise<unknown>[] = [];
    for (const sink of this.#sinks()) {
      if (sink.stream.writableNeedDrain) waits.push(once(sink.stream, 'drain'));
    }
    await Promise.all(waits).catch((error: unknown) => {
      this.#check();
      throw error;
    });
  }

  /**
   * Ends the outputs and renames them into place: the sidecar and the changes first, the output
   * last. One that cannot be completed leaves no temporary file, and fails in one line that says
   * where the answers are (the store) and how to have them written.
   */
  async commit(): Promise<{ output: string | undefined; errors: string | undefined; changes: string | undefined }> {
    if (this.#closed) throw new Error('writer already closed');
    this.#closed = true;
    try {
      await this.#workbook?.finish();
      await this.#changesFile?.finish();
      await Promise.all(this.#sinks().map((sink) => this.#finish(sink)));
      this.#check();
    } catch (error) {
      this.#workbook?.discard();
      this.#changesFile?.discard();
      this.#discardAll();
      this.#check();
      throw notCompleted(error, named('output', this.#options.output));
    } finally {
      for (const unwatch of this.#unwatch.splice(0)) unwatch();
    }
    this.#rename();
    return { output: this.#out.final, errors: this.#err?.final, changes: this.#changes?.final };
  }

  /** The complete files into place; one that cannot be (a folder made at its path meanwhile) leaves no temporary file. */
  #rename(): void {
    let final: string | undefined;
    try {
      // All checked before any is renamed: the sidecar and the changes never appear without their output.
      const sinks = [this.#err, this.#changes, this.#out];
      for (const sink of sinks) {
        final = sink?.final;
        if (sink?.temp && sink.target) assertNotFolder(sink.target);
      }
      for (const sink of sinks) {
        final = sink?.final;
        if (sink?.temp && sink.target) fs.renameSync(sink.temp, sink.target);
      }
    } catch (error) {
      this.#discardAll();
      throw new UnwritableOutputError(`Cannot write ${final}: ${whyNotWritable(error)}; ${STORED}`, { cause: error });
    }
  }

  async #finish(sink: Sink): Promise<void> {
    if (sink.opened) {
      // A file stream that failed is closed already: its 'close' will not come again.
      if (sink.file.closed) return;
      const closed = once(sink.file, 'close');
      sink.stream.end();
      await closed;
    } else if (sink.endStream) {
      // A caller's stream: ended, and waited for until everything written was handed over.
      await new Promise<void>((resolve, reject) => sink.stream.end((error?: Error | null) => (error ? reject(error) : resolve())));
    } else {
      // stdout stays open; wait until what we wrote was handed over.
      await new Promise<void>((resolve) => sink.stream.write('', () => resolve()));
    }
  }

  /** Drops the temporary files: nothing that looks finished is left behind. */
  async abort(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#workbook?.discard();
    this.#changesFile?.discard();
    this.#discardAll();
    for (const unwatch of this.#unwatch.splice(0)) unwatch();
  }

  /** The outputs this writer has: the output, and the sidecar and the changes when asked for. */
  #sinks(): Sink[] {
    return [this.#out, this.#err, this.#changes].filter((sink): sink is Sink => sink !== undefined);
  }

  #discardAll(): void {
    for (const sink of this.#sinks()) this.#discard(sink);
  }

  #discard(sink: Sink): void {
    if (!sink.opened) return;
    // A write still in flight fails once its stream is destroyed: that late error is of no interest.
    for (const stream of new Set([sink.stream, sink.file])) stream.on('error', () => {}).destroy();
    if (sink.temp) fs.rmSync(sink.temp, { force: true });
  }
}

/** The input cells with --fill's values in place, formula-escaped as added cells are. */
function filledCells(cells: readonly string[], filled: ReadonlyMap<number, string>): string[] {
  const out = [...cells];
  for (const [column, value] of filled) out[column] = toBytes(escapeFormula(value));
  return out;
}

/** A failure to complete the outputs, as the run's one line (never an "unexpected failure"). */
function notCompleted(error: unknown, what: string): Error {
  if (error instanceof LeadEnrichError) return error;
  const why = error instanceof Error ? error.message : String(error);
  return new UnwritableOutputError(`Cannot complete the ${what}: ${why}; ${STORED}`, { cause: error });
}

const STORED = 'the answers received are kept in the store: run the same command again to write them without paying again';

/** `output /data/x.csv`: a file's path is named; standard output and a caller's stream are not. */
function named(what: string, target: string | Writable | undefined): string {
  return typeof target === 'string' && target !== '-' ? `${what} ${target}` : what;
}
