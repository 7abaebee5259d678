// The input, whatever it is: an .xlsx workbook (told from its first bytes, whatever its name) is
// read as one (open-workbook.ts), anything else as CSV text (open-csv.ts). Both hand the rest of
// the run the same CsvSource.
import type { Readable } from 'node:stream';
import { ConfigError } from '../api/errors.js';
import { optionWord } from '../options/option-table.js';
import { isWorkbookFile } from './file-kind.js';
import { openCsv, type CsvSource, type ReadOptions } from './open-csv.js';
import { limitRows } from './row-limit.js';

export interface SourceOptions extends ReadOptions {
  /** The worksheet of an .xlsx input: its name or 1-based position. Default: the first. */
  sheet?: string | undefined;
  /** --limit: only the first N data rows. */
  limit?: number | undefined;
}

export async function openSource(input: string | Readable, options: SourceOptions = {}): Promise<CsvSource> {
  const { limit, ...rest } = options;
  const source = await openWhole(input, rest);
  return limit === undefined ? source : limitRows(source, limit, options.warn ?? (() => {}));
}

async function openWhole(input: string | Readable, options: Omit<SourceOptions, 'limit'>): Promise<CsvSource> {
  const { sheet, ...csv } = options;
  if (typeof input === 'string' && input !== '-' && isWorkbookFile(input)) {
    // Loaded only for a workbook: its zip and XML libraries cost start-up time.
    const { openWorkbook } = await import('./open-workbook.js');
    return openWorkbook(input, { sheet, header: options.header, skipLines: options.skipLines });
  }
  if (sheet !== undefined) {
    const name = typeof input === 'string' ? (input === '-' ? 'standard input' : input) : 'the input stream';
    throw new ConfigError(
      `Invalid option ${optionWord('sheet')}: ${name} is not an .xlsx workbook (${optionWord('sheet')} picks a worksheet of one), got '${sheet}'`,
    );
  }
  return openCsv(input, csv);
}
