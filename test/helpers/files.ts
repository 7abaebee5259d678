// Small helpers for pipeline tests: temp dirs, CSV files and reading outputs back byte-exact.
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'csv-parse/sync';

export { makeTempDir } from './temp-dirs.js';

/** Writes a CSV from rows of cells (quoting every cell that needs it). */
export function writeCsv(file: string, rows: string[][], eol = '\n'): string {
  const quote = (cell: string) => (/[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell);
  fs.writeFileSync(file, rows.map((row) => row.map(quote).join(',')).join(eol) + eol);
  return file;
}

/** Reads a CSV as byte strings (latin1), the way the pipeline does: cells compare byte for byte. */
export function readCsvBytes(file: string): string[][] {
  let buffer = fs.readFileSync(file);
  if (buffer[0] === 0xef && buffer[1] === 0xbb && buffer[2] === 0xbf) buffer = buffer.subarray(3);
  return parse(buffer, { encoding: 'latin1', relax_column_count: true, relax_quotes: true }) as string[][];
}

/** Reads a UTF-8 CSV into objects keyed by header (first occurrence wins). */
export function readCsvObjects(file: string): Array<Record<string, string>> {
  const [header, ...rows] = parse(fs.readFileSync(file, 'utf8'), { relax_column_count: true, bom: true }) as string[][];
  return rows.map((row) => {
    const record: Record<string, string> = {};
    header!.forEach((name, i) => {
      if (!(name in record)) record[name] = row[i] ?? '';
    });
    return record;
  });
}

/** Emails with a predictable outcome in the sandbox (see src/sandbox/data.ts). */
export function emails(n: number, prefix = 'person'): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}.${i}@company${i % 7}.com`);
}

/** The temporary file a run of process `pid` writes for `final` (its name ends in a random part), if any yet. */
export function partialOf(final: string, pid: number | undefined): string | undefined {
  const prefix = `.${path.basename(final)}.${pid}.`;
  const name = fs.readdirSync(path.dirname(final)).find((n) => n.startsWith(prefix) && n.endsWith('.partial'));
  return name === undefined ? undefined : path.join(path.dirname(final), name);
}
