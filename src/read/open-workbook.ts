// The read phase for an .xlsx input (docs/cli-contract.md, "Spreadsheets"): the first worksheet, or the
// one --sheet names, streamed row by row into the same byte-string records a CSV gives, so plan,
// look-up and write work the same. Each record's cells as the sheet holds them (numbers, dates,
// booleans) are kept beside it, for a workbook output that keeps their types.
//
// The zip is read from its central directory (workbook-zip.ts), in the order we need its parts:
// the sheet list, the relationships and the styles (workbook-parts.ts), then the shared strings
// and the worksheet, streamed (sheet-rows.ts).
import fs from 'node:fs';
import { ConfigError, UnreadableInputError } from '../api/errors.js';
import { optionAsked, optionWord } from '../options/option-table.js';
import { toBytes } from './byte-string.js';
import type { CsvSource } from './open-csv.js';
import { generatedHeader } from './generated-header.js';
import type { CellContext, SheetCell } from './sheet-cells.js';
import { readSharedStrings, sheetRows, type SheetGuard, type SheetRow, type SheetRowsInfo } from './sheet-rows.js';
import { boundedPart, WORKBOOK_LIMITS, type WorkbookLimits } from './workbook-limits.js';
import { parseRelationships, parseStyles, parseWorkbook, partOfType, partText, type Relationship, type SheetEntry } from './workbook-parts.js';
import { WorkbookZip, workbookPartPath } from './workbook-zip.js';

export interface WorkbookOptions {
  /** A worksheet's name, or its 1-based position. Default: the first. */
  sheet?: string | undefined;
  /** The first row that holds anything is the header (default true). */
  header?: boolean | undefined;
  /** --skip-lines: the sheet's rows 1 to N are not the table; the header is the first row after them that holds anything. */
  skipLines?: number | undefined;
  /** Bounds on what the workbook may make the read hold (default WORKBOOK_LIMITS): tests lower them. */
  limits?: Partial<WorkbookLimits> | undefined;
}

const BATCH_ROWS = 512;

interface WorkbookParts {
  rels: Relationship[];
  sheets: SheetEntry[];
  date1904: boolean;
  numFmt: (style: number) => string | undefined;
}

/** The sheet list, relationships and styles of the workbook. */
async function workbookParts(zip: WorkbookZip, guard: SheetGuard): Promise<WorkbookParts> {
  const { input } = guard;
  const [rels, book] = ['xl/_rels/workbook.xml.rels', 'xl/workbook.xml'];
  if (!zip.has(rels) || !zip.has(book)) {
    throw new UnreadableInputError(`${input} holds no worksheet that can be read (is it an .xlsb or a strict OOXML file?): save it as .xlsx or CSV`);
  }
  const relationships = parseRelationships(await partText(boundedPart(zip, rels, guard.limits)!));
  const { sheets, date1904 } = parseWorkbook(await partText(boundedPart(zip, book, guard.limits)!));
  const styles = boundedPart(zip, partOfType(relationships, 'styles', workbookPartPath) ?? 'xl/styles.xml', guard.limits);
  const numFmt = styles ? parseStyles(await partText(styles)) : () => undefined;
  return { rels: relationships, sheets, date1904, numFmt };
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
  throw new ConfigError(
    `Invalid option ${optionWord('sheet')}: ${input} has no sheet '${wanted}'; its sheets are ${names}: give ${optionAsked('sheet', 'NAME or --sheet N', 'a name or a 1-based position')}`,
  );
}

/** A failure of the zip or the XML, as one line naming the input. */
function workbookFailure(input: string, error: unknown): Error {
  if (error instanceof ConfigError || error instanceof UnreadableInputError) return error;
  const message = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, ' ');
  // yauzl's words for a zip cut short: its directory or a part's data lies past the file's end.
  const cut = /end of central directory record signature not found|overflows file bounds|unexpected EOF/i.test(message);
  const why = cut ? 'the file ends before the workbook does (cut short?)' : message;
  return new UnreadableInputError(`Cannot read the workbook ${input}: ${why}; open it in Excel or LibreOffice and save it again as .xlsx (or as CSV)`, {
    cause: error,
  });
}

interface OpenedSheet {
  name: string;
  /** The worksheet's path in the zip. */
  part: string;
  zip: WorkbookZip;
  rows: AsyncGenerator<SheetRow[]>;
  info: () => SheetRowsInfo | undefined;
  /** Stops reading the worksheet. */
  finish(): void;
}

async function openSheet(guard: SheetGuard, wanted: string | undefined): Promise<OpenedSheet> {
  const zip = await WorkbookZip.open(guard.input);
  try {
    return await sheetOf(zip, guard, wanted);
  } catch (error) {
    zip.close();
    throw error;
  }
}

async function sheetOf(zip: WorkbookZip, guard: SheetGuard, wanted: string | undefined): Promise<OpenedSheet> {
  const { input } = guard;
  const parts = await workbookParts(zip, guard);
  const name = chosenSheet(parts.sheets, wanted, input);
  const rId = parts.sheets.find((sheet) => sheet.name === name)?.rId;
  const target = parts.rels.find((rel) => rel.id === rId)?.target;
  const part = target === undefined ? undefined : workbookPartPath(target);
  const xml = part === undefined ? undefined : zip.stream(part);
  if (!xml || part === undefined)
    throw new UnreadableInputError(
      `${input}: the sheet '${name}' is named in the workbook but its worksheet is missing from the file: open it in Excel or LibreOffice and save it again as .xlsx`,
    );
  const strings: string[] = [];
  const shared = zip.stream(partOfType(parts.rels, 'sharedStrings', workbookPartPath) ?? 'xl/sharedStrings.xml');
  if (shared) await readSharedStrings(shared, strings, guard);
  const styles = new Map<number, string | undefined>();
  const context: CellContext = {
    sharedString: (index) => {
      // A cell naming a shared string the workbook does not hold: never read it as empty.
      if (index >= strings.length)
        throw new UnreadableInputError(
          `${input}: the sheet '${name}' names shared string ${index}, but the workbook holds ${strings.length}: open it in Excel or LibreOffice and save it again as .xlsx`,
        );
      return strings[index]!;
    },
    numFmt: (style) => {
      if (!styles.has(style)) styles.set(style, parts.numFmt(style));
      return styles.get(style);
    },
    date1904: parts.date1904,
  };
  let info: SheetRowsInfo | undefined;
  xml.on('error', () => {}); // its failure reaches the row loop through the iterator
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    xml.destroy();
    zip.close();
  };
  return { name, part, zip, rows: sheetRows(xml, context, guard, (i) => (info = i)), info: () => info, finish };
}

/** Reads `input`, an .xlsx file, as a CsvSource whose records are the sheet's rows as text. */
export async function openWorkbook(input: string, options: WorkbookOptions = {}): Promise<CsvSource> {
  const totalBytes = fs.statSync(input).size;
  const skip = options.skipLines ?? 0;
  let sheet: OpenedSheet | undefined;
  let start: { above: SheetRow[]; first: SheetRow[] | undefined };
  try {
    sheet = await openSheet({ input, limits: { ...WORKBOOK_LIMITS, ...options.limits } }, options.sheet);
    start = await rowsAfter(sheet, skip);
  } catch (error) {
    sheet?.finish();
    throw workbookFailure(input, error);
  }
  if (start.first === undefined) {
    sheet.finish();
    const below = skip > 0 ? ` below row ${skip} (${optionWord('skipLines')} ${skip})` : '';
    throw new UnreadableInputError(
      `${input}: the sheet '${sheet.name}' is empty${below} (no cell holds anything): give ${optionWord('sheet')} with the sheet of contacts`,
    );
  }
  return workbookSource(input, sheet, { above: start.above, first: start.first }, options.header ?? true, totalBytes);
}

/** --skip-lines N: the rows numbered up to N are set aside (a workbook output keeps them as they are); the first batch after them. */
async function rowsAfter(sheet: OpenedSheet, skip: number): Promise<{ above: SheetRow[]; first: SheetRow[] | undefined }> {
  const above: SheetRow[] = [];
  for (let batch = await nextRows(sheet); batch !== undefined; batch = await nextRows(sheet)) {
    const at = batch.findIndex((row) => row.number > skip);
    if (at !== -1) return { above: [...above, ...batch.slice(0, at)], first: batch.slice(at) };
    above.push(...batch);
  }
  return { above, first: undefined };
}

async function nextRows(sheet: OpenedSheet): Promise<SheetRow[] | undefined> {
  const next = await sheet.rows.next();
  return next.done ? undefined : next.value;
}

function workbookSource(input: string, sheet: OpenedSheet, start: { above: SheetRow[]; first: SheetRow[] }, header: boolean, totalBytes: number): CsvSource {
  const { first } = start;
  // Each record's cells as the sheet holds them, for as long as the record itself lives.
  const typed = new WeakMap<readonly string[], SheetRow>();
  const record = (row: SheetRow): string[] => {
    const cells = row.cells.map((cell) => toBytes(cell.text));
    typed.set(cells, row);
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
    sheetCells: (cells) => typed.get(cells)?.cells,
    // The workbook output keeps each row where the sheet had it (hyperlinks, merged cells and
    // other sheets' formulas point at rows by number) and copies the workbook's other parts.
    workbook: { file: input, part: sheet.part, zip: sheet.zip, above: start.above, row: (cells) => typed.get(cells)?.number },
  };
}

/** The names of a workbook's sheets, in order (shell completion of --sheet). */
export async function sheetNamesOf(input: string): Promise<string[]> {
  let zip: WorkbookZip | undefined;
  try {
    zip = await WorkbookZip.open(input);
    const parts = await workbookParts(zip, { input, limits: WORKBOOK_LIMITS });
    return parts.sheets.map((sheet) => sheet.name);
  } catch (error) {
    throw workbookFailure(input, error);
  } finally {
    zip?.close();
  }
}
