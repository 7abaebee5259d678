// A worksheet's XML (ECMA-376 §18.3.1: <sheetData><row r="3"><c r="B3" s="1" t="s"><v>0</v></c>)
// as rows of cells, streamed: the XML is decoded with one streaming TextDecoder, so a character cut
// between two chunks of the zip stays whole (exceljs 4.4's own worksheet reader decodes each chunk
// alone and turns such characters into U+FFFD: exceljs#2063, #2316), and each cell keeps its type
// (exceljs reads a formula's boolean result as 1 and its error as NaN). Tag names are compared
// without a namespace prefix, since some writers spell them <x:row>.
import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { EMPTY_CELL, sheetCell, unescapeText, type CellContext, type RawCell, type SheetCell } from './sheet-cells.js';
import { columnOverLimit, count, MAX_COLUMNS, overLimit, TextBound, textOverLimit, type WorkbookLimits } from './workbook-limits.js';

/** The workbook's name for messages, and the bounds its XML is read within. */
export interface SheetGuard {
  input: string;
  limits: WorkbookLimits;
}

export interface SheetRow {
  /** The row's 1-based number in the sheet. */
  number: number;
  /** Its cells from column A, up to its last cell that holds anything. */
  cells: SheetCell[];
}

export interface SheetRowsInfo {
  /** The last row the sheet's <dimension> names, when it names one: for progress. */
  lastRow: number | undefined;
}

/** Column letters of a reference (`AB12`) → 1-based column number (28). */
function columnOf(reference: string): number {
  let column = 0;
  for (let i = 0; i < reference.length; i += 1) {
    const code = reference.charCodeAt(i) | 0x20;
    if (code < 0x61 || code > 0x7a) break;
    column = column * 26 + (code - 0x60);
  }
  return column;
}

const localName = (name: string): string => name.slice(name.indexOf(':') + 1);

/** Parses rows as the XML arrives; `take()` hands over the rows completed so far. */
class SheetParser {
  readonly info: SheetRowsInfo = { lastRow: undefined };
  readonly #parser = new SaxesParser();
  readonly #context: CellContext;
  readonly #guard: SheetGuard;
  readonly #bound: TextBound;
  #ready: SheetRow[] = [];
  #row: SheetRow | undefined;
  #rowNumber = 0;
  #column = 0;
  #cell: { raw: RawCell; style: number } | undefined;
  /** Inside <v>, or a <t> of an inline string outside its phonetic reading (<rPh>). */
  #capturing = false;
  #phonetic = false;
  /** Inside the cell's <f>: its text is the formula's. */
  #inFormula = false;

  constructor(context: CellContext, guard: SheetGuard) {
    this.#context = context;
    this.#guard = guard;
    this.#bound = new TextBound(guard.limits.textChars, () => textOverLimit(guard.input, guard.limits));
    this.#parser.on('opentag', (tag) => {
      this.#bound.tag();
      this.#open(tag);
    });
    this.#parser.on('closetag', (tag) => {
      this.#bound.tag();
      this.#close(localName(tag.name));
    });
    this.#parser.on('text', (text) => this.#text(text));
    this.#parser.on('cdata', (text) => this.#text(text));
  }

  write(text: string): void {
    this.#bound.feed(text.length);
    this.#parser.write(text);
  }

  close(): void {
    this.#parser.close();
  }

  take(): SheetRow[] {
    const rows = this.#ready;
    this.#ready = [];
    return rows;
  }

  #text(text: string): void {
    if (!this.#cell) return;
    if (this.#capturing) this.#cell.raw.text += text;
    else if (this.#inFormula) this.#cell.raw.formula!.text += text;
  }

  #open(tag: SaxesTagPlain): void {
    const name = localName(tag.name);
    const attributes = tag.attributes as Record<string, string>;
    if (name === 'c' && this.#row) {
      this.#column = attributes.r ? columnOf(attributes.r) : this.#column + 1;
      // Before the row is padded up to it: column ZZZZ would be half a million empty cells.
      if (this.#column > MAX_COLUMNS) throw columnOverLimit(this.#guard.input, attributes.r ?? '', this.#column);
      this.#cell = { raw: { type: attributes.t, text: '', formula: undefined }, style: Number(attributes.s ?? 0) };
    } else if (name === 'v' || (name === 't' && !this.#phonetic)) {
      this.#capturing = true;
    } else if (name === 'f' && this.#cell) {
      this.#cell.raw.formula = { attributes: { ...attributes }, text: '' };
      this.#inFormula = true;
    } else if (name === 'rPh') {
      this.#phonetic = true;
    } else if (name === 'row') {
      this.#rowNumber = attributes.r ? Number(attributes.r) : this.#rowNumber + 1;
      this.#row = { number: this.#rowNumber, cells: [] };
      this.#column = 0;
    } else if (name === 'dimension' && attributes.ref) {
      const last = /(\d+)$/.exec(attributes.ref);
      this.info.lastRow = last ? Number(last[1]) : undefined;
    }
  }

  #close(name: string): void {
    if (name === 'v' || name === 't') {
      this.#capturing = false;
    } else if (name === 'f') {
      this.#inFormula = false;
    } else if (name === 'rPh') {
      this.#phonetic = false;
    } else if (name === 'c' && this.#row && this.#cell) {
      const cell = sheetCell(this.#cell.raw, this.#cell.style, this.#context);
      this.#cell = undefined;
      // A formula never computed (no cached value) is no empty cell: the output keeps it.
      if (cell.text === '' && cell.value === null && !cell.formula) return;
      const cells = this.#row.cells;
      while (cells.length < this.#column - 1) cells.push(EMPTY_CELL);
      cells[this.#column - 1] = cell;
    } else if (name === 'row' && this.#row) {
      if (this.#row.cells.length > 0) this.#ready.push(this.#row);
      this.#row = undefined;
    }
  }
}

/**
 * The rows of a worksheet's XML that hold anything, in batches as the chunks arrive (a row of
 * empty or only formatted cells is no row, like a blank line of a CSV).
 */
export async function* sheetRows(
  chunks: AsyncIterable<Buffer | string>,
  context: CellContext,
  guard: SheetGuard,
  info?: (info: SheetRowsInfo) => void,
): AsyncGenerator<SheetRow[]> {
  const parser = new SheetParser(context, guard);
  info?.(parser.info);
  const decoder = new TextDecoder('utf-8');
  for await (const chunk of chunks) {
    parser.write(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
    const rows = parser.take();
    if (rows.length > 0) yield rows;
  }
  parser.write(decoder.decode());
  parser.close();
  const rows = parser.take();
  if (rows.length > 0) yield rows;
}

/** Adds to `strings` the text of shared strings (xl/sharedStrings.xml, §18.4.9): each <si>'s <t> texts, phonetic readings left out. */
export async function readSharedStrings(chunks: AsyncIterable<Buffer | string>, strings: string[], guard: SheetGuard): Promise<void> {
  const { input, limits } = guard;
  const parser = new SaxesParser();
  const bound = new TextBound(limits.textChars, () => textOverLimit(input, limits));
  let text = '';
  let chars = 0;
  let capturing = false;
  let phonetic = false;
  parser.on('opentag', (tag) => {
    bound.tag();
    const name = localName(tag.name);
    if (name === 'si') text = '';
    else if (name === 't' && !phonetic) capturing = true;
    else if (name === 'rPh') phonetic = true;
  });
  parser.on('closetag', (tag) => {
    bound.tag();
    const name = localName(tag.name);
    if (name === 't') capturing = false;
    else if (name === 'rPh') phonetic = false;
    else if (name === 'si') {
      // All of them stay in memory while the sheet is read: bounded in number and in characters.
      if (strings.length >= limits.sharedStrings)
        throw overLimit(input, `it holds more than ${count(limits.sharedStrings)} shared strings (the limit of distinct texts)`);
      strings.push(unescapeText(text));
    }
  });
  parser.on('text', (chunk) => {
    if (!capturing) return;
    chars += chunk.length;
    if (chars > limits.sharedStringChars)
      throw overLimit(input, `its shared strings hold more than ${count(limits.sharedStringChars)} characters (the limit of all distinct texts together)`);
    text += chunk;
  });
  const decoder = new TextDecoder('utf-8');
  const write = (text: string) => {
    bound.feed(text.length);
    parser.write(text);
  };
  for await (const chunk of chunks) write(typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true }));
  write(decoder.decode());
  parser.close();
}
