// The enriched sheet's frame, found before the first lookup by reading its XML with its parser
// (saxes), as the workbook reader does: the XML before <sheetData> (the root element, column
// widths, views) and after it (hyperlinks, merged cells, page setup...), kept as the file has them,
// and what the rows between use, so that the added columns go after the last column any cell or
// merged range uses. A text search for `</sheetData>` would stop inside a cell's CDATA or a comment
// that holds it, and write whatever follows into the output's sheet. The rows must be in order and
// within the sheet's 1,048,576 (Excel's limits), since the output keeps each row at its number.
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { UnwritableOutputError } from '../api/errors.js';
import { MAX_COLUMNS } from '../read/workbook-limits.js';
import { optionWord } from '../options/option-table.js';
import { CSV_INSTEAD } from './output-words.js';

/** Where an element of the head lies in it: [its `<`, just past its end]. */
type Span = [start: number, end: number];

export interface SheetFrame {
  /** The sheet's XML before its <sheetData> element, and after it. */
  head: string;
  tail: string;
  /** Where the head's <dimension> and <sheetViews> lie, and where views go when it has none. */
  spans: { dimension?: Span; views?: Span; viewsAt: number };
  /** The namespace prefix its elements use (`x:`), or ''. */
  prefix: string;
  /** The last column (1-based) that a cell holding anything, or a merged range, uses; 0 when none does. */
  lastColumn: number;
  /** Where that column is used, for messages: a cell (`XFD1`) or a range (`B1:F1`). */
  lastColumnAt: string;
}

/** The last row of Excel's sheets. */
export const MAX_ROWS = 1_048_576;

const localName = (name: string): string => name.slice(name.indexOf(':') + 1);

/** Column letters of a reference (`AB12`, `$AB$12`) → 1-based column number (28); 0 without letters. */
export function columnOf(reference: string): number {
  let column = 0;
  for (let i = 0; i < reference.length; i += 1) {
    const code = reference.charCodeAt(i) | 0x20;
    if (code === 0x24) continue; // `$`
    if (code < 0x61 || code > 0x7a) break;
    column = column * 26 + (code - 0x60);
  }
  return column;
}

/** The rows' numbers and the columns used, as the parser meets them. */
class RowsSeen {
  lastColumn = 0;
  lastColumnAt = '';
  #row = 0;
  #column = 0;
  #cellAt = '';
  readonly #refuse: (why: string) => Error;

  constructor(refuse: (why: string) => Error) {
    this.#refuse = refuse;
  }

  row(r: string | undefined): void {
    const number = r === undefined ? this.#row + 1 : Number(r);
    if (!Number.isInteger(number) || number < 1) throw this.#refuse(`its sheet has a row numbered '${r}', which is no row number`);
    if (number <= this.#row)
      throw this.#refuse(`its sheet has its rows out of order (row ${number} comes after row ${this.#row}), and the output keeps each row at its number`);
    if (number > MAX_ROWS) throw this.#refuse(`its sheet has a row ${number}, past row 1,048,576, the last a worksheet has`);
    this.#row = number;
    this.#column = 0;
  }

  cell(r: string | undefined): void {
    this.#column = r ? columnOf(r) : this.#column + 1;
    this.#cellAt = r ?? '';
  }

  /** The cell holds something (a value, an inline string, a formula). */
  used(): void {
    if (this.#column > this.lastColumn) this.#use(this.#column, this.#cellAt || `row ${this.#row}`);
  }

  merge(ref: string | undefined): void {
    if (ref) this.#use(columnOf(ref.slice(ref.indexOf(':') + 1)), ref);
  }

  #use(column: number, at: string): void {
    if (column <= this.lastColumn) return;
    this.lastColumn = column;
    this.lastColumnAt = at;
  }
}

/** Reads a worksheet's XML once, keeping its text around <sheetData> and none of its rows. */
class FrameReader {
  readonly #parser = new SaxesParser();
  readonly #seen: RowsSeen;
  readonly #refuse: (why: string) => Error;
  #depth = 0;
  #inCell = false;
  /** The text before <sheetData> (all of it, from the start), then the text after it. */
  #head = '';
  #tail: string | undefined;
  /** The chunk the parser is reading, and where it begins in the whole text. */
  #chunk = '';
  #base = 0;
  #open: { prefix: string; at: number } | undefined;
  readonly #spans: { dimension?: Span; views?: Span; viewsAt?: number } = {};
  #started: Record<string, number> = {};

  constructor(refuse: (why: string) => Error) {
    this.#refuse = refuse;
    this.#seen = new RowsSeen(refuse);
    this.#parser.on('opentag', (tag) => this.#opened(tag));
    this.#parser.on('closetag', (tag) => this.#closed(tag));
  }

  write(text: string, limit: number): void {
    this.#chunk = text;
    const inTail = this.#tail !== undefined;
    this.#parser.write(text);
    this.#base += text.length;
    if (inTail) this.#tail += text;
    else if (!this.#open) this.#head += text;
    if (this.#head.length + (this.#tail?.length ?? 0) > limit) throw this.#refuse(`its worksheet holds more than ${limit} characters around its rows`);
  }

  end(): SheetFrame {
    this.#parser.close();
    const open = this.#open;
    if (!open || this.#tail === undefined) throw this.#refuse('its worksheet has no <sheetData> element that ends');
    const head = this.#head.slice(0, open.at);
    const spans = { ...this.#spans, viewsAt: this.#spans.viewsAt ?? open.at };
    return { head, tail: this.#tail, spans, prefix: open.prefix, lastColumn: this.#seen.lastColumn, lastColumnAt: this.#seen.lastColumnAt };
  }

  /** Where the tag just read began: the last `<` before the parser's position (no attribute value holds one). */
  #tagStart(): number {
    const inChunk = this.#chunk.lastIndexOf('<', this.#parser.position - this.#base - 1);
    return inChunk === -1 ? this.#head.lastIndexOf('<') : this.#base + inChunk;
  }

  #opened(tag: SaxesTagPlain): void {
    this.#depth += 1;
    const name = localName(tag.name);
    if (name === 'c') {
      this.#inCell = true;
      this.#seen.cell(tag.attributes.r as string | undefined);
    } else if (this.#inCell && (name === 'v' || name === 'f' || name === 'is')) {
      this.#seen.used();
    } else if (name === 'row') {
      this.#seen.row(tag.attributes.r as string | undefined);
    } else if (name === 'mergeCell') {
      this.#seen.merge(tag.attributes.ref as string | undefined);
    } else if (this.#depth === 2 && !this.#open) {
      this.#headElement(name, tag);
    } else if (name === 'sheetData' && this.#depth === 2) {
      throw this.#refuse('its worksheet holds two <sheetData> elements');
    }
  }

  #headElement(name: string, tag: SaxesTagPlain): void {
    const at = this.#tagStart();
    if (name === 'sheetData') {
      this.#head += this.#chunk.slice(0, this.#parser.position - this.#base);
      this.#open = { prefix: tag.name.slice(0, tag.name.length - name.length), at };
    } else if (name === 'dimension' || name === 'sheetViews') {
      this.#started[name] = at;
    } else if ((name === 'sheetFormatPr' || name === 'cols') && this.#spans.viewsAt === undefined) {
      // Views come before the format properties and the columns (CT_Worksheet's order).
      this.#spans.viewsAt = at;
    }
  }

  #closed(tag: SaxesTagPlain): void {
    this.#depth -= 1;
    const name = localName(tag.name);
    if (name === 'c') {
      this.#inCell = false;
    } else if (this.#depth === 1 && name === 'sheetData') {
      this.#tail = this.#chunk.slice(this.#parser.position - this.#base);
    } else if (this.#depth === 1 && (name === 'dimension' || name === 'sheetViews') && !this.#open) {
      this.#spans[name === 'dimension' ? 'dimension' : 'views'] = [this.#started[name]!, this.#parser.position];
    }
  }
}

/** The frame of a worksheet of `input`, from its inflated bytes; refused in one line when the output could not keep its rows. */
export async function frameSheet(chunks: AsyncIterable<Buffer | string>, where: { input: string; part: string; limit: number }): Promise<SheetFrame> {
  const refuse = (why: string): Error =>
    new UnwritableOutputError(
      `Cannot write the workbook of ${where.input}: ${why.replace('its worksheet', `its worksheet ${where.part}`)}; open it in Excel or LibreOffice and save it again, or ${CSV_INSTEAD()}`,
    );
  const reader = new FrameReader(refuse);
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of chunks) reader.write(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }), where.limit);
  reader.write(decoder.decode(), where.limit);
  return reader.end();
}

/** No column may lie past XFD: the columns the run adds must fit after the ones the sheet uses. */
export function checkRoom(frame: Pick<SheetFrame, 'lastColumn' | 'lastColumnAt'>, width: number, added: number, input: string): void {
  if (Math.max(frame.lastColumn, width) + added <= MAX_COLUMNS) return;
  const used = frame.lastColumn >= width ? `its sheet uses column ${frame.lastColumn} (${frame.lastColumnAt})` : `its header has ${width} columns`;
  throw new UnwritableOutputError(
    `Cannot write the workbook of ${input}: ${used}, and the ${added} columns the run adds after it would lie past column XFD (${MAX_COLUMNS}), the last a worksheet has; ${CSV_INSTEAD()}, or choose fewer columns with ${optionWord('fields')}`,
  );
}
