// What a file that is not CSV text looks like, told from its first bytes (docs/cli-contract.md "Input
// files", Refused): an .xlsx is read as a workbook when it is a file (isWorkbookFile); any other
// workbook, a PDF or a zip is refused with a line that names it and says what to do, never with
// the parser's complaint about a stray quote in binary. A few magic numbers are
// enough for these kinds; the `file-type` package would bring a dependency tree for the same four.
import fs from 'node:fs';
import { UnreadableInputError } from '../api/errors.js';
import { optionAsked } from '../options/option-table.js';

/** The kinds of file that are refused, and what to tell the user about each. */
const REFUSALS = {
  // A workbook is read from its path (read/open-workbook.ts): this is for standard input, a stream, gzip.
  xlsx: 'is an Excel workbook, which is read from its path only (not from standard input, a stream or gzip): give the .xlsx file itself, or save it as CSV',
  xlsb: 'is an Excel binary workbook (.xlsb): save it as .xlsx (File → Save As → Excel Workbook) or as CSV and give that file',
  xls: 'is an Excel 97-2003 workbook (.xls) or another old Office file: save it as .xlsx (File → Save As → Excel Workbook) or as CSV and give that file',
  ods: 'is an OpenDocument spreadsheet (.ods): save it as .xlsx (File → Save As → Excel 2007-365) or as CSV and give that file',
  zip: 'is a zip archive: unzip it and give the CSV file inside',
  pdf: 'is a PDF document: export the table from the program that made it as CSV',
  'utf-16le': 'looks like UTF-16 text without a byte-order mark: give ENCODING',
  'utf-16be': 'looks like UTF-16 text without a byte-order mark: give ENCODING',
  binary: 'is a binary file, not CSV text: give a CSV file',
} as const;

export type RefusedKind = keyof typeof REFUSALS;

const ZIP = [0x50, 0x4b]; // "PK", then 03 04 (a file), 05 06 (empty) or 07 08 (spanned)
const OLE2 = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];
const PDF = [0x25, 0x50, 0x44, 0x46, 0x2d]; // "%PDF-"
const ODS_MIMETYPE = Buffer.from('application/vnd.oasis.opendocument.spreadsheet');
const XLSX_PART = Buffer.from('xl/');
const XLSB_PART = Buffer.from('xl/workbook.bin');

function startsWith(head: Buffer, magic: number[]): boolean {
  return magic.every((byte, i) => head[i] === byte);
}

/**
 * The refused kind the head shows, or undefined for text. `utf16` is true when the file is known to
 * be UTF-16 (a byte-order mark or --encoding said so): its NUL bytes are then text.
 */
export function refusedKind(head: Buffer, utf16: boolean): RefusedKind | undefined {
  if (startsWith(head, ZIP) && [0x03, 0x05, 0x07].includes(head[2] ?? -1)) {
    // An .ods stores its mimetype uncompressed, first; an .xlsx names its parts "xl/...".
    if (head.includes(ODS_MIMETYPE)) return 'ods';
    if (head.includes(XLSB_PART)) return 'xlsb';
    return head.includes(XLSX_PART) ? 'xlsx' : 'zip';
  }
  if (startsWith(head, OLE2)) return 'xls';
  if (startsWith(head, PDF)) return 'pdf';
  if (!utf16 && head.includes(0)) return utf16WithoutBom(head) ?? (isBinary(head) ? 'binary' : undefined);
  return undefined;
}

/**
 * Binary files (images, executables, databases) hold NUL bytes among control bytes that text never
 * has; a CSV may hold NUL bytes in its cells (a broken export, fixed-width fields padded with NUL
 * by an old database), which are copied through like any other byte. So the head is binary when
 * what is not NUL is not text: nothing at all, or more than one byte in a hundred a control
 * character other than tab, the line endings, vertical tab and form feed (FileMaker and old
 * exports use those in cells), SUB (an MS-DOS end-of-file mark) and ESC.
 */
function isBinary(head: Buffer): boolean {
  let nuls = 0;
  let controls = 0;
  for (const byte of head) {
    if (byte === 0) nuls += 1;
    else if ((byte < 0x20 && !TEXT_CONTROLS.has(byte)) || byte === 0x7f) controls += 1;
  }
  const rest = head.length - nuls;
  return rest === 0 || controls * 100 > rest;
}

/** Control bytes that text files hold: tab, LF, vertical tab, form feed, CR, SUB and ESC. */
const TEXT_CONTROLS = new Set([0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1a, 0x1b]);

/** UTF-16 text of mostly Latin letters has a NUL in every other byte, always on the same side. */
function utf16WithoutBom(head: Buffer): 'utf-16le' | 'utf-16be' | undefined {
  const pairs = Math.min(head.length, 4096) >> 1;
  let evenNuls = 0;
  let oddNuls = 0;
  for (let i = 0; i < pairs * 2; i += 2) {
    if (head[i] === 0) evenNuls += 1;
    if (head[i + 1] === 0) oddNuls += 1;
  }
  if (oddNuls > pairs * 0.5 && evenNuls === 0) return 'utf-16le';
  if (evenNuls > pairs * 0.5 && oddNuls === 0) return 'utf-16be';
  return undefined;
}

/** Whether the file at `path` is an .xlsx workbook (by its first bytes, whatever its name); false when it cannot be read. */
export function isWorkbookFile(path: string): boolean {
  let fd: number | undefined;
  try {
    // Only a regular file: opening a named pipe waits for its writer, and would block the process
    // (signals too) until one came; a pipe is no workbook anyway (read from its path only).
    if (!fs.statSync(path).isFile()) return false;
    fd = fs.openSync(path, 'r');
    const head = Buffer.alloc(64 * 1024);
    const length = fs.readSync(fd, head, 0, head.length, 0);
    return refusedKind(head.subarray(0, length), false) === 'xlsx';
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Throws the one-line refusal for a head that is not CSV text. */
export function assertText(head: Buffer, name: string, utf16: boolean): void {
  const kind = refusedKind(head, utf16);
  if (kind !== undefined) throw new UnreadableInputError(`${name} ${REFUSALS[kind].replace('ENCODING', optionAsked('encoding', kind, `'${kind}'`))}`);
}
