// A failure while reading or parsing a CSV input, said as one line that names the input, the row
// where the broken record began and what to do. A parser error is the file's problem and ends the
// run: never taken for the end of the input, which would write a shorter output as if complete.
import { UnreadableInputError } from '../api/errors.js';

/** What csv-parse puts on its errors: its code, and the records it had finished before. */
interface ParserError {
  code?: string;
  message?: string;
  records?: number;
  lines?: number;
}

const MIB = 1024 * 1024;

/** A byte count as the user reads it: whole MiB when it is some, else bytes. */
export function sizeText(bytes: number): string {
  return bytes >= MIB && bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${bytes} bytes`;
}

/** The record csv-parse failed in: the one after the `records` it finished (the header is no row). */
function recordName(records: number, headerRecords: number): string {
  return records < headerRecords ? 'the header line' : `row ${records - headerRecords + 1}`;
}

const CLOSE_IT = 'close that quote (a quote inside a cell is written as two: "") and run again';

export interface FailureContext {
  /** How messages name the input. */
  name: string;
  /** 1 when the first record is the header, else 0. */
  headerRecords: number;
  /** The record-size limit in force. */
  maxRecordBytes: number;
}

export function readFailure(context: FailureContext, error: unknown): UnreadableInputError {
  if (error instanceof UnreadableInputError) return error;
  const { name } = context;
  const err = error as ParserError;
  const why = (err.message ?? String(error)).replace(/\s+/g, ' ');
  if (err.code?.startsWith('Z_')) {
    return new UnreadableInputError(`Cannot decompress ${name}: ${why}; give an intact .gz file or the CSV itself`, { cause: error });
  }
  if (typeof err.records !== 'number') {
    return new UnreadableInputError(`Cannot read ${name}: ${why}; give a readable CSV file`, { cause: error });
  }
  const record = recordName(err.records, context.headerRecords);
  if (err.code === 'CSV_QUOTE_NOT_CLOSED') {
    return new UnreadableInputError(
      `Cannot parse ${name}: ${record} opens a quoted cell that never closes (Quote Not Closed: the rest of the file would be one cell); ${CLOSE_IT}`,
      { cause: error },
    );
  }
  if (err.code === 'CSV_MAX_RECORD_SIZE') {
    const size = sizeText(context.maxRecordBytes);
    if (err.records === 0) {
      return new UnreadableInputError(
        `Cannot parse ${name}: the first line runs on past ${size}: not a CSV with line breaks, or a quote there never closes; give a CSV file with one record per line`,
        { cause: error },
      );
    }
    return new UnreadableInputError(
      `Cannot parse ${name}: ${record} runs on past ${size} without ending, most likely a quote opened there that never closes; ${CLOSE_IT}`,
      { cause: error },
    );
  }
  return new UnreadableInputError(`Cannot parse ${name} at ${record}: ${why}; fix the file (it must be CSV with a header line)`, { cause: error });
}
