// Inputs the read phase refuses (cli-contract "Input files", Refused): one line that says what the
// file looks like and what to do, never binary, never the parser's complaint about it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect } from 'vitest';
import { it } from '../helpers/cli-words.js';
import { UnreadableInputError } from '../../src/api/errors.js';
import { fromBytes, openCsv, openSource } from '../../src/read/index.js';
import { makeTempDir } from '../helpers/files.js';

// The messages as the command line's user reads them (the library's words for the same
// failures: test/integration/library-words.test.ts).

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures', 'input');

function tempFile(name: string, bytes: Buffer | string): string {
  const file = path.join(makeTempDir('lead-enrich-refuse-'), name);
  fs.writeFileSync(file, bytes);
  return file;
}

/** The refusal for `input`, checked to be an UnreadableInputError of one printable line. */
async function refusal(input: string | Readable): Promise<string> {
  const error = await openCsv(input).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(UnreadableInputError);
  const message = (error as UnreadableInputError).message;
  expect((error as UnreadableInputError).code).toBe('unreadable_input');
  // One line of printable text: no control character, no byte of the file.
  expect(message).toMatch(/^[^\x00-\x1f\x7f\ufffd]+$/);
  return message;
}

describe('files that are not CSV text', () => {
  it.each([
    ['workbook.ods', 'is an OpenDocument spreadsheet (.ods): save it as .xlsx (File → Save As → Excel 2007-365) or as CSV and give that file'],
    [
      'workbook.xls',
      'is an Excel 97-2003 workbook (.xls) or another old Office file: save it as .xlsx (File → Save As → Excel Workbook) or as CSV and give that file',
    ],
    ['document.pdf', 'is a PDF document: export the table from the program that made it as CSV'],
    ['archive.zip', 'is a zip archive: unzip it and give the CSV file inside'],
  ])('%s is refused by what it is', async (name, what) => {
    const file = path.join(FIXTURES, name);
    expect(await refusal(file)).toBe(`${file} ${what}`);
  });

  it('an .xlsx workbook is recognised whatever its name, and read from its path; gzipped or on a stream it is refused, naming what to give', async () => {
    const workbook = fs.readFileSync(path.join(FIXTURES, 'workbook.xlsx'));
    const renamed = await openSource(tempFile('contacts.csv', workbook));
    expect(renamed.sheet).toBe('contacts-de');
    expect(renamed.header.map(fromBytes)).toEqual(['Vorname', 'Nachname', 'E-Mail', 'Firma', 'Umsatz']);
    renamed.destroy();
    const read =
      'is an Excel workbook, which is read from its path only (not from standard input, a stream or gzip): give the .xlsx file itself, or save it as CSV';
    const gzipped = tempFile('contacts.xlsx.gz', gzipSync(workbook));
    expect(await refusal(gzipped)).toBe(`${gzipped} ${read}`);
    expect(await refusal(Readable.from([workbook]))).toBe(`the input stream ${read}`);
  });

  it('an Excel binary workbook (.xlsb) is refused by name', async () => {
    const xlsb = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(26), Buffer.from('xl/workbook.bin')]);
    expect(await refusal(tempFile('book.xlsb', xlsb))).toMatch(
      /book\.xlsb is an Excel binary workbook \(\.xlsb\): save it as \.xlsx .* or as CSV and give that file$/,
    );
  });

  it('a file with NUL bytes and no UTF-16 BOM is binary', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
    expect(await refusal(tempFile('image.csv', png))).toMatch(/image\.csv is a binary file, not CSV text: give a CSV file$/);
  });

  it('a stray NUL byte in a cell of a CSV is not binary: the file is read, the byte kept', async () => {
    const text = Buffer.concat([
      Buffer.from('email,note\n'),
      ...Array.from({ length: 50 }, (_, i) => Buffer.from(`p${i}@example.com,ok\n`)),
      Buffer.from('x@example.com,nul\0here\n'),
    ]);
    const source = await openCsv(tempFile('stray.csv', text));
    const rows: string[][] = [];
    for await (const batch of source.batches) rows.push(...batch);
    expect(rows).toHaveLength(51);
    expect(rows.at(-1)).toEqual(['x@example.com', 'nul\0here']);
  });

  it('UTF-16 text without a BOM is named, with the option that reads it', async () => {
    expect(await refusal(tempFile('le.csv', Buffer.from('email,name\na@example.com,Ann\n', 'utf16le')))).toMatch(/give --encoding utf-16le$/);
    expect(await refusal(tempFile('be.csv', Buffer.from('email,name\na@example.com,Ann\n', 'utf16le').swap16()))).toMatch(/give --encoding utf-16be$/);
  });

  it('a stream is refused the same way', async () => {
    const message = await refusal(Readable.from([fs.readFileSync(path.join(FIXTURES, 'document.pdf'))]));
    expect(message).toBe('the input stream is a PDF document: export the table from the program that made it as CSV');
  });
});

describe('empty input', () => {
  it.each([
    ['an empty file', ''],
    ['only blank lines', '\n\r\n\r\r\n\n'],
  ])('%s is refused', async (_name, content) => {
    const file = content === '' ? path.join(FIXTURES, 'empty.csv') : tempFile('blank.csv', content);
    expect(fs.readFileSync(file, 'latin1')).toBe(content);
    expect(await refusal(file)).toBe(`${file} is empty (no line holds any text): give a CSV file whose first line is a header`);
  });
});

describe('paths that cannot be read', () => {
  it('a missing file', async () => {
    const file = path.join(makeTempDir(), 'missing.csv');
    expect(await refusal(file)).toBe(`Cannot read input ${file}: no such file; give the path of a CSV file, or - for stdin`);
  });

  it('a directory', async () => {
    const dir = makeTempDir();
    expect(await refusal(dir)).toBe(`Cannot read input ${dir}: it is a directory; give the path of a CSV file, or - for stdin`);
  });

  // Skipped as root (CI and these machines run as root): root reads any file whatever its mode, so
  // the refusal can only be seen by another user. The directory case above covers the same message path.
  it.skipIf(os.userInfo().uid === 0)(
    'a file without read permission',
    { meta: { skipReason: 'running as root, which reads any file whatever its mode' } },
    async () => {
      const file = tempFile('secret.csv', 'email\n');
      fs.chmodSync(file, 0o200);
      expect(await refusal(file)).toBe(`Cannot read input ${file}: permission denied; give the path of a CSV file, or - for stdin`);
    },
  );
});
