// The input's text encoding (docs/cli-contract.md "Input files", Encoding): given with --encoding, or told by
// a byte-order mark, or UTF-8 when the head holds more valid UTF-8 multi-byte characters than
// invalid bytes, else windows-1252. Cells stay byte strings of UTF-8 downstream, so a non-UTF-8
// input is transcoded to UTF-8 before the parser, and a UTF-8 input is not touched at all (the
// known-rows benchmark reads plain UTF-8 files): a stray invalid byte in it is copied through.
import { createRequire } from 'node:module';
import { Transform } from 'node:stream';
import type * as IconvLite from 'iconv-lite';
import { ConfigError } from '../api/errors.js';
import { optionWord } from '../options/option-table.js';
import { sequenceLength } from './byte-string.js';

let loaded: typeof IconvLite | undefined;
/** iconv-lite and its tables (a few MB) are loaded only for a label Node's TextDecoder lacks. */
function iconv(): typeof IconvLite {
  loaded ??= createRequire(import.meta.url)('iconv-lite') as typeof IconvLite;
  return loaded;
}

export interface EncodingChoice {
  /** WHATWG canonical name: 'utf-8', 'utf-16le', 'windows-1252', ... */
  encoding: string;
  /** The length of the UTF-8 byte-order mark the input began with (0 or 3); the parser skips it. */
  utf8BomLength: number;
  /** The input began with a byte-order mark (of any encoding). */
  bom: boolean;
}

/**
 * A WHATWG label (any spelling: 'latin1', 'UTF8', 'utf-16') → its canonical name. Node's
 * TextDecoder is the reference for labels, but it lacks iso-8859-16, which iconv-lite knows.
 */
export function canonicalEncoding(label: string): string {
  const trimmed = label.trim().toLowerCase();
  try {
    return new TextDecoder(trimmed).encoding;
  } catch {
    if (trimmed !== '' && iconv().encodingExists(trimmed)) return trimmed;
    throw new ConfigError(`Invalid option ${optionWord('encoding')}: must be an encoding label such as utf-8, utf-16le or windows-1252, got '${label}'`);
  }
}

const BOMS: Array<[string, number[]]> = [
  ['utf-8', [0xef, 0xbb, 0xbf]],
  ['utf-16le', [0xff, 0xfe]],
  ['utf-16be', [0xfe, 0xff]],
];

function bomOf(head: Buffer): string | undefined {
  return BOMS.find(([, bytes]) => bytes.every((byte, i) => head[i] === byte))?.[0];
}

/** Whether the head is valid UTF-8; a sequence cut by the head's end is not held against it. */
function isUtf8Head(head: Buffer, complete: boolean): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head, { stream: !complete });
    return true;
  } catch {
    return false;
  }
}

/**
 * The head's well-formed UTF-8 multi-byte characters and the bytes that belong to none. A UTF-8
 * export with a stray Latin-1 byte has many of the first and a few of the second; a windows-1252
 * file has accented letters that are invalid bytes and next to no valid sequence (two windows-1252
 * letters form one only by chance, such as "Ã©"). A sequence cut by the head's end is not counted.
 */
export function utf8Census(head: Buffer, complete: boolean): { multiByte: number; invalid: number } {
  let multiByte = 0;
  let invalid = 0;
  const length = head.length;
  let i = 0;
  while (i < length) {
    const lead = head[i]!;
    if (lead < 0x80) {
      i += 1;
      continue;
    }
    const size = sequenceLength(lead, i + 1 < length ? head[i + 1]! : NaN);
    if (size > 0 && i + size > length && !complete) break;
    let whole = size > 0 && i + size <= length;
    for (let k = 2; whole && k < size; k += 1) whole = (head[i + k]! & 0xc0) === 0x80;
    if (whole) {
      multiByte += 1;
      i += size;
    } else {
      if (size === 0 && i + 1 >= length && !complete && lead >= 0xc2 && lead <= 0xf4) break;
      invalid += 1;
      i += 1;
    }
  }
  return { multiByte, invalid };
}

/** UTF-8 when the head is valid UTF-8, or holds more valid multi-byte characters than invalid bytes. */
function looksUtf8(head: Buffer, complete: boolean): boolean {
  if (isUtf8Head(head, complete)) return true;
  const { multiByte, invalid } = utf8Census(head, complete);
  return multiByte > invalid;
}

/** The encoding in force: the given one, else the byte-order mark's, else UTF-8 or windows-1252. */
export function chooseEncoding(head: Buffer, complete: boolean, given: string | undefined): EncodingChoice {
  const bom = bomOf(head);
  const encoding = given ?? bom ?? (looksUtf8(head, complete) ? 'utf-8' : 'windows-1252');
  // A UTF-16 decoder drops its own BOM; a UTF-8 input is not decoded, so its BOM is skipped here.
  const utf8BomLength = encoding === 'utf-8' && bom === 'utf-8' ? 3 : 0;
  return { encoding, utf8BomLength, bom: bom !== undefined };
}

export interface TextDecoding {
  write(bytes: Buffer): string;
  end(): string;
}

/**
 * windows-1252's bytes 0x80-0x9F as the WHATWG Encoding Standard maps them (index-windows-1252):
 * the five that Windows leaves unassigned (0x81, 0x8D, 0x8F, 0x90, 0x9D) are U+0081 ..., never
 * U+FFFD (which iconv-lite gives); every other byte is its Latin-1 code point.
 */
const WINDOWS_1252_C1 =
  '\u20ac\u0081\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u008d\u017d\u008f' +
  '\u0090\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u009d\u017e\u0178';
const C1 = /[\x80-\x9f]/g;
const fromC1 = (char: string): string => WINDOWS_1252_C1[char.charCodeAt(0) - 0x80]!;

/** windows-1252 by the table above: one character per byte, so no state between chunks. */
export function decodeWindows1252(bytes: Buffer): string {
  const text = bytes.toString('latin1');
  C1.lastIndex = 0;
  return C1.test(text) ? text.replace(C1, fromC1) : text;
}

/**
 * Node's TextDecoder follows the WHATWG table, but Node 22.13 to 22.18 decode windows-1252 as
 * Latin-1 (0x80 → U+0080 instead of €, nodejs/node#56542): checked once, on all 32 bytes.
 */
let builtinWindows1252: boolean | undefined;
function builtinDecodesWindows1252(): boolean {
  builtinWindows1252 ??= new TextDecoder('windows-1252').decode(Uint8Array.from({ length: 32 }, (_, i) => 0x80 + i)) === WINDOWS_1252_C1;
  return builtinWindows1252;
}

/**
 * A streaming decoder: Node's TextDecoder (the WHATWG reference; faster than iconv-lite on
 * windows-1252, bench "encodings"), the table above where Node's windows-1252 is wrong, and
 * iconv-lite for a label this Node's TextDecoder lacks (iso-8859-16 on Node 22).
 */
export function createDecoding(encoding: string): TextDecoding {
  if (encoding === 'windows-1252' && !builtinDecodesWindows1252()) return { write: decodeWindows1252, end: () => '' };
  const decoder = builtinDecoder(encoding);
  if (decoder) return { write: (bytes) => decoder.decode(bytes, { stream: true }), end: () => decoder.decode() };
  const fallback = iconv().getDecoder(encoding, { stripBOM: true });
  return { write: (bytes) => fallback.write(bytes), end: () => fallback.end() ?? '' };
}

function builtinDecoder(encoding: string): InstanceType<typeof TextDecoder> | undefined {
  try {
    return new TextDecoder(encoding);
  } catch {
    return undefined;
  }
}

/** Bytes in `encoding` → the same text as UTF-8 bytes, for the parser. */
export function createTranscoder(encoding: string): Transform {
  const decoding = createDecoding(encoding);
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      callback(null, Buffer.from(decoding.write(chunk), 'utf8'));
    },
    flush(callback) {
      const rest = decoding.end();
      callback(null, rest.length > 0 ? Buffer.from(rest, 'utf8') : undefined);
    },
  });
}
