// The enriched worksheet's rows as SpreadsheetML (ECMA-376 §18.3.1): a typed cell as its type
// (numbers `<v>`, booleans t="b", errors t="e", dates as the serial number with a date style), a
// text cell as an inline string (t="inlineStr"): a reader takes it as text whatever it holds, where
// a formula-string cell (t="str") holding "217" is read as a number by some readers. An input
// cell's formula is written back with its last computed value, if it had one. A text longer than
// a cell holds in Excel (32,767 characters) is cut there, and said (RowStyles.cut).
import type { SheetCell } from '../read/index.js';

/** A cell to write: a typed cell of the input, or text (input text, lead_status, added cells). */
export type OutCell = SheetCell | string | undefined;

export interface RowStyles {
  /** The style index of a cell with this number format (undefined: the default style). */
  numFmt(code: string | undefined): number;
  /** The style index of a header cell. */
  readonly header: number;
  date1904: boolean;
  /** Told of each text cut to MAX_CELL_CHARS, by its reference. */
  cut(ref: string): void;
}

/** The characters a cell holds in Excel. */
export const MAX_CELL_CHARS = 32_767;

/** Date cells need a date format to show as dates; one the input gave is kept. */
const DATE_FORMAT = 'yyyy-mm-dd';
const DATE_TIME_FORMAT = 'yyyy-mm-dd hh:mm:ss';
const DAY_MS = 86_400_000;

const letters: string[] = [];

/** Column letters of a 0-based column (0 → A, 27 → AB). */
export function columnName(index: number): string {
  let name = letters[index];
  if (name !== undefined) return name;
  name = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  letters[index] = name;
  return name;
}

/**
 * Text as XML element content: markup characters escaped, and what XML cannot hold (control
 * characters, a carriage return that XML would turn into a line feed) written as Excel does,
 * `_xHHHH_`, with a literal `_xHHHH_` protected as `_x005F_xHHHH_` (ST_Xstring).
 */
export function xmlText(text: string): string {
  let out = text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
  if (out.includes('_x')) out = out.replace(/_x(?=[0-9a-fA-F]{4}_)/g, '_x005F_x');
  // eslint-disable-next-line no-control-regex
  return /[\x00-\x08\x0b-\x1f\ufffe\uffff]/.test(out)
    ? out.replace(/[\x00-\x08\x0b-\x1f\ufffe\uffff]/g, (c) => `_x${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}_`)
    : out;
}

/** An attribute value in double quotes. */
export const xmlAttribute = (text: string): string => xmlText(text).replace(/"/g, '&quot;');

const dateFormatOf = (date: Date): string => (date.getTime() % DAY_MS !== 0 ? DATE_TIME_FORMAT : DATE_FORMAT);

/** A date's serial number in the workbook's date system (the inverse of the reader's serialToDate). */
export function dateSerial(date: Date, date1904: boolean): number {
  const ms = date.getTime();
  if (date1904) return (ms - Date.UTC(1904, 0, 1)) / DAY_MS;
  const serial = (ms - Date.UTC(1899, 11, 30)) / DAY_MS;
  // Before 1 March 1900 Excel's serials are a day less (it counts a 29 February 1900 that never was).
  return serial < 61 ? serial - 1 : serial;
}

/** Text within a cell's limit; a longer one cut there (not between the two halves of a character). */
function withinCell(ref: string, text: string, styles: RowStyles): string {
  if (text.length <= MAX_CELL_CHARS) return text;
  styles.cut(ref);
  const end = /[\ud800-\udbff]/.test(text[MAX_CELL_CHARS - 1]!) ? MAX_CELL_CHARS - 1 : MAX_CELL_CHARS;
  return text.slice(0, end);
}

function textCell(ref: string, text: string, style: string, styles: RowStyles): string {
  if (text === '') return '';
  const kept = withinCell(ref, text, styles);
  const space = /^\s|\s$/.test(kept) ? ' xml:space="preserve"' : '';
  return `<c r="${ref}"${style} t="inlineStr"><is><t${space}>${xmlText(kept)}</t></is></c>`;
}

/** Markup characters escaped: the text of a formula (ST_Formula, which has no `_xHHHH_` escapes). */
const formulaText = (text: string): string => text.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));

/** A formula's cell: its `<f>` as the input had it, then its last computed value, if any. */
function formulaCell(ref: string, cell: SheetCell, style: string, styles: RowStyles): string {
  const { attributes, text } = cell.formula!;
  let f = '<f';
  for (const [name, value] of Object.entries(attributes)) f += ` ${name}="${xmlAttribute(value)}"`;
  f += text === '' ? '/>' : `>${formulaText(text)}</f>`;
  const { value } = cell;
  if (value === null) return `<c r="${ref}"${style}>${f}</c>`;
  if (typeof value === 'string') return `<c r="${ref}"${style} t="str">${f}<v>${xmlText(withinCell(ref, value, styles))}</v></c>`;
  if (typeof value === 'boolean') return `<c r="${ref}"${style} t="b">${f}<v>${value ? 1 : 0}</v></c>`;
  if (typeof value === 'number') return `<c r="${ref}"${style}>${f}<v>${value}</v></c>`;
  if (value instanceof Date) return `<c r="${ref}"${style}>${f}<v>${dateSerial(value, styles.date1904)}</v></c>`;
  return `<c r="${ref}"${style} t="e">${f}<v>${xmlText(value.error)}</v></c>`;
}

function typedCell(ref: string, cell: SheetCell, styles: RowStyles, header: boolean): string {
  const { value } = cell;
  const style = (code: string | undefined): string => {
    const index = header ? styles.header : styles.numFmt(code);
    return index === 0 ? '' : ` s="${index}"`;
  };
  if (cell.formula) return formulaCell(ref, cell, style(value instanceof Date ? (cell.numFmt ?? dateFormatOf(value)) : cell.numFmt), styles);
  if (value === null) return '';
  if (typeof value === 'string') return textCell(ref, value, style(cell.numFmt), styles);
  if (typeof value === 'number') return `<c r="${ref}"${style(cell.numFmt)}><v>${value}</v></c>`;
  if (typeof value === 'boolean') return `<c r="${ref}"${style(cell.numFmt)} t="b"><v>${value ? 1 : 0}</v></c>`;
  if (value instanceof Date) return `<c r="${ref}"${style(cell.numFmt ?? dateFormatOf(value))}><v>${dateSerial(value, styles.date1904)}</v></c>`;
  return `<c r="${ref}"${style(undefined)} t="e"><v>${xmlText(value.error)}</v></c>`;
}

/** One `<row>`: its cells from column A, empty ones left out. */
export function rowXml(number: number, cells: readonly OutCell[], styles: RowStyles, header = false, prefix = ''): string {
  let xml = '';
  const textStyle = header && styles.header !== 0 ? ` s="${styles.header}"` : '';
  for (let i = 0; i < cells.length; i += 1) {
    const cell = cells[i];
    if (cell === undefined) continue;
    const ref = columnName(i) + number;
    xml += typeof cell === 'string' ? textCell(ref, cell, textStyle, styles) : typedCell(ref, cell, styles, header);
  }
  if (prefix !== '') xml = xml.replace(/<(\/?)(c|v|is|t|f)\b/g, `<$1${prefix}$2`);
  return `<${prefix}row r="${number}">${xml}</${prefix}row>`;
}
