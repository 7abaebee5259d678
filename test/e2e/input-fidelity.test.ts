// Input fidelity (cli-contract "Input files"): the encoding rule (a stray Latin-1 byte in
// a UTF-8 export does not make the file windows-1252), windows-1252 decoded as the WHATWG Encoding
// Standard says, NUL bytes in the cells of a text file, the line ending of a header too wide for
// the first chunk of a pipe, and a header cell that names the key column. The fixtures were made
// the way the tools that export such files make them (fixtures/README.md).
import fs from 'node:fs';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { UnreadableInputError } from '../../src/api/errors.js';
import { createDecoding, decodeWindows1252, utf8Census } from '../../src/read/encoding.js';
import { fromBytes, openCsv } from '../../src/read/index.js';
import { REPO_ROOT, runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/files.js';

const FIXTURES = path.join(REPO_ROOT, 'fixtures', 'input');

function copy(name: string): { dir: string; file: string } {
  const dir = makeTempDir('lead-enrich-fidelity-');
  const file = path.join(dir, name);
  fs.copyFileSync(path.join(FIXTURES, name), file);
  return { dir, file };
}

async function readAll(input: string) {
  const source = await openCsv(input);
  const rows: string[][] = [];
  for await (const batch of source.batches) rows.push(...batch);
  return { source, rows };
}

/** Records of a CSV file as byte strings (latin1: one character per byte), byte for byte. */
function byteRecords(file: string, delimiter = ','): string[][] {
  let text = fs.readFileSync(file, 'latin1');
  if (text.startsWith('\xef\xbb\xbf')) text = text.slice(3);
  return parse(text, { delimiter, relax_column_count: true, record_delimiter: ['\r\n', '\n'] }) as string[][];
}

describe('the encoding rule: a stray Latin-1 byte in a UTF-8 export', () => {
  it('keeps the file UTF-8: the byte copied through and counted, every other cell byte-identical, exit 0', async () => {
    const { dir, file } = copy('utf8-stray-latin1.csv');
    const output = path.join(dir, 'out.csv');
    const result = await runCli(['enrich', file, '--sandbox', '-o', output]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('Input cells with bytes that are not UTF-8 (copied unchanged): 1');
    const input = byteRecords(file);
    const written = byteRecords(output);
    expect(written).toHaveLength(30);
    // No BOM: the input was read as UTF-8 and had none.
    expect(fs.readFileSync(output).subarray(0, 3).toString('latin1')).not.toBe('\xef\xbb\xbf');
    input.forEach((record, i) => {
      expect(written[i]!.slice(0, record.length)).toEqual(record);
    });
    // The one stray byte (é as Latin-1 0xE9) is there as it was; the accented cells are UTF-8 text.
    expect(written[5]![0]).toBe('Ren\xe9');
    expect(fromBytes(written[5]![1]!)).toBe('Lefèvre');
    expect(fromBytes(written[29]![0]!)).toBe('Héloïse');
  });

  it('counts valid multi-byte characters against invalid bytes in the first 64 KiB', async () => {
    const mostlyUtf8 = Buffer.concat([Buffer.from('name\nZoë\nMüller\n'), Buffer.from([0x52, 0x65, 0x6e, 0xe9, 0x0a])]);
    expect(utf8Census(mostlyUtf8, true)).toEqual({ multiByte: 2, invalid: 1 });
    const windows1252 = Buffer.from('name\nZo\xeb\nM\xfcller\nRen\xe9\n', 'latin1');
    expect(utf8Census(windows1252, true)).toEqual({ multiByte: 0, invalid: 3 });
    // A sequence cut by the end of a head that is not the whole file is not held against it.
    expect(utf8Census(Buffer.from([0x5a, 0x6f, 0xc3]), false)).toEqual({ multiByte: 0, invalid: 0 });
    expect(utf8Census(Buffer.from([0x5a, 0x6f, 0xc3]), true)).toEqual({ multiByte: 0, invalid: 1 });
    expect((await readAll(tmp('u.csv', mostlyUtf8))).source.encoding).toBe('utf-8');
    expect((await readAll(tmp('w.csv', windows1252))).source.encoding).toBe('windows-1252');
  });
});

function tmp(name: string, bytes: Buffer | string): string {
  const file = path.join(makeTempDir('lead-enrich-fidelity-'), name);
  fs.writeFileSync(file, bytes);
  return file;
}

describe('windows-1252 as the WHATWG Encoding Standard decodes it', () => {
  const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

  it('0x81, 0x8D, 0x8F, 0x90, 0x9D become U+0081 ..., never U+FFFD; 0x80 is €', async () => {
    const { source, rows } = await readAll(path.join(FIXTURES, 'windows1252-unassigned.csv'));
    expect(source.encoding).toBe('windows-1252');
    expect(rows.map((row) => row.map(fromBytes))).toEqual([
      ['Zoë Müller', 'zoe.mueller@example.de', 'a\u0081b\u008dc\u008fd\u0090e\u009df € \u2019ok\u2019'],
      ['Jürgen Weiß', 'j.weiss@example.de', '\u201cStraße\u201d'],
    ]);
  });

  it('the decoder in use and the table for Nodes whose TextDecoder is wrong both match the WHATWG index on all 256 bytes', () => {
    // The index, from the standard: 0x80-0x9F below, every other byte its own code point.
    const c1 = [
      0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f, 0x90, 0x2018, 0x2019, 0x201c, 0x201d,
      0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
    ];
    const expected = String.fromCodePoint(...Array.from({ length: 256 }, (_, i) => (i >= 0x80 && i < 0xa0 ? c1[i - 0x80]! : i)));
    expect(decodeWindows1252(allBytes)).toBe(expected);
    const decoding = createDecoding('windows-1252');
    expect(decoding.write(allBytes) + decoding.end()).toBe(expected);
  });

  it('the enriched CSV holds the five as UTF-8 control characters, with a BOM', async () => {
    const { dir, file } = copy('windows1252-unassigned.csv');
    const output = path.join(dir, 'out.csv');
    const result = await runCli(['enrich', file, '--sandbox', '-o', output]);
    expect(result.code, result.stderr).toBe(0);
    const bytes = fs.readFileSync(output);
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    const text = bytes.toString('utf8');
    expect(text).not.toContain('\ufffd');
    expect(text).toContain('a\u0081b\u008dc\u008fd\u0090e\u009df € \u2019ok\u2019');
  });
});

describe('NUL bytes in the cells of a text file', () => {
  it('a windows-1252 export with NUL-padded fields is read as text, the NUL bytes kept', async () => {
    const { source, rows } = await readAll(path.join(FIXTURES, 'windows1252-nul-padded.csv'));
    expect(source.encoding).toBe('windows-1252');
    expect(source.delimiter).toBe(';');
    expect(source.recordDelimiter).toBe('\r\n');
    expect(fromBytes(source.header[2]!)).toBe('E-Mail');
    expect(rows).toHaveLength(40);
    expect(fromBytes(rows[0]![0]!)).toBe(`Jürgen${'\0'.repeat(14)}`);
    expect(fromBytes(rows[0]![1]!)).toBe(`Weiß${'\0'.repeat(16)}`);
  });

  it('enriches it end to end: exit 0, the cells byte for byte in UTF-8', async () => {
    const { dir, file } = copy('windows1252-nul-padded.csv');
    const output = path.join(dir, 'out.csv');
    const result = await runCli(['enrich', file, '--sandbox', '-o', output]);
    expect(result.code, result.stderr).toBe(0);
    const written = byteRecords(output, ';').map((record) => record.map(fromBytes));
    expect(written).toHaveLength(41);
    expect(written[2]!.slice(0, 3)).toEqual([`Zoë${'\0'.repeat(17)}`, `Müller${'\0'.repeat(14)}`, 'z.1@example.de']);
  });

  it('real binary files are still refused: an executable, a SQLite database', async () => {
    const executable = tmp('node.csv', fs.readFileSync(process.execPath).subarray(0, 256 * 1024));
    const database = path.join(makeTempDir('lead-enrich-fidelity-'), 'contacts.csv');
    const db = new DatabaseSync(database);
    db.exec('CREATE TABLE contacts (email TEXT, name TEXT); CREATE INDEX by_email ON contacts (email);');
    const insert = db.prepare('INSERT INTO contacts VALUES (?, ?)');
    for (let i = 0; i < 500; i += 1) insert.run(`person${i}@example.com`, `Person ${i}`);
    db.close();
    for (const file of [executable, database]) {
      const error = await openCsv(file).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(UnreadableInputError);
      expect((error as Error).message).toBe(`${file} is a binary file, not CSV text: give a CSV file`);
    }
  });
});

describe('a very wide header read from a pipe', () => {
  const width = 6000;
  const header = Array.from({ length: width }, (_, i) => (i === 0 ? 'email' : `custom_field_${String(i).padStart(5, '0')}`));
  const csv =
    [
      header.join(','),
      ...Array.from({ length: 3 }, (_, r) => [`person${r}@example.com`, ...Array.from({ length: width - 1 }, (_, i) => String(i))].join(',')),
    ].join('\r\n') + '\r\n';

  it('is longer than the first 64 KiB chunk, and its CRLF still ends the output records', async () => {
    expect(csv.indexOf('\r\n')).toBeGreaterThan(64 * 1024);
    const result = await runCli(['enrich', '-', '-o', '-', '--sandbox', '--quiet'], { input: csv });
    expect(result.code, result.stderr).toBe(0);
    const records = result.stdout.split('\r\n');
    expect(records).toHaveLength(5);
    expect(records.at(-1)).toBe('');
    expect(result.stdout.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/);
    expect(records[0]!.split(',').slice(0, 2)).toEqual(['email', 'custom_field_00001']);
    expect(records[1]!.split(',')[width]).toMatch(/^(found|not_found)$/);
  });
});

describe('a header cell that names the key column', () => {
  it('wins over an email-looking cell elsewhere in the first line: the line is a header', async () => {
    const file = tmp('owners.csv', 'email,name,sales@acme.example\r\nann@example.com,Ann,yes\r\nbob@example.com,Bob,no\r\n');
    const dir = path.dirname(file);
    const result = await runCli(['enrich', file, '--sandbox', '-o', path.join(dir, 'out.csv')]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/read as data/);
    const written = byteRecords(path.join(dir, 'out.csv'));
    expect(written[0]!.slice(0, 4)).toEqual(['email', 'name', 'sales@acme.example', 'lead_status']);
    expect(written).toHaveLength(3);
  });

  it('a first line whose key cell is itself an email address is still data', async () => {
    const file = tmp('no-header.csv', 'ann@example.com,Ann,Website\nbob@example.com,Bob,Other\n');
    const dir = path.dirname(file);
    const result = await runCli(['enrich', file, '--sandbox', '-o', path.join(dir, 'out.csv')]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/holds "ann@example\.com", a key, not a column name: it is read as data/);
    expect(byteRecords(path.join(dir, 'out.csv'))).toHaveLength(2);
  });
});
