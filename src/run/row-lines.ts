// Where a finished run's rows are in its input file, for a CI annotation's `line=` (docs/reference.md,
// "In a CI step"): the line of the CSV file each row begins on (its header, the lines --skip-lines
// passes over, blank lines and the line breaks inside quoted cells counted), or the worksheet's
// row number of an .xlsx input (the number Excel shows at the row's left). The input is read
// again, as the run read it, up to the last row asked for: a run's hot path tracks no lines.
import fs from 'node:fs';
import { keyColumns } from '../plan/key-columns.js';
import { openSource } from '../read/index.js';
import { RecordLines } from '../read/record-lines.js';
import type { EnrichOptions } from './enrich-options.js';
import { inputName } from './input-wait.js';
import { readOptionsOf, resolveOptions } from './settings.js';

/** The line (or sheet row) of each data row in `rows` (1-based, as the sidecar numbers them); none for stdin, a stream or a pipe. */
export async function rowLines(options: EnrichOptions, rows: readonly number[]): Promise<Map<number, number>> {
  const found = new Map<number, number>();
  const quiet = () => {};
  const settings = resolveOptions({ ...options, onWarning: quiet, onNotice: quiet, onAvailability: quiet });
  // Read again only a file that is one: a named pipe or a device would wait for a writer for ever.
  if (rows.length === 0 || typeof settings.input !== 'string' || settings.input === '-' || !isRegularFile(settings.input)) return found;
  const last = Math.max(...rows);
  const text: { scan?: RecordLines } = {};
  let headerRecords = 1;
  const { limit: _all, ...read } = readOptionsOf(settings);
  const opened = await openSource(settings.input, {
    ...read,
    warn: quiet,
    // The records are numbered from the header; which record is row 1 is known once the key columns are.
    textWatch: ({ delimiter, skipLines }) => {
      const scan = new RecordLines(
        delimiter,
        skipLines,
        rows.flatMap((row) => [row - 1, row]),
      );
      text.scan = scan;
      return (chunk) => scan.feed(chunk);
    },
  });
  try {
    const { headerLine, source } = await keyColumns(opened, {
      by: settings.by,
      columns: settings.column,
      header: settings.header,
      inputName: inputName(settings.input),
      warn: quiet,
    });
    headerRecords = headerLine ? 1 : 0;
    let row = 0;
    for await (const batch of source.batches) {
      for (const record of batch) {
        row += 1;
        const sheetRow = rows.includes(row) ? source.workbook?.row(record) : undefined;
        if (sheetRow !== undefined) found.set(row, sheetRow);
      }
      if (row >= last || text.scan?.done === true) break;
    }
  } finally {
    opened.destroy();
  }
  for (const row of rows) {
    const line = text.scan?.lineOf(row - 1 + headerRecords);
    if (line !== undefined) found.set(row, line);
  }
  return found;
}

function isRegularFile(file: string): boolean {
  return fs.statSync(file, { throwIfNoEntry: false })?.isFile() === true;
}
