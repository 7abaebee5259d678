// The read phase: whatever a CRM or a spreadsheet exported (docs/cli-contract.md "Input files"), streamed
// through csv-parse as arrays. Cells are byte strings of UTF-8 (see byte-string.ts): a UTF-8 file
// goes to the parser untouched, any other encoding is transcoded to UTF-8 first, so everything
// downstream sees one form whatever the input was.
import type fs from 'node:fs';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { parse, type Parser } from 'csv-parse';
import { ConfigError, UnreadableInputError } from '../api/errors.js';
import { optionAsked, optionWord } from '../options/option-table.js';
import { fromBytes, toBytes } from './byte-string.js';
import { detectLayout, type RecordDelimiter } from './detect-layout.js';
import { generatedHeader } from './generated-header.js';
import { canonicalEncoding, chooseEncoding, createDecoding, createTranscoder } from './encoding.js';
import { assertText } from './file-kind.js';
import { openInput, type OpenedInput } from './open-input.js';
import { readHead } from './read-head.js';
import { readFailure, sizeText } from './read-failure.js';
import { RecordBatches } from './record-batches.js';
import type { SheetCell } from './sheet-cells.js';
import { RecordEstimate, type RecordCount } from './record-estimate.js';
import { Utf8Watch } from './utf8-watch.js';
import { afterLines, firstLines, titleLineCount } from './title-lines.js';
import { TextTail, TrailingBlock, withoutFooter } from './report-footer.js';
import type { SheetRow } from './sheet-rows.js';
import type { WorkbookZip } from './workbook-zip.js';

/** "ignored 2 title lines above the header ("Exported from HubSpot ...")": said once, with the way to say it. */
function titlesLine(titles: string[], count: number): string {
  const title = fromBytes(titles[0]!)
    .trim()
    .replace(/^"(.*)"$/, '$1')
    .replace(/""/g, '"');
  const first = title.length > 60 ? `${title.slice(0, 57)}...` : title;
  const lines = count === 1 ? '1 title line' : `${count} title lines`;
  return `ignored ${lines} above the header ("${first}"); ${optionAsked('skipLines', String(count), String(count))} says so, ${optionAsked('skipLines', '0', '0')} reads the first line as the header`;
}

export interface ReadOptions {
  /** One character (the CLI maps `tab` and `-t` to '\t'). Default: detected. */
  delimiter?: string;
  /** Any WHATWG label. Default: detected from a byte-order mark or the first 64 KiB. */
  encoding?: string;
  /** The first record is the header (default true); false: it is data, see CsvSource.header. */
  header?: boolean;
  /** Read through gunzip. Default: the path ends in .gz, or the data begins with gzip's magic bytes. */
  gzip?: boolean;
  /** The longest record read, in bytes (default 64 MiB): a longer one is refused, never buffered without end. */
  maxRecordBytes?: number;
  /** Lines above the header that are not the table (a report's titles). Default: detected (title-lines.ts). */
  skipLines?: number;
  /** What was left out of the table (title lines, a report footer), one line each. */
  warn?: (line: string) => void;
  /**
   * Watches the text the parser reads, from the file's first line (after a byte-order mark), as
   * UTF-8 bytes: given the delimiter and the lines above the header, it returns what each chunk is
   * handed to (record-lines.ts: the line each row begins on).
   */
  textWatch?: (layout: { delimiter: string; skipLines: number }) => (chunk: Buffer | string) => void;
}

export interface CsvSource {
  /** Header cells as byte strings (BOM removed); `column_1..column_N` when there is no header. */
  header: string[];
  /** The data records, as byte strings, in batches of up to 512. */
  batches: AsyncIterable<string[][]>;
  /** The delimiter in force, as a byte string like the cells (the same character when ASCII). */
  delimiter: string;
  /** How the header line ends; a line ending inside a quoted header cell does not count. */
  recordDelimiter: RecordDelimiter;
  /** The input's encoding, WHATWG canonical name: detected or given. */
  encoding: string;
  /** The outputs must begin with a UTF-8 BOM: the input had a BOM or was not UTF-8. */
  outputBom: boolean;
  /** A file read as UTF-8 held bytes that are not UTF-8, so far (their cells are counted only then). */
  sawInvalidUtf8(): boolean;
  /** Bytes of the input consumed so far, and its size when known. */
  bytesRead(): number;
  totalBytes: number | undefined;
  /**
   * The data records the input holds, for progress and ETA: estimated from the share of the file
   * parsed so far (record-estimate.ts), exact once it is all read; undefined while it cannot be
   * told (stdin, a gzipped file, a stream, before the first record).
   */
  estimatedRecords(): RecordCount | undefined;
  /** Stops reading (on a fatal error). */
  destroy(): void;
  /**
   * A stream given up on after a stop: when what arrived ends a line, the parser is ended so that
   * the line it holds back (it waits for the characters after a line ending) becomes the last
   * record the batches yield; true then. False (a line half written): nothing changes.
   */
  endAtLineEnd?(): boolean;
  /** --limit: the rows asked for, and whether the input held more (known once they are read). */
  limited?: { limit: number; more: () => boolean } | undefined;
  /** An .xlsx input: the worksheet read. */
  sheet?: string | undefined;
  /** An .xlsx input: a record's cells as the sheet holds them (numbers, dates), for a workbook output. */
  sheetCells?: ((record: readonly string[]) => readonly SheetCell[] | undefined) | undefined;
  /** An .xlsx input: the workbook and the sheet's part in it, and a record's row number in the sheet. */
  workbook?: SheetOrigin | undefined;
}

export interface SheetOrigin {
  file: string;
  part: string;
  /** The input's zip, open until the source ends: a workbook output holds it (WorkbookZip.hold) to copy its parts. */
  zip: WorkbookZip;
  /** The rows --skip-lines set aside above the header, as the sheet holds them. */
  above: readonly SheetRow[];
  row(record: readonly string[]): number | undefined;
}

/** Enough to judge the encoding (docs/cli-contract.md: the first 64 KiB) and the delimiter. */
const HEAD_BYTES = 64 * 1024;

/** A record this long is surely not a contact: refuse rather than buffer without end. */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;

const GZIP_MAGIC = [0x1f, 0x8b];

interface Settings {
  delimiter: string | undefined;
  encoding: string | undefined;
  header: boolean;
  gzip: boolean | undefined;
  maxRecordBytes: number;
  skipLines: number | undefined;
}

/** Validates the options before anything is opened. */
function settingsFrom(options: ReadOptions, input: string | Readable): Settings {
  const { delimiter } = options;
  if (delimiter !== undefined && ([...delimiter].length !== 1 || /["\r\n]/.test(delimiter))) {
    // Escaped, so that a line ending given by mistake does not break the message's one line.
    const got = JSON.stringify(delimiter).slice(1, -1);
    throw new ConfigError(`Invalid option ${optionWord('delimiter')}: must be one character other than a quote or a line ending (or tab), got '${got}'`);
  }
  return {
    delimiter: delimiter === undefined ? undefined : toBytes(delimiter),
    encoding: options.encoding === undefined ? undefined : canonicalEncoding(options.encoding),
    header: options.header ?? true,
    gzip: options.gzip ?? (typeof input === 'string' && input !== '-' && input.toLowerCase().endsWith('.gz') ? true : undefined),
    maxRecordBytes: options.maxRecordBytes ?? MAX_RECORD_BYTES,
    skipLines: options.skipLines,
  };
}

/** What the head of the input tells, and the stream to parse from its first byte. */
interface Prepared {
  source: Readable;
  transcoder: Transform | undefined;
  gunzip: Transform | undefined;
  delimiter: string;
  recordDelimiter: RecordDelimiter;
  encoding: string;
  outputBom: boolean;
  /** Bytes the parser does not see (a UTF-8 BOM), for an exact count of bytes read. */
  skipped: number;
  /** Lines above the header the parser passes over, and their text when they were found (not given). */
  skipLines: number;
  titles: string[];
}

async function prepare(opened: OpenedInput, settings: Settings): Promise<Prepared> {
  const raw = await readHead(opened.stream, GZIP_MAGIC.length);
  const gzip = settings.gzip ?? GZIP_MAGIC.every((byte, i) => raw.bytes[i] === byte);
  let bytes = raw.resume();
  let gunzip: Transform | undefined;
  if (gzip) {
    gunzip = createGunzip();
    const compressed = bytes;
    compressed.on('error', (error) => gunzip!.destroy(error));
    bytes = compressed.pipe(gunzip);
  }
  let head = await readHead(bytes, HEAD_BYTES);
  // Judged on exactly the first 64 KiB (docs/cli-contract.md), though the head may hold a whole chunk more.
  const first = head.bytes.subarray(0, HEAD_BYTES);
  const choice = chooseEncoding(first, head.complete && first.length === head.bytes.length, settings.encoding);
  const utf8 = choice.encoding === 'utf-8';
  assertText(head.bytes, opened.name, choice.encoding.startsWith('utf-16'));
  // The layout is judged on the same UTF-8 byte strings the parser will hand out.
  const textOf = (bytes: Buffer) => (utf8 ? bytes.toString('latin1', choice.utf8BomLength) : toBytes(createDecoding(choice.encoding).write(bytes)));
  const text = textOf(head.bytes);
  const skipLines = settings.skipLines ?? (settings.header ? titleLineCount(text, head.complete, settings.delimiter) : 0);
  let layout = detectLayout(afterLines(text, skipLines), head.complete, settings.delimiter);
  // A header line longer than the head (thousands of columns, read from a pipe's 64 KiB chunks):
  // read on until it ends, since its line ending is the outputs' (docs/cli-contract.md, "Line endings").
  while (!layout.headerEnded && !head.complete && head.bytes.length < settings.maxRecordBytes) {
    head = await readHead(head.resume(), Math.min(head.bytes.length * 2, settings.maxRecordBytes));
    layout = detectLayout(afterLines(textOf(head.bytes), skipLines), head.complete, settings.delimiter);
  }
  if (!layout.headerEnded && head.bytes.length >= settings.maxRecordBytes) {
    // One endless line (a dump, a minified export): say what it is, not that the file is empty.
    const what = settings.header ? 'the header line' : 'the first line';
    throw new UnreadableInputError(
      `${opened.name}: ${what} is longer than ${sizeText(settings.maxRecordBytes)}: not a CSV with line breaks; give a CSV file with one record per line`,
    );
  }
  return {
    source: head.resume(choice.utf8BomLength),
    transcoder: utf8 ? undefined : createTranscoder(choice.encoding),
    gunzip,
    delimiter: layout.delimiter,
    recordDelimiter: layout.recordDelimiter,
    encoding: choice.encoding,
    outputBom: choice.bom || !utf8,
    skipped: choice.utf8BomLength,
    skipLines,
    titles: settings.skipLines === undefined ? firstLines(text, skipLines) : [],
  };
}

/**
 * The parser's record delimiters. An LF file (the common case, and the benchmark's) lists LF and CR
 * alone: a CRLF among its records then ends at its CR and leaves an empty line that skip_empty_lines
 * drops, the same records for one comparison less per byte than listing '\r\n' too (about 5 % of
 * the parse on the UTF-8 benchmark file); only csv-parse's line count, in an error message, counts
 * such a CRLF twice. Other files list CRLF first, so that their line count stays right.
 */
function recordDelimiters(header: RecordDelimiter): string[] {
  return header === '\n' ? ['\n', '\r'] : ['\r\n', '\n', '\r'];
}

function createParser(prepared: Prepared, maxRecordBytes: number): Parser {
  return parse({
    encoding: 'latin1',
    delimiter: prepared.delimiter,
    // Records may end in LF, CRLF or CR, mixed within one file (docs/cli-contract.md "Line endings").
    record_delimiter: recordDelimiters(prepared.recordDelimiter),
    relax_column_count: true,
    relax_quotes: true,
    // Nothing at all between two line endings is not a record (docs/cli-contract.md "Blank lines").
    skip_empty_lines: true,
    max_record_size: maxRecordBytes,
    ...(prepared.skipLines > 0 ? { from_line: prepared.skipLines + 1 } : {}),
  });
}

/** What is watched in the text the parser reads: bytes that are not UTF-8 (a file read as UTF-8), and its last lines (a footer). */
function watchText(prepared: Prepared, textWatch: ReadOptions['textWatch']): { watch: Utf8Watch | undefined; tail: TextTail } {
  const watch = prepared.transcoder ? undefined : new Utf8Watch();
  if (watch) {
    prepared.source.on('data', (chunk: Buffer | string) => watch.feed(chunk));
    prepared.source.once('end', () => watch.end());
  }
  const tail = new TextTail();
  (prepared.transcoder ?? prepared.source).on('data', (chunk: Buffer | string) => tail.feed(chunk));
  const watcher = textWatch?.({ delimiter: prepared.delimiter, skipLines: prepared.skipLines });
  if (watcher) (prepared.transcoder ?? prepared.source).on('data', watcher);
  return { watch, tail };
}

export async function openCsv(input: string | Readable, options: ReadOptions = {}): Promise<CsvSource> {
  const settings = settingsFrom(options, input);
  const opened = openInput(input);
  const context = { name: opened.name, headerRecords: settings.header ? 1 : 0, maxRecordBytes: settings.maxRecordBytes };
  let prepared: Prepared;
  try {
    prepared = await prepare(opened, settings);
  } catch (error) {
    opened.stream.destroy();
    throw error instanceof ConfigError ? error : readFailure(context, error);
  }
  const parser = createParser(prepared, settings.maxRecordBytes);
  const batches = new RecordBatches(parser, (error) => readFailure(context, error));
  const stages = [prepared.source, ...(prepared.transcoder ? [prepared.transcoder] : []), parser] as const;
  pipeline(stages).catch((error: unknown) => batches.fail(readFailure(context, error)));
  const estimate = new RecordEstimate({
    parser,
    totalBytes: opened.totalBytes,
    gzip: prepared.gunzip !== undefined,
    headerRecords: settings.header ? 1 : 0,
    skipped: prepared.skipped,
    transcoding: prepared.transcoder ? { into: prepared.source, out: prepared.transcoder } : undefined,
  });
  const { watch, tail } = watchText(prepared, options.textWatch);
  if (prepared.titles.length > 0) options.warn?.(titlesLine(prepared.titles, prepared.skipLines));
  const destroy = () => {
    batches.stop();
    opened.stream.destroy();
    prepared.gunzip?.destroy();
    parser.destroy();
  };

  const first = await batches.next().catch((error: unknown) => {
    destroy();
    throw error;
  });
  if (!first) throw new UnreadableInputError(`${opened.name} is empty (no line holds any text): give a CSV file whose first line is a header`);
  const header = settings.header ? first.shift()! : generatedHeader(first);
  const block = new TrailingBlock(header.length, tail);
  const nextRows = withoutFooter(first, () => batches.next(), block, options.warn ?? (() => {}));
  // A file read as it is: the parser's count is exact, but for blank lines at the end. Otherwise
  // (gunzip, transcoding) the bytes read from disk, which is what totalBytes measures.
  const plain = prepared.gunzip === undefined && prepared.transcoder === undefined;
  const fileStream = opened.totalBytes === undefined ? undefined : (opened.stream as fs.ReadStream);
  const bytesRead = () => {
    if (batches.ended && opened.totalBytes !== undefined) return opened.totalBytes;
    return plain || !fileStream ? parser.info.bytes + prepared.skipped : fileStream.bytesRead;
  };
  return {
    header,
    batches: {
      [Symbol.asyncIterator]: () => ({
        next: async (): Promise<IteratorResult<string[][]>> => {
          const batch = await nextRows();
          return batch ? { done: false, value: batch } : { done: true, value: undefined };
        },
      }),
    },
    delimiter: prepared.delimiter,
    recordDelimiter: prepared.recordDelimiter,
    encoding: prepared.encoding,
    outputBom: prepared.outputBom,
    sawInvalidUtf8: () => watch?.invalid ?? false,
    bytesRead,
    totalBytes: opened.totalBytes,
    estimatedRecords: () => withoutRecords(estimate.count(batches.ended), block.footerRecords),
    destroy,
    endAtLineEnd: () => {
      if (!tail.endsLine()) return false;
      (prepared.transcoder ?? prepared.source).unpipe(parser);
      parser.end();
      return true;
    },
  };
}

/** The count less a report's footer, once it is known: its lines were parsed as records, but no row is written of them. */
function withoutRecords(count: RecordCount | undefined, footer: number): RecordCount | undefined {
  return count && footer > 0 ? { ...count, records: Math.max(0, count.records - footer) } : count;
}
