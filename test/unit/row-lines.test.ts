// Where a finished run's rows are in its input, for a CI annotation's `line=` (run/row-lines.ts;
// docs/reference.md, "In a CI step"): the CSV line a row begins on, read again as the run read the
// file (its delimiter, --skip-lines, a first line that is data), or an .xlsx row's number in the
// worksheet.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { rowLines } from '../../src/run/row-lines.js';
import { makeTempDir } from '../helpers/files.js';
import { bookOf, textCell } from '../helpers/zip.js';

function file(name: string, content: string | Buffer): string {
  const at = path.join(makeTempDir(), name);
  fs.writeFileSync(at, content);
  return at;
}

describe('rowLines: the line of a data row in its input', () => {
  it('a CSV: the header, blank lines and quoted line breaks counted (CRLF, semicolons)', async () => {
    const input = file('in.csv', 'email;note\r\n\r\na@x.io;"one\r\ntwo"\r\nb@x.io;x\r\nc@x.io;y\r\n');
    expect(Object.fromEntries(await rowLines({ input }, [1, 2, 3]))).toEqual({ 1: 3, 2: 5, 3: 6 });
  });

  it('--skip-lines and title lines found: the lines above the header counted', async () => {
    const input = file('in.csv', 'Contacts report\nemail,name\na@x.io,A\nb@x.io,B\n');
    expect(Object.fromEntries(await rowLines({ input, skipLines: 1 }, [2]))).toEqual({ 2: 4 });
    expect(Object.fromEntries(await rowLines({ input }, [1]))).toEqual({ 1: 3 });
  });

  it('a first line that is data (no header line, found or said): row 1 is line 1', async () => {
    const input = file('in.csv', 'a@x.io,1\nb@x.io,2\n');
    expect(Object.fromEntries(await rowLines({ input }, [1, 2]))).toEqual({ 1: 1, 2: 2 });
    expect(Object.fromEntries(await rowLines({ input, header: false }, [2]))).toEqual({ 2: 2 });
  });

  it('a gzipped CSV is read through gunzip; stdin has no line', async () => {
    const { gzipSync } = await import('node:zlib');
    const input = file('in.csv.gz', gzipSync('email\n\na@x.io\n'));
    expect(Object.fromEntries(await rowLines({ input }, [1]))).toEqual({ 1: 3 });
    expect((await rowLines({ input: '-' }, [1])).size).toBe(0);
  });

  // Not on Windows: mkfifo makes no named pipe there; skipped with that reason.
  it.skipIf(process.platform === 'win32')('a named pipe is not read again (it would wait for a writer for ever): no line', async () => {
    // POSIX only: mkfifo.
    const { execFileSync } = await import('node:child_process');
    const fifo = path.join(makeTempDir(), 'in.csv');
    execFileSync('mkfifo', [fifo]);
    expect((await rowLines({ input: fifo }, [1])).size).toBe(0);
  });

  it('an .xlsx: the row number in the worksheet, as Excel shows it (empty rows and a title row passed over)', async () => {
    const rows = [
      `<row r="1">${textCell('A1', 'Leads, December')}</row>`,
      `<row r="3">${textCell('A3', 'email')}${textCell('B3', 'name')}</row>`,
      `<row r="4">${textCell('A4', 'a@x.io')}${textCell('B4', 'A')}</row>`,
      `<row r="7">${textCell('A7', 'broken@')}${textCell('B7', 'B')}</row>`,
    ].join('');
    const input = file('in.xlsx', bookOf(`<sheetData>${rows}</sheetData>`));
    expect(Object.fromEntries(await rowLines({ input, skipLines: 1 }, [1, 2]))).toEqual({ 1: 4, 2: 7 });
  });
});
