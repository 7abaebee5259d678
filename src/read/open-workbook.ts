// The read phase for an .xlsx input (cli-contract, "Spreadsheets"): the first worksheet, or the
// one --sheet names, streamed row by row into the same byte-string records a CSV gives, so plan,
// look-up and write work the same. Each record's cells as the sheet holds them (numbers, dates,
// booleans) are kept beside it, for a workbook output that keeps their types.
//
// The zip is read from its central directory (workbook-zip.ts), in the order we need its parts:
// exceljs parses the sheet list, the relationships and the styles; the shared strings and the
// worksheet are parsed here (sheet-rows.ts): exceljs 4.4.0 decodes each chunk of them alone (a
// character cut between chunks becomes U+FFFD: exceljs#2063), reads a formula's boolean result as
// a number and its error as NaN, and takes a Japanese string's phonetic reading for its text.
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { ConfigError, UnreadableInputError } from '../api/errors.js';
import { toBytes } from './byte-string.js';
import { excel } from './exceljs.js';
import type { CsvSource } from './open-csv.js';
import { generatedHeader } from './generated-header.js';
import type { CellContext, SheetCell } from './sheet-cells.js';
import { readSharedStrings, sheetRows, type SheetRow, type SheetRowsInfo } from './sheet-rows.js';
import { WorkbookZip, workbookPartPath } from './workbook-zip.js';

export interface WorkbookOptions {
  /** A worksheet's name, or its 1-based position. Default: the first. */
  sheet?: string | undefined;
  /** The first row that holds anything is the header (default true). */
  header?: boolean | undefined;
}

interface SheetEntry {
  name: string;
}

/** exceljs 4.4.0's WorkbookReader as this module uses it: its parsers of the small parts (the version is pinned in package.json). */
interface WorkbookReaderInternals {
  _parseWorkbook(entry: Readable): Promise<void>;
  _parseRels(entry: Readable): Promise<void>;
  _parseStyles(entry: Readable): Promise<void>;
  workbookRels?: Array<{ Id: string; Type: string; Target: string }>;
  model?: { sheets?: Array<SheetEntry & { rId?: string }> };
  properties?: { model?: { date1904?: boolean } };
  styles: { getStyleModel(id: number): { numFmt?: string } | null };
}

const BATCH_ROWS = 512;
const RELATIONSHIP = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/';

/** A small XML part as a string stream: exceljs's XML parser then never sees a character cut between two chunks. */
function textOf(stream: Readable): Readable {
  return stream.setEncoding('utf8');
}

/** The sheet list, relationships and styles of the workbook, parsed by exceljs. */
async function workbookParts(zip: WorkbookZip, input: string): Promise<WorkbookReaderInternals> {
  const reader = new (excel().stream.xlsx.WorkbookReader)(undefined as never, { styles: 'cache' }) as unknown as WorkbookReaderInternals;
  const [rels, book] = ['xl/_rels/workbook.xml.rels', 'xl/workbook.xml'];
  if (!zip.has(rels) || !zip.has(book)) {
    throw new UnreadableInputError(`${input} holds no worksheet exceljs can read (is it an .xlsb or a strict OOXML file?): save it as .xlsx or CSV`);
  }
  await reader._parseRels(textOf(zip.stream(rels)!));
  await reader._parseWorkbook(textOf(zip.stream(book)!));
  const styles = zip.stream(partOfType(reader, 'styles') ?? 'xl/styles.xml');
  if (styles) await reader._parseStyles(textOf(styles));
  return reader;
}

/** The zip path of the workbook's part of a relationship type (`sharedStrings`, `styles`), if it names one. */
function partOfType(reader: WorkbookReaderInternals, type: string): string | undefined {
  const rel = reader.workbookRels?.find((r) => r.Type === RELATIONSHIP + type);
  return rel ? workbookPartPath(rel.Target) : undefined;
}

/** The worksheet `wanted` names (a name, else a 1-based position), or the first; a ConfigError listing the sheets. */
function chosenSheet(sheets: readonly SheetEntry[], wanted: string | undefined, input: string): string {
  if (sheets.length === 0) throw new UnreadableInputError(`${input} holds no worksheet: give a workbook with a sheet of contacts, or a CSV file`);
  if (wanted === undefined) return sheets[0]!.name;
  const named = sheets.find((sheet) => sheet.name === wanted) ?? sheets.find((sheet) => sheet.name.toLowerCase() === wanted.trim().toLowerCase());
  if (named) return named.name;
  const position = /^\s*\d+\s*$/.test(wanted) ? Number(wanted) : NaN;
  if (position >= 1 && position <= sheets.length) return sheets[position - 1]!.name;
  const names = sheets.map((sheet, i) => `${i + 1} '${sheet.name}'`).join(', ');
  throw new ConfigError(`Invalid option --sheet: ${input} has no sheet '${wanted}'; its sheets are ${names}: give --sheet NAME or --sheet N`);
}

/** A failure of the zip or the XML, as one line naming the input. */
function workbookFailure(input: string, error: unknown): Error {
  if (error instanceof ConfigError || error instanceof UnreadableInputError) return error;
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ');
  // unzipper's word for a zip cut short.
  const why = message === 'FILE_ENDED' ? 'the file ends before the workbook does (cut short?)' : message;
  return new UnreadableInputError(`Cannot read the workbook ${input}: ${why}; open it in Excel or LibreOffice and save it again as .xlsx (or as CSV)`, { cause: error });
}

interface OpenedSheet {
  name: string;
  rows: AsyncGenerator<SheetRow[]>;
  info: () => SheetRowsInfo | undefined;
  /** Stops reading the worksheet. */
  finish(): void;
}

async function openSheet(input: string, wanted: string | undefined): Promise<OpenedSheet> {
  const zip = await WorkbookZip.open(input);
  const reader = await workbookParts(zip, input);
  const name = chosenSheet(reader.model?.sheets ?? [], wanted, input);
  const rId = reader.model?.sheets?.find((sheet) => sheet.name === name)?.rId;
  const target = reader.workbookRels?.find((rel) => rel.Id === rId)?.Target;
  const xml = target === undefined ? undefined : zip.stream(workbookPartPath(target));
  if (!xml) throw new UnreadableInputError(`${input}: the sheet '${name}' is named in the workbook but its worksheet is missing from the file: open it in Excel or LibreOffice and save it again as .xlsx`);
  const strings: string[] = [];
  const shared = zip.stream(partOfType(reader, 'sharedStrings') ?? 'xl/sharedStrings.xml');
  if (shared) await readSharedStrings(shared, strings);
  const styles = new Map<number, string | undefined>();
  const context: CellContext = {
    sharedString: (index) => {
      // A cell naming a shared string the workbook does not hold: never read it as empty.
      if (index >= strings.length) throw new UnreadableInputError(`${input}: the sheet '${name}' names shared string ${index}, but the workbook holds ${strings.length}: open it in Excel or LibreOffice and save it again as .xlsx`);
      return strings[index]!;
    },
    numFmt: (style) => {
      if (!styles.has(style)) styles.set(style, reader.styles.getStyleModel(style)?.numFmt);
      return styles.get(style);
    },
    date1904: reader.properties?.model?.date1904 === true,
  };
  let info: SheetRowsInfo | undefined;
  xml.on('error', () => {}); // its failure reaches the row loop through the iterator
  return { name, rows: sheetRows(xml, context, (i) => (info = i)), info: () => info, finish: () => void xml.destroy() };
}

/** Reads `input`, an .xlsx file, as a CsvSource whose records are the sheet's rows as text. */
export async function openWorkbook(input: string, options: WorkbookOptions = {}): Promise<CsvSource> {
  const totalBytes = fs.statSync(input).size;
  let sheet: OpenedSheet | undefined;
  let first: SheetRow[] | undefined;
  try {
    sheet = await openSheet(input, options.sheet);
    first = await nextRows(sheet);
  } catch (error) {
    sheet?.finish();
    throw workbookFailure(input, error);
  }
  if (first === undefined) {
    sheet.finish();
    throw new UnreadableInputError(`${input}: the sheet '${sheet.name}' is empty (no cell holds anything): give --sheet with the sheet of contacts`);
  }
  return workbookSource(input, sheet, first, options.header ?? true, totalBytes);
}

async function nextRows(sheet: OpenedSheet): Promise<SheetRow[] | undefined> {
  const next = await sheet.rows.next();
  return next.done ? undefined : next.value;
}

function workbookSource(input: string, sheet: OpenedSheet, first: SheetRow[], header: boolean, totalBytes: number): CsvSource {
  // Each record's cells as the sheet holds them, for as long as the record itself lives.
  const typed = new WeakMap<readonly string[], readonly SheetCell[]>();
  const record = (row: SheetRow): string[] => {
    const cells = row.cells.map((cell) => toBytes(cell.text));
    typed.set(cells, row.cells);
    return cells;
  };
  let pending: string[][] | undefined = first.map(record);
  const headerCells = header ? pending.shift()! : generatedHeader(pending);
  // The sheet row where the data begins, and the data records handed out so far (for the progress's total).
  const firstDataRow = first[header ? 1 : 0]?.number ?? first[0]!.number + 1;
  let handedOut = 0;
  if (pending.length === 0) pending = undefined;
  let lastRow = first.at(-1)!.number;
  let ended = false;
  const next = async (): Promise<string[][] | undefined> => {
    if (pending) {
      const batch = pending;
      pending = undefined;
      return batch;
    }
    if (ended) return undefined;
    const batch: string[][] = [];
    while (batch.length < BATCH_ROWS) {
      const rows = await nextRows(sheet).catch((error: unknown) => Promise.reject(workbookFailure(input, error)));
      if (rows === undefined) {
        ended = true;
        sheet.finish();
        break;
      }
      lastRow = rows.at(-1)!.number;
      for (const row of rows) batch.push(record(row));
    }
    return batch.length > 0 ? batch : undefined;
  };
  return {
    header: headerCells,
    batches: {
      [Symbol.asyncIterator]: () => ({
        next: async (): Promise<IteratorResult<string[][]>> => {
          const batch = await next();
          handedOut += batch?.length ?? 0;
          return batch ? { done: false, value: batch } : { done: true, value: undefined };
        },
      }),
    },
    delimiter: ',',
    recordDelimiter: '\n',
    encoding: 'utf-8',
    // A CSV output of a workbook is opened in a spreadsheet again: with a BOM, it reads as UTF-8.
    outputBom: true,
    sawInvalidUtf8: () => false,
    // The zip is read out of order (its directory, then its parts): the rows read of the rows
    // the sheet's <dimension> names stand in for the bytes read, for the progress's ETA.
    bytesRead: () => {
      const last = sheet.info()?.lastRow;
      if (ended) return totalBytes;
      return last ? Math.min(totalBytes - 1, Math.round((totalBytes * lastRow) / last)) : 0;
    },
    totalBytes,
    // From the rows the sheet's <dimension> names (empty rows in it are counted: an upper bound),
    // never less than the rows handed out; exact once the sheet is read.
    estimatedRecords: () => {
      if (ended && !pending) return { records: handedOut, exact: true };
      const last = sheet.info()?.lastRow;
      return last ? { records: Math.max(handedOut, last - firstDataRow + 1), exact: false } : undefined;
    },
    destroy: () => sheet.finish(),
    sheet: sheet.name,
    sheetCells: (cells) => typed.get(cells),
  };
}

/** The names of a workbook's sheets, in order (shell completion of --sheet). */
export async function sheetNamesOf(input: string): Promise<string[]> {
  try {
    const reader = await workbookParts(await WorkbookZip.open(input), input);
    return (reader.model?.sheets ?? []).map((sheet) => sheet.name);
  } catch (error) {
    throw workbookFailure(input, error);
  }
}
