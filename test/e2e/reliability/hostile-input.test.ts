// Scenario 5, hostile input, through the built CLI: every csv-spectrum file; one file with a BOM,
// CRLF, quoted newlines, ragged rows, duplicate header names, invalid UTF-8, a NUL byte and a 1 MB
// cell (as a file and on stdin, as CSV and as JSON Lines); empty and header-only files; unclosed
// quotes. Each is handled as docs/reference.md documents: never a crash or a stack trace, every row
// written, input cells byte for byte as they were.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../../src/sandbox/server.js';
import { lines, runCli } from '../../helpers/cli.js';
import { makeTempDir, readCsvBytes, readCsvObjects } from '../../helpers/files.js';
import { closeAll, envFor, expectedEmail, expectNoCrash, expectNoSecret, lookupsSeen, sandbox } from './support.js';
import { hangBound } from '../../helpers/processes.js';

let s: Sandbox;
beforeAll(async () => {
  s = await sandbox();
});
afterAll(closeAll);

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
const LEAD_COLUMNS =
  'lead_status,lead_name,lead_title,lead_constructed_title,lead_company_name,lead_company_domain,lead_network_url,lead_location,lead_city,lead_state,lead_country,lead_country_code,lead_experience_months,lead_profile_picture,lead_type,lead_id,lead_billing';

/** Files a run created beside the input: outputs, sidecars and temporary files. */
function createdFiles(dir: string, input: string): string[] {
  return fs.readdirSync(dir).filter((f) => f !== path.basename(input) && !f.startsWith('store.sqlite'));
}

describe('csv-spectrum through the CLI', () => {
  const corpus = path.dirname(createRequire(import.meta.url).resolve('csv-spectrum/package.json'));
  const names = fs.readdirSync(path.join(corpus, 'csvs')).map((f) => path.basename(f, '.csv'));

  it.concurrent.each(names)(
    '%s: every cell comes back byte for byte, in the output and the sidecar',
    async (name) => {
      const dir = makeTempDir();
      const input = path.join(dir, `${name}.csv`);
      fs.copyFileSync(path.join(corpus, 'csvs', `${name}.csv`), input);
      const json = JSON.parse(fs.readFileSync(path.join(corpus, 'json', `${name}.json`), 'utf8')) as unknown;
      const expected = (Array.isArray(json) ? json : [json]) as Array<Record<string, string>>;
      const header = Object.keys(expected[0]!);
      // No column of the corpus is a key: every row is invalid input (exit 5: the file's own
      // problem, not the API's) and no request is made.
      const result = await runCli(['enrich', input, '--by', 'email', '--column', header[0]!, '--json'], { env: envFor(s, dir) });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(5);
      expect(JSON.parse(result.stdout)).toMatchObject({ rows: expected.length, requests: 0 });
      const inputCells = readCsvBytes(input);
      const output = path.join(dir, `${name}.enriched.csv`);
      expect(readCsvBytes(output).map((row) => row.slice(0, header.length))).toEqual(inputCells);
      const sidecar = readCsvBytes(path.join(dir, `${name}.enriched.errors.csv`));
      expect(sidecar.map((row) => row.slice(1, header.length + 1))).toEqual(inputCells);
      expect(sidecar.slice(1).map((row) => row[0])).toEqual(expected.map((_, i) => String(i + 1)));
      // The corpus's location_coordinates.json disagrees with its own (latin1) CSV: bytes only there.
      if (name !== 'location_coordinates') {
        const rows = readCsvObjects(output);
        expect(rows.map((row) => Object.fromEntries(header.map((h) => [h, row[h]])))).toEqual(expected);
      }
      const raw = fs.readFileSync(output, 'latin1');
      if (name.endsWith('_crlf')) expect(raw.split('\r\n').length).toBeGreaterThan(expected.length);
      else expect(raw).not.toContain('\r\n');
    },
    hangBound(30_000),
  );
});

describe.concurrent('one file with everything at once', () => {
  const MB = 1024 * 1024;
  const bigCell = 'x'.repeat(MB - 7) + ',"q"\r\n!';
  const badUtf8 = Buffer.from([0xff, 0xfe, 0x80, 0xc0, 0xaf]);
  const records: Buffer[] = [
    Buffer.from('Email,notes,notes,Zoë 東京'), // duplicate names, a UTF-8 name
    Buffer.from('alice@acme.com,"line one\r\nline two","say ""hi""",=1+1'), // quoted CRLF, quotes, a formula-looking input cell
    Buffer.from('  BOB@Acme.com '), // a short row, a key to normalize
    Buffer.from('carol@acme.com,a,b,c,EXTRA'), // a long row: invalid_input
    Buffer.concat([Buffer.from('dave@acme.com,'), badUtf8, Buffer.from(',ok,')]), // invalid UTF-8 in a cell
    Buffer.from('erin@acme.com,nul\0here,x,y'), // a NUL byte in a cell
    Buffer.from(`frank@acme.com,"${bigCell.replace(/"/g, '""')}",,`), // a 1 MB cell
    Buffer.from(''), // a blank line: not a record (cli-contract, "Input files")
    Buffer.from('grace@acme.com,ab"cd,+SUM(1),@cmd'), // a quote inside an unquoted field; formula-looking cells
    Buffer.from('ivan@acme.com,"quoted, comma",東京,-1'),
  ];
  const emailsByRow = [
    'alice@acme.com',
    'BOB@Acme.com',
    'carol@acme.com',
    'dave@acme.com',
    'erin@acme.com',
    'frank@acme.com',
    'grace@acme.com',
    'ivan@acme.com',
  ];
  const invalidRows = [3];
  // Invalid UTF-8 in the first 64 KiB would make the file read as windows-1252 (cli-contract,
  // "Input files"): these tests are about a file read as UTF-8, whose stray bytes pass unchanged.
  const asUtf8 = ['--encoding', 'utf-8'];
  /** The input's records as csv-parse reads them, but for the blank line, which is no record. */
  const records_ = (file: string) => readCsvBytes(file).filter((r) => !(r.length === 1 && r[0] === ''));
  const hostile = Buffer.concat([BOM, ...records.flatMap((r) => [r, Buffer.from('\r\n')])]);

  function check(output: string, input: string): void {
    const raw = fs.readFileSync(output);
    // The BOM and the CRLF line ending are kept; the hostile bytes come out as they went in.
    expect([...raw.subarray(0, 3)]).toEqual([...BOM]);
    expect(raw.subarray(3, raw.indexOf('\n') + 1).toString('utf8')).toBe(`Email,notes,notes,Zoë 東京,${LEAD_COLUMNS}\r\n`);
    for (const bytes of [badUtf8, Buffer.from('nul\0here'), Buffer.from(bigCell.replace(/"/g, '""'))]) expect(raw.includes(bytes)).toBe(true);
    expect(raw.toString('latin1').replace(/\r\n/g, '').includes('\n')).toBe(false); // no bare LF anywhere
    // Cell for cell: every row, in order, its input cells unchanged (short rows padded with empty cells).
    const inputCells = records_(input);
    const outputCells = readCsvBytes(output);
    expect(outputCells).toHaveLength(records.length - 1);
    outputCells.forEach((row, i) => {
      const want = [...inputCells[i]!, '', '', '', ''].slice(0, 4);
      expect(row.slice(0, 4), `row ${i}`).toEqual(want);
    });
    const rows = readCsvObjects(output);
    rows.forEach((row, i) => {
      if (invalidRows.includes(i + 1)) {
        expect(row.lead_status, `row ${i + 1}`).toBe('error');
        return;
      }
      const answer = expectedEmail(emailsByRow[i]!);
      expect(row.lead_status, `row ${i + 1}`).toBe(answer.kind);
      if (answer.kind === 'found') expect(row.lead_id).toBe(answer.data.lead.id);
    });
  }

  it(
    "as a file: exit 5 (the file's own bad keys only), BOM, CRLF and every byte kept, the two bad rows in the sidecar, no request for them",
    async () => {
      const dir = makeTempDir();
      const input = path.join(dir, 'hostile.csv');
      fs.writeFileSync(input, hostile);
      const own = await sandbox(); // its own, to count its lookups while other tests run
      const result = await runCli(['enrich', input, '--json', ...asUtf8], { env: envFor(own, dir) });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(5);
      const summary = JSON.parse(result.stdout);
      expect(summary).toMatchObject({ rows: 8, status: { error: 1, skipped: 0 }, errorCodes: { invalid_input: 1 } });
      // Seven valid keys, one request each; none for the invalid ones.
      expect(lookupsSeen(own)).toBe(7);
      check(path.join(dir, 'hostile.enriched.csv'), input);
      const sidecar = path.join(dir, 'hostile.enriched.errors.csv');
      const sideRaw = fs.readFileSync(sidecar);
      expect([...sideRaw.subarray(0, 3)]).toEqual([...BOM]);
      expect(sideRaw.subarray(3, sideRaw.indexOf('\n') + 1).toString('utf8')).toBe('row,Email,notes,notes,Zoë 東京,error_code,error_message\r\n');
      const side = readCsvBytes(sidecar).slice(1);
      expect(side.map((r) => [r[0], r[5]])).toEqual(invalidRows.map((n) => [String(n), 'invalid_input']));
      const inputCells = records_(input);
      side.forEach((r) => {
        expect(r.slice(1, 5)).toEqual([...inputCells[Number(r[0])]!, '', '', '', ''].slice(0, 4));
      });
      expect(side[0]![6]).toContain('EXTRA');
      expectNoSecret([result.stdout, result.stderr], [dir]);
    },
    hangBound(30_000),
  );

  it(
    'on stdin: the same rows and cells as from the file',
    async () => {
      const dir = makeTempDir();
      fs.writeFileSync(path.join(dir, 'hostile.csv'), hostile);
      const output = path.join(dir, 'from-stdin.csv');
      const result = await runCli(['enrich', '-', '-o', output, '--quiet', ...asUtf8], { env: envFor(s, dir), input: hostile });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(5);
      check(output, path.join(dir, 'hostile.csv'));
      expect(readCsvBytes(path.join(dir, 'from-stdin.errors.csv'))).toHaveLength(1 + invalidRows.length);
    },
    hangBound(30_000),
  );

  it(
    'as JSON Lines: one valid JSON object per row, duplicate names as notes_2, cells decoded as UTF-8',
    async () => {
      const dir = makeTempDir();
      const input = path.join(dir, 'hostile.csv');
      fs.writeFileSync(input, hostile);
      const result = await runCli(['enrich', input, '--format', 'jsonl', '--quiet', ...asUtf8], { env: envFor(s, dir) });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(5);
      const text = fs.readFileSync(path.join(dir, 'hostile.enriched.jsonl'), 'utf8');
      const objects = text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as { row: number; lead_status: string; input: Record<string, string>; error?: { code: string } });
      expect(objects.map((o) => o.row)).toEqual(emailsByRow.map((_, i) => i + 1));
      expect(Object.keys(objects[0]!.input)).toEqual(['Email', 'notes', 'notes_2', 'Zoë 東京']);
      expect(objects[0]!.input).toEqual({ Email: 'alice@acme.com', notes: 'line one\r\nline two', notes_2: 'say "hi"', 'Zoë 東京': '=1+1' });
      expect(objects[4]!.input.notes).toBe('nul\0here');
      expect(objects[5]!.input.notes).toBe(bigCell);
      expect(objects.filter((o) => o.error).map((o) => [o.row, o.error!.code])).toEqual(invalidRows.map((n) => [n, 'invalid_input']));
    },
    hangBound(30_000),
  );
});

describe.concurrent('a key that is not valid UTF-8', () => {
  it(
    '"josé@acme.com" saved as Windows-1252 is read as Windows-1252: looked up as josé, written back in UTF-8 with a BOM',
    async () => {
      // Not valid UTF-8 in its first 64 KiB: the file is windows-1252 (cli-contract, "Input files").
      const dir = makeTempDir();
      const input = path.join(dir, 'cp1252.csv');
      const key = Buffer.from('jos\xe9@acme.com', 'latin1');
      fs.writeFileSync(input, Buffer.concat([Buffer.from('email,name\n'), key, Buffer.from(',Jos\xe9\n', 'latin1'), Buffer.from('ok@acme.com,Ok\n')]));
      const own = await sandbox();
      const result = await runCli(['enrich', input, '--quiet'], { env: envFor(own, dir) });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(0);
      const raw = fs.readFileSync(path.join(dir, 'cp1252.enriched.csv'));
      expect([...raw.subarray(0, 3)]).toEqual([...BOM]);
      expect(raw.includes(Buffer.from('josé@acme.com,José,', 'utf8'))).toBe(true);
      expect(lookupsSeen(own)).toBe(2);
    },
    hangBound(30_000),
  );

  it(
    'read as UTF-8 (--encoding utf-8), the same key is refused as invalid_input: no request, no credit, the cell unchanged',
    async () => {
      // Decoded as UTF-8 the key becomes "jos\ufffd@acme.com", a key the user never wrote: looking it
      // up pays for an answer about somebody else (docs/reference.md, "Keys": an invalid key costs nothing).
      const dir = makeTempDir();
      const input = path.join(dir, 'cp1252.csv');
      const key = Buffer.from('jos\xe9@acme.com', 'latin1');
      fs.writeFileSync(input, Buffer.concat([Buffer.from('email,name\n'), key, Buffer.from(',Jos\xe9\n', 'latin1'), Buffer.from('ok@acme.com,Ok\n')]));
      const own = await sandbox();
      const result = await runCli(['enrich', input, '--quiet', '--encoding', 'utf-8'], { env: envFor(own, dir) });
      expectNoCrash(result);
      const raw = fs.readFileSync(path.join(dir, 'cp1252.enriched.csv'));
      expect(raw.includes(Buffer.concat([key, Buffer.from(',Jos\xe9,', 'latin1')]))).toBe(true);
      const side = readCsvBytes(path.join(dir, 'cp1252.enriched.errors.csv'));
      expect(side.slice(1).map((r) => [r[0], r[1], r[3]])).toEqual([['1', key.toString('latin1'), 'invalid_input']]);
      expect(result.code).toBe(5);
      expect(lookupsSeen(own)).toBe(1); // ok@acme.com only
    },
    hangBound(30_000),
  );
});

describe.concurrent('empty, blank and header-only files', () => {
  it.each([
    ['an empty file (0 bytes)', Buffer.alloc(0), /in\.csv is empty \(no line holds any text\): give a CSV file whose first line is a header/],
    ['a file holding only a BOM', BOM, /is empty/],
    ['a file holding only a line break', Buffer.from('\n'), /is empty/],
  ])(
    '%s: exit 1, one line, no output',
    async (_name, bytes, message) => {
      const dir = makeTempDir();
      const input = path.join(dir, 'in.csv');
      fs.writeFileSync(input, bytes);
      const result = await runCli(['enrich', input], { env: envFor(s, dir) });
      expectNoCrash(result);
      expect(result.code).toBe(1);
      expect(lines(result.stderr), result.stderr).toHaveLength(1);
      expect(result.stderr).toMatch(message);
      expect(createdFiles(dir, input)).toEqual([]);
    },
    hangBound(30_000),
  );

  it.each([
    ['with LF', Buffer.from('email\n'), '', '\n'],
    ['without a final line break', Buffer.from('email'), '', '\n'],
    ['with a BOM and CRLF', Buffer.concat([BOM, Buffer.from('Email,name\r\n')]), '\ufeff', '\r\n'],
  ])(
    'header only, %s: exit 0, both outputs with their header only',
    async (_name, bytes, bom, eol) => {
      const dir = makeTempDir();
      const input = path.join(dir, 'in.csv');
      fs.writeFileSync(input, bytes);
      const result = await runCli(['enrich', input, '--json'], { env: envFor(s, dir) });
      expectNoCrash(result);
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout)).toMatchObject({ rows: 0, requests: 0 });
      const header = bytes.toString('utf8').replace('\ufeff', '').trimEnd();
      expect(fs.readFileSync(path.join(dir, 'in.enriched.csv'), 'utf8')).toBe(`${bom}${header},${LEAD_COLUMNS}${eol}`);
      expect(fs.readFileSync(path.join(dir, 'in.enriched.errors.csv'), 'utf8')).toBe(`${bom}row,${header},error_code,error_message${eol}`);
    },
    hangBound(30_000),
  );
});

describe.concurrent('unclosed quotes', () => {
  it.each([
    ['at the end of the file', 'email,notes\na@acme.com,x\nb@acme.com,"never closed\n'],
    ['in the middle, swallowing the rest', 'email,notes\na@acme.com,x\nb@acme.com,"open\nc@acme.com,y\nd@acme.com,z\n'],
  ])(
    '%s: unreadable input, exit 1 with one line naming the problem, and no output or temporary file left',
    async (_name, text) => {
      const dir = makeTempDir();
      const input = path.join(dir, 'in.csv');
      fs.writeFileSync(input, text);
      const result = await runCli(['enrich', input], { env: envFor(s, dir) });
      expectNoCrash(result);
      expect(result.code).toBe(1);
      expect(lines(result.stderr), result.stderr).toHaveLength(1);
      expect(result.stderr).toMatch(/Cannot parse .*in\.csv.*Quote Not Closed/);
      expect(createdFiles(dir, input)).toEqual([]);
    },
    hangBound(30_000),
  );
});
