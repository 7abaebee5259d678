// The write step: the enriched output and the error sidecar, rows in input order.
// Both go to temporary files beside their destinations and are renamed into place only when
// complete, so a killed run never leaves a file that looks finished (cli-contract.md).
// CSV text is handled as latin1 "byte strings" end to end (read.ts): every input byte comes out
// exactly as it went in, valid UTF-8 or not; added cells are encoded to UTF-8 bytes here.
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { UnreadableInputError } from '../api/errors.js';
import { escapeFormula, type ColumnSet, type RowData } from './columns.js';
import { fromBytes, toBytes } from './read.js';

export type RowStatus = 'found' | 'not_found' | 'error' | 'skipped';
export type Billing = 'charged' | 'free' | 'cached' | 'duplicate' | 'none';

export interface FinishedRow {
  /** 1-based data row number in the input (cli-contract.md, "The error sidecar"). */
  row: number;
  /** Input cells, as byte strings. */
  cells: string[];
  status: RowStatus;
  billing: Billing;
  data: RowData;
  errorCode?: string | undefined;
  errorMessage?: string | undefined;
}

export interface WriterOptions {
  /** File path, or '-' for stdout. */
  output: string;
  /** Sidecar path; undefined when the output is stdout and no --errors was given. */
  errors: string | undefined;
  format: 'csv' | 'jsonl';
  /** Input header, as byte strings. */
  header: string[];
  columns: ColumnSet;
  /** '\r\n' when the input used it, so the output looks like the input. */
  recordDelimiter: string;
  /** Write a UTF-8 BOM first, because the input had one. */
  bom: boolean;
  stdout?: Writable;
}

interface Sink {
  stream: Writable;
  temp: string | undefined;
  final: string | undefined;
}

function openSink(target: string, stdout: Writable): Sink {
  if (target === '-') return { stream: stdout, temp: undefined, final: undefined };
  const final = path.resolve(target);
  const temp = path.join(path.dirname(final), `.${path.basename(final)}.${process.pid}.partial`);
  removeStalePartials(final);
  try {
    fs.mkdirSync(path.dirname(final), { recursive: true });
    const fd = fs.openSync(temp, 'w', 0o644);
    return { stream: fs.createWriteStream(temp, { fd }), temp, final };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new UnreadableInputError(`Cannot write ${target}: ${code}; choose another path with -o / --errors`);
  }
}

/** Temporary files of earlier runs that were killed (their process is gone) are removed. */
function removeStalePartials(final: string): void {
  const prefix = `.${path.basename(final)}.`;
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(final));
  } catch {
    return;
  }
  for (const name of names) {
    const pid = name.startsWith(prefix) && name.endsWith('.partial') ? Number(name.slice(prefix.length, -'.partial'.length)) : NaN;
    if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    fs.rmSync(path.join(path.dirname(final), name), { force: true });
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class RowWriter {
  readonly #options: WriterOptions;
  readonly #out: Sink;
  readonly #err: Sink | undefined;
  readonly #width: number;
  readonly #eol: string;
  #closed = false;

  constructor(options: WriterOptions) {
    this.#options = options;
    const stdout = options.stdout ?? process.stdout;
    this.#width = options.header.length;
    this.#out = openSink(options.output, stdout);
    try {
      this.#err = options.errors === undefined ? undefined : openSink(options.errors, stdout);
    } catch (error) {
      this.#discard(this.#out);
      throw error;
    }
    this.#eol = options.recordDelimiter;
    const bom = options.bom ? '\xef\xbb\xbf' : '';
    if (options.format === 'csv') {
      const header = [...options.header, 'lead_status', ...options.columns.names.map(toBytes), 'lead_billing'];
      this.#out.stream.write(bom + csvLines([header], this.#eol), 'latin1');
    }
    if (this.#err) {
      this.#err.stream.write(bom + csvLines([['row', ...options.header, 'error_code', 'error_message']], this.#eol), 'latin1');
    }
  }

  #padded(cells: string[]): string[] {
    if (cells.length >= this.#width) return cells.length === this.#width ? cells : cells.slice(0, this.#width);
    return [...cells, ...new Array<string>(this.#width - cells.length).fill('')];
  }

  /**
   * Writes rows (in order) in one go: one string and one write per batch, not per row.
   * Resolves when the streams can take more (back-pressure to the reader).
   */
  writeRows(rows: readonly FinishedRow[]): Promise<void> | undefined {
    if (rows.length === 0) return undefined;
    let full = false;
    const failed: string[][] = [];
    const records: string[][] = [];
    const lines: string[] = [];
    for (const row of rows) {
      const cells = this.#padded(row.cells);
      if (this.#options.format === 'csv') {
        const added = this.#options.columns.values(row.data);
        for (let i = 0; i < added.length; i += 1) added[i] = toBytes(escapeFormula(added[i]!));
        records.push([...cells, row.status, ...added, row.billing]);
      } else {
        lines.push(`${JSON.stringify(jsonRow(row, this.#options.header))}\n`);
      }
      if (this.#err && (row.status === 'error' || row.status === 'skipped')) {
        failed.push([String(row.row), ...cells, row.errorCode ?? '', toBytes(escapeFormula(row.errorMessage ?? ''))]);
      }
    }
    if (records.length > 0) full = !this.#out.stream.write(csvLines(records, this.#eol), 'latin1') || full;
    if (lines.length > 0) full = !this.#out.stream.write(lines.join(''), 'utf8') || full;
    if (failed.length > 0) full = !this.#err!.stream.write(csvLines(failed, this.#eol), 'latin1') || full;
    return full ? this.#drained() : undefined;
  }

  async #drained(): Promise<void> {
    const waits: Promise<unknown>[] = [];
    for (const sink of [this.#out, this.#err]) {
      if (sink?.stream.writableNeedDrain) waits.push(once(sink.stream, 'drain'));
    }
    await Promise.all(waits);
  }

  /** Ends both outputs and renames them into place: the sidecar first, the output last. */
  async commit(): Promise<{ output: string | undefined; errors: string | undefined }> {
    if (this.#closed) throw new Error('writer already closed');
    this.#closed = true;
    await Promise.all([this.#finish(this.#out), this.#err ? this.#finish(this.#err) : undefined]);
    for (const sink of [this.#err, this.#out]) {
      if (sink?.temp && sink.final) fs.renameSync(sink.temp, sink.final);
    }
    return { output: this.#out.final, errors: this.#err?.final };
  }

  async #finish(sink: Sink): Promise<void> {
    if (sink.temp) {
      const closed = once(sink.stream, 'close');
      sink.stream.end();
      await closed;
    } else {
      // stdout stays open; wait until what we wrote was handed over.
      await new Promise<void>((resolve) => sink.stream.write('', () => resolve()));
    }
  }

  /** Drops the temporary files: nothing that looks finished is left behind. */
  async abort(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#discard(this.#out);
    if (this.#err) this.#discard(this.#err);
  }

  #discard(sink: Sink): void {
    if (!sink.temp) return;
    sink.stream.destroy();
    fs.rmSync(sink.temp, { force: true });
  }
}

const NEEDS_QUOTES = /[",\r\n]/;
const QUOTE = /"/g;

/**
 * CSV text for records, each line ended by `eol`: a cell is quoted when it holds a comma, a quote,
 * CR or LF, with quotes doubled (RFC 4180), exactly as csv-stringify does by default (a test holds
 * the two to the same output). Written out here because it is the writer's hot path: csv-stringify
 * spent about six times as long per row on the same records.
 */
export function csvLines(records: readonly (readonly string[])[], eol: string): string {
  let text = '';
  for (const record of records) {
    for (let i = 0; i < record.length; i += 1) {
      const cell = record[i]!;
      if (i > 0) text += ',';
      text += NEEDS_QUOTES.test(cell) ? `"${cell.replace(QUOTE, '""')}"` : cell;
    }
    text += eol;
  }
  return text;
}

/** `--format jsonl`: the input as an object (duplicate header names get _2, _3) and the full results. */
function jsonRow(row: FinishedRow, header: string[]): Record<string, unknown> {
  const input: Record<string, string> = {};
  header.forEach((name, i) => {
    let key = fromBytes(name);
    for (let n = 2; Object.hasOwn(input, key); n += 1) key = `${fromBytes(name)}_${n}`;
    input[key] = fromBytes(row.cells[i] ?? '');
  });
  return {
    row: row.row,
    lead_status: row.status,
    lead_billing: row.billing,
    input,
    ...(row.data.lead === undefined ? {} : { lead: row.data.lead }),
    ...(row.data.mx === undefined ? {} : { mx: row.data.mx }),
    ...(row.data.whois === undefined ? {} : { whois: row.data.whois }),
    ...(row.errorCode === undefined ? {} : { error: { code: row.errorCode, message: row.errorMessage ?? '' } }),
  };
}
