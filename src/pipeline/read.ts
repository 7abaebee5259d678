// The read step: a CSV file or stdin, streamed through csv-parse as arrays (faster than objects).
// Text is decoded as latin1, one character per byte, so every cell can be written back byte for
// byte whatever its encoding (valid UTF-8, or not). `fromBytes` gives the real text where we need
// it (keys, header detection, JSON output); `toBytes` turns our own text into the same form.
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { parse, type Parser } from 'csv-parse';
import { UnreadableInputError } from '../api/errors.js';

const NON_ASCII = /[^\x00-\x7f]/;

/** Byte string (latin1) → text (UTF-8 decoding; invalid sequences become U+FFFD). */
export function fromBytes(bytes: string): string {
  return NON_ASCII.test(bytes) ? Buffer.from(bytes, 'latin1').toString('utf8') : bytes;
}

/** Text → byte string of its UTF-8 encoding. */
export function toBytes(text: string): string {
  return NON_ASCII.test(text) ? Buffer.from(text, 'utf8').toString('latin1') : text;
}

export interface CsvSource {
  /** Header cells as byte strings, exactly as in the file (BOM removed). */
  header: string[];
  /**
   * The data records, as byte strings, in batches of what the parser has ready (at most
   * BATCH_RECORDS): per-record promises would cost more than the parsing itself.
   */
  batches: AsyncIterable<string[][]>;
  /** The input began with a UTF-8 byte-order mark. */
  bom: boolean;
  /** The line ending of the header line. */
  recordDelimiter: '\n' | '\r\n';
  /** Bytes consumed so far, and the file's size when known: for progress and ETA. */
  bytesRead(): number;
  totalBytes: number | undefined;
  /** Stops reading (on a fatal error). */
  destroy(): void;
}

const BATCH_RECORDS = 512;

/** A cell this long is surely not a contact record: refuse rather than buffer without end. */
const MAX_RECORD_BYTES = 64 * 1024 * 1024;

function describe(input: string | Readable): string {
  return typeof input === 'string' ? (input === '-' ? 'standard input' : input) : 'the input stream';
}

export async function openCsv(input: string | Readable): Promise<CsvSource> {
  const name = describe(input);
  let totalBytes: number | undefined;
  let stream: Readable;
  if (typeof input === 'string' && input !== '-') {
    try {
      const stat = fs.statSync(input);
      if (stat.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
      totalBytes = stat.isFile() ? stat.size : undefined;
      fs.accessSync(input, fs.constants.R_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'it is a directory' : (code ?? 'unreadable');
      throw new UnreadableInputError(`Cannot read input ${input}: ${why}; give the path of a CSV file, or - for stdin`);
    }
    stream = fs.createReadStream(input, { highWaterMark: 256 * 1024 });
  } else {
    stream = typeof input === 'string' ? process.stdin : input;
  }

  let bom = false;
  let recordDelimiter: '\n' | '\r\n' = '\n';
  let head: Buffer | undefined = Buffer.alloc(0);
  // Looks at the first bytes: strips a UTF-8 BOM (csv-parse's own `bom` option would switch the
  // decoding to UTF-8 and lose the byte-exact passthrough) and notes the header's line ending.
  const sniff = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      if (head === undefined) return callback(null, chunk);
      head = Buffer.concat([head, chunk]);
      if (head.length < 3 && !head.includes(0x0a)) return callback();
      callback(null, settle());
    },
    flush(callback) {
      callback(null, head === undefined ? undefined : settle());
    },
  });
  function settle(): Buffer {
    let data = head!;
    head = undefined;
    if (data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf) {
      bom = true;
      data = data.subarray(3);
    }
    const newline = data.indexOf(0x0a);
    if (newline > 0 && data[newline - 1] === 0x0d) recordDelimiter = '\r\n';
    return data;
  }

  const parser: Parser = parse({
    encoding: 'latin1',
    relax_column_count: true,
    relax_quotes: true,
    // A blank line is a row too (in a one-column file it is an empty key): it is reported in the
    // sidecar as invalid input rather than dropped without a word.
    max_record_size: MAX_RECORD_BYTES,
  });
  let failure: UnreadableInputError | undefined;
  const toFailure = (error: unknown) => {
    const err = error as { code?: string; message?: string; lines?: number };
    const where = err.lines ? ` at line ${err.lines}` : '';
    const why = err.code === 'ENOENT' ? 'no such file' : (err.message ?? String(error)).replace(/\s+/g, ' ');
    return new UnreadableInputError(`Cannot parse ${name}${where}: ${why}; fix the file (it must be CSV with a header line)`, { cause: error });
  };
  pipeline(stream, sniff, parser).catch((error: unknown) => {
    failure ??= toFailure(error);
  });

  let ended = false;
  parser.once('end', () => {
    ended = true;
  });
  // Resolves when the parser has records, has ended, or has failed.
  const readable = () =>
    new Promise<void>((resolve) => {
      const done = () => {
        parser.off('readable', done);
        parser.off('end', done);
        parser.off('error', done);
        parser.off('close', done);
        resolve();
      };
      parser.on('readable', done);
      parser.on('end', done);
      parser.on('error', done);
      parser.on('close', done);
    });
  const nextBatch = async (): Promise<string[][] | undefined> => {
    for (;;) {
      const batch: string[][] = [];
      let record: string[] | null;
      while (batch.length < BATCH_RECORDS && (record = parser.read() as string[] | null) !== null) batch.push(record);
      if (batch.length > 0) return batch;
      if (failure) throw failure;
      if (ended || parser.destroyed) return undefined;
      await readable();
      // The pipeline's rejection may settle a tick after the parser's error event.
      await new Promise((resolve) => setImmediate(resolve));
    }
  };

  const first = await nextBatch();
  if (!first) throw new UnreadableInputError(`Input ${name} is empty: expected a CSV file whose first line is a header`);
  const header = first.shift()!;
  let pendingFirst: string[][] | undefined = first.length > 0 ? first : undefined;
  return {
    header,
    batches: {
      [Symbol.asyncIterator]: () => ({
        next: async (): Promise<IteratorResult<string[][]>> => {
          if (pendingFirst) {
            const batch = pendingFirst;
            pendingFirst = undefined;
            return { done: false, value: batch };
          }
          const batch = await nextBatch();
          return batch ? { done: false, value: batch } : { done: true, value: undefined };
        },
      }),
    },
    get bom() {
      return bom;
    },
    get recordDelimiter() {
      return recordDelimiter;
    },
    bytesRead: () => parser.info.bytes,
    totalBytes,
    destroy: () => {
      stream.destroy();
      parser.destroy();
    },
  };
}
