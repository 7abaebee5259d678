// The input's text encoding (cli-contract "Input files", Encoding): given with --encoding, or told by
// a byte-order mark, or UTF-8 when the head is valid UTF-8, else windows-1252. Cells stay byte
// strings of UTF-8 downstream, so a non-UTF-8 input is transcoded to UTF-8 before the parser, and a
// UTF-8 input is not touched at all (the known-rows benchmark reads plain UTF-8 files).
import { createRequire } from 'node:module';
import { Transform } from 'node:stream';
import type * as IconvLite from 'iconv-lite';
import { ConfigError } from '../api/errors.js';

let loaded: typeof IconvLite | undefined;
/** iconv-lite and its tables (a few MB) are loaded only by runs that read a file that is not UTF-8. */
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
    throw new ConfigError(`Invalid option --encoding: must be an encoding label such as utf-8, utf-16le or windows-1252, got '${label}'`);
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

/** The encoding in force: the given one, else the byte-order mark's, else UTF-8 or windows-1252. */
export function chooseEncoding(head: Buffer, complete: boolean, given: string | undefined): EncodingChoice {
  const bom = bomOf(head);
  const encoding = given ?? bom ?? (isUtf8Head(head, complete) ? 'utf-8' : 'windows-1252');
  // A UTF-16 decoder drops its own BOM; a UTF-8 input is not decoded, so its BOM is skipped here.
  const utf8BomLength = encoding === 'utf-8' && bom === 'utf-8' ? 3 : 0;
  return { encoding, utf8BomLength, bom: bom !== undefined };
}

export interface TextDecoding {
  write(bytes: Buffer): string;
  end(): string;
}

/**
 * A streaming decoder: iconv-lite where it knows the encoding, since Node's own windows-1252 is
 * wrong on Node 20.18.3+ (0x80 → U+0080 instead of €, nodejs/node#56542); TextDecoder for the few
 * WHATWG encodings iconv-lite lacks.
 */
export function createDecoding(encoding: string): TextDecoding {
  if (iconv().encodingExists(encoding)) {
    const decoder = iconv().getDecoder(encoding, { stripBOM: true });
    return { write: (bytes) => decoder.write(bytes), end: () => decoder.end() ?? '' };
  }
  const decoder = new TextDecoder(encoding);
  return { write: (bytes) => decoder.decode(bytes, { stream: true }), end: () => decoder.decode() };
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
