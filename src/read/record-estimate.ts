// How many data records the input holds, estimated while it is read: the progress line's total
// (docs/cli-contract.md, "Exit status": a finite ETA). The parser knows exactly how many records it has
// parsed and how many bytes they took (csv-parse's info.records and info.bytes, both at the end
// of the last record), so records ÷ bytes is the file's own density so far, and the file's size
// on disk turns it into a total. Rows the run has *consumed* would not do: the parser runs up to
// a whole read chunk (256 KiB) ahead of them, so "rows read × size ÷ bytes read" comes out as the
// rows read so far ("of about 511" on a 2,500-row file).
//
// A transcoded file (UTF-16, windows-1252) is parsed as UTF-8: its bytes on disk per parsed byte
// are measured at the transcoder, in and out. A gzipped file's size says little about how much
// text it holds, and stdin has no size: no estimate for them until the end. Once the parser has
// ended, the count is exact for every input.
import type { Readable } from 'node:stream';
import type { Parser } from 'csv-parse';

export interface RecordEstimateParts {
  parser: Parser;
  /** The input's size on disk; undefined for stdin and streams. */
  totalBytes: number | undefined;
  gzip: boolean;
  /** Records of the file that are not data (the header line). */
  headerRecords: number;
  /** Bytes on disk before the parser's first byte (a UTF-8 byte-order mark). */
  skipped: number;
  /** With a transcoder: the stream into it (bytes as on disk) and the transcoder (UTF-8 out). */
  transcoding?: { into: Readable; out: Readable } | undefined;
}

/** The data records of the input: estimated, or exact once it has all been read. */
export interface RecordCount {
  records: number;
  exact: boolean;
}

export class RecordEstimate {
  readonly #parts: RecordEstimateParts;
  #diskBytes = 0;
  #parsedBytes = 0;

  constructor(parts: RecordEstimateParts) {
    this.#parts = parts;
    const { transcoding } = parts;
    if (transcoding) {
      transcoding.into.on('data', (chunk: Buffer | string) => (this.#diskBytes += chunk.length));
      transcoding.out.on('data', (chunk: Buffer | string) => (this.#parsedBytes += chunk.length));
    }
  }

  /** The data records the input holds: exact once `ended`, else estimated, or undefined when it cannot be. */
  count(ended: boolean): RecordCount | undefined {
    const { parser, totalBytes, gzip, headerRecords, skipped, transcoding } = this.#parts;
    const parsed = parser.info.records;
    if (ended) return { records: Math.max(0, parsed - headerRecords), exact: true };
    if (totalBytes === undefined || gzip || parsed === 0 || parser.info.bytes <= 0) return undefined;
    // Where the parser stands, in bytes on disk.
    const diskPerParsed = transcoding ? (this.#parsedBytes > 0 ? this.#diskBytes / this.#parsedBytes : 0) : 1;
    const position = skipped + parser.info.bytes * diskPerParsed;
    if (position <= 0) return undefined;
    return { records: Math.max(0, Math.round((parsed * totalBytes) / Math.min(position, totalBytes)) - headerRecords), exact: false };
  }
}
