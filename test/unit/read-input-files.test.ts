// The read phase on real-shaped input files (cli-contract "Input files"): spreadsheet exports in
// other encodings and delimiters, mixed line endings, blank lines, no header, gzip. Cells are
// checked as text; the source's layout (delimiter, line ending, encoding, BOM) as the writer needs it.
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect } from 'vitest';
import { it } from '../helpers/cli-words.js';
import { ConfigError } from '../../src/api/errors.js';
import { fromBytes, hasInvalidUtf8, openCsv, type ReadOptions } from '../../src/read/index.js';
import { makeTempDir } from '../helpers/files.js';

// The messages as the command line's user reads them (the library's words for the same
// failures: test/integration/library-words.test.ts).

const FIXTURES = path.join(import.meta.dirname, '..', '..', 'fixtures', 'input');
const fixture = (name: string) => path.join(FIXTURES, name);

async function readAll(input: string | Readable, options?: ReadOptions) {
  const source = await openCsv(input, options);
  const rows: string[][] = [];
  for await (const batch of source.batches) rows.push(...batch);
  return { source, header: source.header.map(fromBytes), rows: rows.map((row) => row.map(fromBytes)), rawRows: rows };
}

function tempFile(name: string, bytes: Buffer | string): string {
  const file = path.join(makeTempDir('lead-enrich-read-'), name);
  fs.writeFileSync(file, bytes);
  return file;
}

const GERMAN_HEADER = ['Vorname', 'Nachname', 'E-Mail', 'Firma', 'Umsatz'];
const GERMAN_ROWS = [
  ['Zoë', 'Müller', 'zoe.mueller@example.de', 'Müller & Söhne GmbH', '1.234,50 €'],
  ['Jürgen', 'Weiß', 'j.weiss@example.de', 'Straße "Süd" AG', '99 €'],
  ['Anna', 'Öztürk', 'anna@example.com', '', '0'],
];

describe('spreadsheet exports', () => {
  it.each([
    ['excel-de-semicolon-windows1252.csv', ';', '\r\n', 'windows-1252'],
    ['excel-unicode-text-utf16le.txt', '\t', '\r\n', 'utf-16le'],
    ['utf16be-bom.csv', '\t', '\n', 'utf-16be'],
    ['pipe-separated.csv', '|', '\n', 'utf-8'],
    ['pipe-separated.csv.gz', '|', '\n', 'utf-8'],
  ])('%s reads as text with its delimiter, line ending and encoding detected', async (name, delimiter, recordDelimiter, encoding) => {
    const { source, header, rows, rawRows } = await readAll(fixture(name));
    expect(header).toEqual(GERMAN_HEADER);
    expect(rows).toEqual(GERMAN_ROWS);
    expect(source.delimiter).toBe(delimiter);
    expect(source.recordDelimiter).toBe(recordDelimiter);
    expect(source.encoding).toBe(encoding);
    // A BOM (the UTF-16 files) or a non-UTF-8 input: the outputs get a BOM for spreadsheets.
    expect(source.outputBom).toBe(encoding !== 'utf-8');
    // Transcoded cells are UTF-8 byte strings like any other: € is E2 82 AC.
    expect(rawRows[0]![4]).toBe('1.234,50 \xe2\x82\xac');
    expect(rawRows.flat().some(hasInvalidUtf8)).toBe(false);
    expect(source.bytesRead()).toBe(source.totalBytes);
  });

  it('a gzip input is recognised by its magic bytes when its name does not end in .gz', async () => {
    const file = tempFile('export.csv', fs.readFileSync(fixture('pipe-separated.csv.gz')));
    const { rows, source } = await readAll(file);
    expect(rows).toEqual(GERMAN_ROWS);
    expect(source.bytesRead()).toBe(fs.statSync(file).size);
  });

  it('a gzip stream (stdin) is recognised by its magic bytes', async () => {
    const { rows } = await readAll(Readable.from([fs.readFileSync(fixture('pipe-separated.csv.gz'))]));
    expect(rows).toEqual(GERMAN_ROWS);
  });

  it('a .gz path that is not gzip data is refused as damaged', async () => {
    const file = tempFile('contacts.csv.gz', 'email\na@example.com\n');
    await expect(openCsv(file)).rejects.toThrow(/^Cannot decompress .*contacts\.csv\.gz: .*; give an intact \.gz file or the CSV itself$/);
  });
});

describe('line endings and blank lines', () => {
  it('records end in LF, CR or CRLF, mixed in one file; a line ending in quotes is content', async () => {
    const { source, header, rows } = await readAll(fixture('mixed-line-endings.csv'));
    expect(header).toEqual(['email', 'name']);
    expect(rows).toEqual([
      ['a@example.com', 'Line one\nline two'],
      ['b@example.com', 'Bob'],
      ['c@example.com', 'Carol\r\nSmith'],
      ['d@example.com', 'Dave'],
    ]);
    expect(source.recordDelimiter).toBe('\r\n');
  });

  it('blank lines at the top, in the middle and at the end are not records', async () => {
    const { header, rows } = await readAll(fixture('blank-lines.csv'));
    expect(header).toEqual(['email', 'name']);
    expect(rows).toEqual([
      ['a@example.com', 'Ann'],
      ['b@example.com', 'Ben'],
      ['c@example.com', 'Cy\n\nCole'],
    ]);
  });

  it('the header line ending is the one outside quotes', async () => {
    const { source, header } = await readAll(tempFile('h.csv', '"first\nname",email\r\nJo,jo@example.com\r\n'));
    expect(header).toEqual(['first\nname', 'email']);
    expect(source.recordDelimiter).toBe('\r\n');
  });

  it.each([
    ['an LF header', 'email,name\na@example.com,"A\r\nB"\r\nb@example.com,Ben\rc@example.com,Cy\n', '\n'],
    ['a CR header', 'email,name\ra@example.com,"A\r\nB"\r\nb@example.com,Ben\nc@example.com,Cy\r', '\r'],
  ])('after %s, records ending otherwise are records too', async (_name, content, recordDelimiter) => {
    const { source, rows } = await readAll(tempFile('m.csv', content));
    expect(source.recordDelimiter).toBe(recordDelimiter);
    expect(rows).toEqual([
      ['a@example.com', 'A\r\nB'],
      ['b@example.com', 'Ben'],
      ['c@example.com', 'Cy'],
    ]);
  });

  it('a quote never closed is an UnreadableInputError naming the file and what to do', async () => {
    const file = tempFile('open-quote.csv', 'email,name\r\na@example.com,"Ann\r\nb@example.com,Ben\r\n');
    const source = await openCsv(file);
    const drain = async () => {
      for await (const _batch of source.batches);
    };
    await expect(drain()).rejects.toThrow(
      /^Cannot parse .*open-quote\.csv: row 1 opens a quoted cell that never closes \(Quote Not Closed: .*\); close that quote .* and run again$/,
    );
  });

  it('a CR-only file keeps CR as its line ending', async () => {
    const { source, rows } = await readAll(tempFile('mac.csv', 'email,name\ra@example.com,Ann\rb@example.com,Ben\r'));
    expect(source.recordDelimiter).toBe('\r');
    expect(rows).toEqual([
      ['a@example.com', 'Ann'],
      ['b@example.com', 'Ben'],
    ]);
  });

  it('a CRLF split between two chunks ends one record', async () => {
    const { rows } = await readAll(Readable.from([Buffer.from('email,name\r\na@example.com,Ann\r'), Buffer.from('\nb@example.com,Ben\r\n')]));
    expect(rows).toEqual([
      ['a@example.com', 'Ann'],
      ['b@example.com', 'Ben'],
    ]);
  });
});

describe('no header', () => {
  it('header: false makes the first line data and names columns after the widest record', async () => {
    const { header, rows } = await readAll(fixture('no-header.csv'), { header: false });
    expect(header).toEqual(['column_1', 'column_2', 'column_3', 'column_4']);
    expect(rows).toEqual([
      ['jane@example.com', 'Jane', 'Doe'],
      ['john@example.com', 'John'],
      ['max@example.com', 'Max', 'Mustermann', 'Berlin'],
    ]);
  });
});

describe('delimiter detection', () => {
  it.each([
    ['semicolon with decimal commas', 'name;price\nA;3,5\nB;4,25\n', ';'],
    ['a quoted delimiter does not count', 'name,note\n"a;b;c;d",x\n"e;f;g;h",y\n', ','],
    ['tab with commas in cells', 'name\tcity\nDoe, Jane\tKöln\nRoe, Max\tBonn\n', '\t'],
    ['one column: comma on a tie', 'email\na@example.com\nb@example.com\n', ','],
    ['ragged rows still split by their delimiter', 'a|b|c\n1|2\n3|4|5|6\n', '|'],
  ])('%s', async (_name, content, delimiter) => {
    const { source } = await readAll(tempFile('d.csv', content));
    expect(source.delimiter).toBe(delimiter);
  });

  it('a given delimiter wins over detection', async () => {
    const { source, header } = await readAll(tempFile('d.csv', 'a;b,c\n1;2,3\n'), { delimiter: ',' });
    expect(source.delimiter).toBe(',');
    expect(header).toEqual(['a;b', 'c']);
  });

  it.each([
    ['ab', 'ab'],
    ['"', '\\"'],
    ['\r\n', '\\r\\n'],
    ['', ''],
  ])('a delimiter of %j is a ConfigError of one line', async (delimiter, shown) => {
    await expect(openCsv(fixture('no-header.csv'), { delimiter })).rejects.toThrow(
      new ConfigError(`Invalid option --delimiter: must be one character other than a quote or a line ending (or tab), got '${shown}'`),
    );
  });

  it('a non-ASCII delimiter splits the UTF-8 bytes and is handed out as a byte string', async () => {
    const { source, header, rows } = await readAll(tempFile('s.csv', 'name§city\nZoë§Köln\n'), { delimiter: '§' });
    expect(header).toEqual(['name', 'city']);
    expect(rows).toEqual([['Zoë', 'Köln']]);
    expect(source.delimiter).toBe('\xc2\xa7');
  });
});

describe('encoding', () => {
  it('a UTF-8 character cut at the 64 KiB edge still reads as UTF-8', async () => {
    const filler = 'x'.repeat(64 * 1024 - 'name\n'.length - 1);
    const { source, rows } = await readAll(tempFile('edge.csv', `name\n${filler}é\nZoë\n`));
    expect(Buffer.from(`name\n${filler}`).length).toBe(64 * 1024 - 1);
    expect(source.encoding).toBe('utf-8');
    expect(rows[1]).toEqual(['Zoë']);
  });

  it('bytes that are not UTF-8 after the first 64 KiB are copied through unchanged', async () => {
    const lines = Array.from({ length: 3000 }, (_, i) => `person${i}@example.com`).join('\n');
    const file = tempFile('late.csv', Buffer.concat([Buffer.from(`email\n${lines}\n`), Buffer.from([0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72, 0x0a])]));
    const { source, rawRows } = await readAll(file);
    expect(source.encoding).toBe('utf-8');
    expect(source.outputBom).toBe(false);
    expect(rawRows.at(-1)).toEqual(['M\xfcller']);
    expect(rawRows.filter((row) => hasInvalidUtf8(row[0]!))).toHaveLength(1);
  });

  it('a file with no BOM and invalid UTF-8 early is windows-1252', async () => {
    const { source, rows } = await readAll(tempFile('w.csv', Buffer.from('name\nM\xfcller \x80\n', 'latin1')));
    expect(source.encoding).toBe('windows-1252');
    expect(rows).toEqual([['Müller €']]);
  });

  it('a UTF-8 BOM is removed and asks for a BOM in the outputs', async () => {
    const { source, header } = await readAll(tempFile('b.csv', '\ufeffemail\na@example.com\n'));
    expect(header).toEqual(['email']);
    expect(source.encoding).toBe('utf-8');
    expect(source.outputBom).toBe(true);
  });

  it('a UTF-8 BOM is removed from a file longer than the head, and from a stream of strings', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `p${i}@example.com,Zoë`).join('\n');
    const big = await readAll(tempFile('big.csv', `\ufeffemail,name\n${lines}\n`));
    expect(big.header).toEqual(['email', 'name']);
    expect(big.rows).toHaveLength(5000);
    expect(big.source.bytesRead()).toBe(big.source.totalBytes);
    const text = `\ufeffemail,name\n${lines}\n`;
    const pieces = Array.from({ length: Math.ceil(text.length / 1000) }, (_, i) => text.slice(i * 1000, (i + 1) * 1000));
    const streamed = await readAll(Readable.from(pieces));
    expect(streamed.header).toEqual(['email', 'name']);
    expect(streamed.rows).toEqual(big.rows);
    expect(streamed.source.outputBom).toBe(true);
  });

  it('a given encoding label is canonicalized and used (latin1 is windows-1252)', async () => {
    const { source, rows } = await readAll(tempFile('l.csv', Buffer.from('name\nZo\xeb\n', 'latin1')), { encoding: 'Latin1' });
    expect(source.encoding).toBe('windows-1252');
    expect(rows).toEqual([['Zoë']]);
  });

  it('--encoding reads UTF-16 without a BOM, and encodings iconv-lite lacks', async () => {
    const utf16 = await readAll(tempFile('u.csv', Buffer.from('name\nZoë\n', 'utf16le')), { encoding: 'utf-16le' });
    expect(utf16.rows).toEqual([['Zoë']]);
    expect(utf16.source.outputBom).toBe(true);
    const greek = await readAll(tempFile('g.csv', Buffer.from([0x6e, 0x0a, 0xc1, 0xe8, 0xde, 0xed, 0xe1, 0x0a])), { encoding: 'iso-8859-7' });
    expect(greek.rows).toEqual([['Αθήνα']]);
    // x-mac-cyrillic is decoded by TextDecoder, iconv-lite does not know it.
    const cyrillic = await readAll(tempFile('c.csv', Buffer.from([0x6e, 0x0a, 0x8c, 0xe8, 0xf0, 0x0a])), { encoding: 'x-mac-cyrillic' });
    expect(cyrillic.rows).toEqual([['Мир']]);
    expect(cyrillic.source.encoding).toBe('x-mac-cyrillic');
  });

  it('an unknown encoding label is a ConfigError that names the option, the rule and the value', async () => {
    await expect(openCsv(fixture('no-header.csv'), { encoding: 'klingon' })).rejects.toThrow(
      new ConfigError("Invalid option --encoding: must be an encoding label such as utf-8, utf-16le or windows-1252, got 'klingon'"),
    );
  });
});

describe('transcoding across chunks', () => {
  it.each([
    ['utf-16le', (text: string) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')])],
    ['windows-1252', (text: string) => Buffer.from(text.replace(/€/g, '\x80'), 'latin1')],
  ])('a %s file larger than the head reads every record whole', async (encoding, encode) => {
    const lines = Array.from({ length: 20000 }, (_, i) => `p${i}@example.com;Zoë Müller;${i},50 €`).join('\r\n');
    const file = tempFile('big.csv', encode(`email;name;amount\r\n${lines}\r\n`));
    expect(fs.statSync(file).size).toBeGreaterThan(3 * 256 * 1024);
    const { source, rows } = await readAll(file);
    expect(source.encoding).toBe(encoding);
    expect(source.delimiter).toBe(';');
    expect(rows).toHaveLength(20000);
    expect(rows[12345]).toEqual(['p12345@example.com', 'Zoë Müller', '12345,50 €']);
    expect(rows.every((row) => row.length === 3 && row[1] === 'Zoë Müller')).toBe(true);
    expect(source.bytesRead()).toBe(source.totalBytes);
  });
});

describe('batches and progress', () => {
  it('records come in batches of up to 512 and bytesRead reaches the file size', async () => {
    const lines = Array.from({ length: 1300 }, (_, i) => `p${i}@example.com,Zoë ${i}`).join('\r\n');
    const file = tempFile('many.csv', `email,name\r\n${lines}\r\n\r\n`);
    const source = await openCsv(file);
    const sizes: number[] = [];
    for await (const batch of source.batches) sizes.push(batch.length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(1300);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(512);
    expect(source.bytesRead()).toBe(source.totalBytes);
  });
});
