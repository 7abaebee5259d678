// A worksheet cell as text, the way a person reads it in Excel (docs/cli-contract.md, "Spreadsheets"):
// strings as they are, whole numbers without exponent or `.0`, other numbers as their shortest
// exact decimal, dates as ISO 8601, booleans TRUE/FALSE, a formula as its last computed value,
// an error as its code (`#N/A`), an empty cell as ''. The value itself is kept beside the text,
// so that a workbook output can write numbers as numbers and dates as dates, and a formula with
// it. A cell that cannot be read as what its style says is kept as it is: a number out of Excel's
// date range in a date-styled cell (a phone number, which Excel shows as #####) stays that number.

/** What a cell holds: a date is a Date of its wall-clock time in UTC; an error its code. */
export type SheetValue = string | number | boolean | Date | { error: string } | null;

export interface SheetCell {
  value: SheetValue;
  /** The cell's number format (`yyyy-mm-dd`, `0.00`), kept for a workbook output. */
  numFmt: string | undefined;
  text: string;
  /** A formula's cell: its `<f>` element (the value is its last computed one, if any). */
  formula?: Formula | undefined;
}

/** A cell's `<f>` element as the sheet has it: its attributes (shared, array: t, ref, si) and text. */
export interface Formula {
  attributes: Record<string, string>;
  text: string;
}

/** A cell as the sheet's XML gives it (ECMA-376 §18.3.1.4): its type, its value, whether it is a formula's. */
export interface RawCell {
  /** The `t` attribute: s (shared string), str (a formula's string), inlineStr, b, e, n, d. */
  type: string | undefined;
  /** The `<v>` text, or the text of an inline string. */
  text: string;
  formula: Formula | undefined;
}

export interface CellContext {
  sharedString(index: number): string;
  numFmt(style: number): string | undefined;
  date1904: boolean;
}

export const EMPTY_CELL: SheetCell = { value: null, numFmt: undefined, text: '' };

/** The cell as value and text, its formula with it. */
export function sheetCell(raw: RawCell, style: number, context: CellContext): SheetCell {
  const cell = cellValue(raw, style, context);
  return raw.formula ? { ...cell, formula: raw.formula } : cell;
}

function cellValue(raw: RawCell, style: number, context: CellContext): SheetCell {
  const numFmt = context.numFmt(style);
  switch (raw.type) {
    case 's':
      return textCell(context.sharedString(Number(raw.text)), numFmt);
    case 'str':
    case 'inlineStr':
      return textCell(unescapeText(raw.text), numFmt);
    case 'b':
      return booleanCell(raw.text === '1' || raw.text.toLowerCase() === 'true', numFmt);
    case 'e':
      return { value: { error: raw.text }, numFmt, text: raw.text };
    case 'd':
      return isoDateCell(raw.text, numFmt);
    default:
      return numberCell(raw.text, numFmt, context.date1904);
  }
}

/**
 * Excel writes characters XML cannot hold as `_xHHHH_` (a carriage return is `_x000D_`), and an
 * underscore that would look like one as `_x005F_` (ECMA-376 §22.9.2.19, ST_Xstring).
 */
export function unescapeText(text: string): string {
  return text.includes('_x') ? text.replace(/_x([0-9a-fA-F]{4})_/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))) : text;
}

function textCell(text: string, numFmt: string | undefined): SheetCell {
  return { value: text === '' ? null : text, numFmt, text };
}

function booleanCell(value: boolean, numFmt: string | undefined): SheetCell {
  return { value, numFmt, text: value ? 'TRUE' : 'FALSE' };
}

function numberCell(text: string, numFmt: string | undefined, date1904: boolean): SheetCell {
  // A formula never computed (no cached value) reads as empty.
  if (text.trim() === '') return { value: null, numFmt, text: '' };
  const number = Number(text);
  if (!Number.isFinite(number)) return textCell(text, numFmt);
  // LibreOffice stores booleans (and formulas like =A1>0) as 1/0 formatted "TRUE";"TRUE";"FALSE".
  if (numFmt !== undefined && BOOLEAN_FORMAT.test(numFmt)) return booleanCell(number !== 0, numFmt);
  if (numFmt !== undefined && isDateFormat(numFmt) && inDateRange(number, date1904)) return serialDateCell(number, numFmt, date1904);
  return { value: number, numFmt, text: decimalText(number) };
}

const BOOLEAN_FORMAT = /^"([^"]*)";"\1";"[^"]*"$/;

/** Format codes without their quoted text and [brackets] (colours, locales, elapsed-time marks aside). */
function formatCodes(numFmt: string): string {
  return numFmt
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '')
    .replace(/\[(?!h\]|hh\]|m\]|mm\]|s\]|ss\])[^\]]*\]/gi, '');
}

/** A date or time format: it shows years, months, days, hours or seconds. */
export function isDateFormat(numFmt: string): boolean {
  return /[ymdhs]/i.test(formatCodes(numFmt)) && !/^general$/i.test(numFmt.trim());
}

function showsTime(numFmt: string): boolean {
  return /[hs]|am\/pm|a\/p/i.test(formatCodes(numFmt));
}

function showsDate(numFmt: string): boolean {
  return /[yd]/i.test(formatCodes(numFmt)) || (/m/i.test(formatCodes(numFmt)) && !showsTime(numFmt));
}

const DAY_MS = 86_400_000;

/** Serial 2958466 is 10000-01-01 in the 1900 system, 1462 days later in the 1904 one: past Excel's last date. */
const DATE_END = { 1900: 2_958_466, 1904: 2_958_466 - 1462 };

/** A serial Excel shows as a date: from 0 to its last day, 9999-12-31 (a negative one or any later shows as #####). */
function inDateRange(serial: number, date1904: boolean): boolean {
  return serial >= 0 && serial < DATE_END[date1904 ? 1904 : 1900];
}

/**
 * A serial date (days since the workbook's epoch, the time as the fraction) as the UTC Date of
 * its wall-clock time, to the second (what Excel shows). The 1900 system counts a 29 February
 * 1900 that never was (Lotus's bug, kept by Excel): serials before it are a day later.
 */
export function serialToDate(serial: number, date1904: boolean): Date {
  let days = Math.floor(serial);
  let seconds = Math.round((serial - days) * 86_400);
  if (seconds === 86_400) {
    days += 1;
    seconds = 0;
  }
  const epoch = date1904 ? Date.UTC(1904, 0, 1) : days < 60 ? Date.UTC(1899, 11, 31) : Date.UTC(1899, 11, 30);
  return new Date(epoch + days * DAY_MS + seconds * 1000);
}

function serialDateCell(serial: number, numFmt: string, date1904: boolean): SheetCell {
  const date = serialToDate(serial, date1904);
  const iso = date.toISOString();
  const time = iso.slice(11, 19);
  const hasTime = time !== '00:00:00' || showsTime(numFmt);
  let text: string;
  if (!showsDate(numFmt) && serial < 1) text = time;
  else text = hasTime ? `${iso.slice(0, 10)}T${time}` : iso.slice(0, 10);
  return { value: date, numFmt, text };
}

/** A `t="d"` cell holds an ISO 8601 date itself (strict OOXML, some writers). */
function isoDateCell(text: string, numFmt: string | undefined): SheetCell {
  const date = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(text) || !/T/.test(text) ? text : `${text}Z`);
  if (Number.isNaN(date.getTime())) return textCell(text, numFmt);
  const iso = date.toISOString();
  const time = iso.slice(11, 19);
  return { value: date, numFmt, text: time === '00:00:00' && !/T/.test(text) ? iso.slice(0, 10) : `${iso.slice(0, 10)}T${time}` };
}

/**
 * A number in plain decimal notation: JavaScript's shortest round-trip digits (what String() gives),
 * with any exponent written out, so 1e21 is 1000000000000000000000 and 1e-7 is 0.0000001.
 */
export function decimalText(number: number): string {
  if (Object.is(number, -0)) return '0';
  const shortest = String(number);
  const e = shortest.indexOf('e');
  if (e === -1) return shortest;
  const negative = shortest.startsWith('-');
  const mantissa = shortest.slice(negative ? 1 : 0, e);
  const exponent = Number(shortest.slice(e + 1));
  const point = mantissa.indexOf('.');
  const digits = mantissa.replace('.', '');
  const at = (point === -1 ? mantissa.length : point) + exponent;
  let plain: string;
  if (at <= 0) plain = `0.${'0'.repeat(-at)}${digits}`;
  else if (at >= digits.length) plain = digits + '0'.repeat(at - digits.length);
  else plain = `${digits.slice(0, at)}.${digits.slice(at)}`;
  return negative ? `-${plain}` : plain;
}
