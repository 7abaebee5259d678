// Real-world input files end to end (cli-contract.md, "Input files"): what a spreadsheet saved goes
// in, the enriched CSV and the sidecar come out in the input's delimiter and line ending, UTF-8
// (with a BOM when the input had one or was not UTF-8), cells unchanged as text, rows numbered
// without the header and the blank lines. Against the sandbox, counting requests server-side.
import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrich, type EnrichOptions } from '../../src/run/enrich.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { makeTempDir } from '../helpers/files.js';

const FIXTURES = path.join(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'fixtures', 'input');
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

let s: Sandbox;
beforeAll(async () => {
  s = await startSandbox({ port: 0, rpm: 60_000, notFoundRate: 0, credits: 1_000_000 });
});
afterAll(() => s.close());

function copy(name: string, dir = makeTempDir()): string {
  const file = path.join(dir, name);
  fs.copyFileSync(path.join(FIXTURES, name), file);
  return file;
}

const run = (options: Partial<EnrichOptions> & { input: string }) => enrich({ baseUrl: s.baseUrl, token: s.token, store: ':memory:', ...options });

/** An output file: its BOM, line ending and records, parsed with the given delimiter. */
function readOutput(file: string, delimiter: string) {
  let raw = fs.readFileSync(file);
  if (file.endsWith('.gz')) raw = gunzipSync(raw);
  const bom = raw.subarray(0, 3).equals(BOM);
  const text = raw.subarray(bom ? 3 : 0).toString('utf8');
  const eol = /\r\n/.test(text.slice(0, text.indexOf('\n') + 1)) ? '\r\n' : text.includes('\n') ? '\n' : '\r';
  const records = parse(text, { delimiter, relax_column_count: true, record_delimiter: [eol] }) as string[][];
  return { bom, eol, records, valid: Buffer.from(text, 'utf8').equals(raw.subarray(bom ? 3 : 0)) };
}

describe('spreadsheet exports', () => {
  it('a German Excel export (semicolons, windows-1252, CRLF) comes back in semicolons and CRLF, UTF-8 with a BOM', async () => {
    const input = copy('excel-de-semicolon-windows1252.csv');
    const before = fs.readFileSync(input);
    const summary = await run({ input });
    expect(summary.rows).toBe(3);
    expect(summary.status.found).toBe(3);
    const out = readOutput(input.replace('.csv', '.enriched.csv'), ';');
    expect(out).toMatchObject({ bom: true, eol: '\r\n', valid: true });
    expect(out.records[0]!.slice(0, 6)).toEqual(['Vorname', 'Nachname', 'E-Mail', 'Firma', 'Umsatz', 'lead_status']);
    expect(out.records[1]!.slice(0, 5)).toEqual(['Zoë', 'Müller', 'zoe.mueller@example.de', 'Müller & Söhne GmbH', '1.234,50 €']);
    expect(out.records[2]!.slice(0, 4)).toEqual(['Jürgen', 'Weiß', 'j.weiss@example.de', 'Straße "Süd" AG']);
    expect(out.records).toHaveLength(4);
    const side = readOutput(input.replace('.csv', '.enriched.errors.csv'), ';');
    expect(side).toMatchObject({ bom: true, eol: '\r\n' });
    expect(side.records).toEqual([['row', 'Vorname', 'Nachname', 'E-Mail', 'Firma', 'Umsatz', 'error_code', 'error_message']]);
    expect(fs.readFileSync(input).equals(before)).toBe(true);
  });

  it("Excel's Unicode text (UTF-16LE, tabs, CRLF) works with no option: tab-separated UTF-8 with a BOM", async () => {
    const input = copy('excel-unicode-text-utf16le.txt');
    const output = path.join(path.dirname(input), 'out.csv');
    const summary = await run({ input, output });
    expect(summary.status.found).toBe(3);
    const out = readOutput(output, '\t');
    expect(out).toMatchObject({ bom: true, eol: '\r\n', valid: true });
    expect(out.records[1]!.slice(0, 5)).toEqual(['Zoë', 'Müller', 'zoe.mueller@example.de', 'Müller & Söhne GmbH', '1.234,50 €']);
  });

  it('UTF-16BE with a BOM, LF', async () => {
    const input = copy('utf16be-bom.csv');
    const summary = await run({ input });
    expect(summary.status.found).toBe(3);
    const out = readOutput(input.replace('.csv', '.enriched.csv'), '\t');
    expect(out).toMatchObject({ bom: true, eol: '\n' });
    expect(out.records[2]!.slice(0, 2)).toEqual(['Jürgen', 'Weiß']);
  });

  it('a pipe-separated UTF-8 file without a BOM comes back with pipes and without a BOM', async () => {
    const input = copy('pipe-separated.csv');
    await run({ input });
    const out = readOutput(input.replace('.csv', '.enriched.csv'), '|');
    expect(out).toMatchObject({ bom: false, eol: '\n' });
    expect(out.records[1]!.slice(0, 3)).toEqual(['Zoë', 'Müller', 'zoe.mueller@example.de']);
  });

  it('a .csv.gz is read through gunzip and its outputs are written gzipped', async () => {
    const input = copy('pipe-separated.csv.gz');
    const summary = await run({ input });
    expect(summary.output).toBe(path.resolve(input.replace('.csv.gz', '.enriched.csv.gz')));
    const out = readOutput(summary.output!, '|');
    expect(out.records).toHaveLength(4);
    expect(readOutput(summary.errorsFile!, '|').records).toHaveLength(1);
  });
});

describe('lines, blank lines and headers', () => {
  it('mixed LF, CR and CRLF record ends: every record found, line endings inside quotes kept, the output ends lines as the header did', async () => {
    const input = copy('mixed-line-endings.csv');
    const summary = await run({ input });
    expect(summary.rows).toBe(4);
    const out = readOutput(input.replace('.csv', '.enriched.csv'), ',');
    expect(out.eol).toBe('\r\n');
    expect(out.records.map((r) => r.slice(0, 2))).toEqual([
      ['email', 'name'],
      ['a@example.com', 'Line one\nline two'],
      ['b@example.com', 'Bob'],
      ['c@example.com', 'Carol\r\nSmith'],
      ['d@example.com', 'Dave'],
    ]);
  });

  it('blank lines are not rows: not written, not counted, the sidecar numbers rows without them', async () => {
    const dir = makeTempDir();
    const input = path.join(dir, 'in.csv');
    fs.writeFileSync(input, '\n\nemail,name\na@example.com,Ann\n\n\nbroken@,Ben\n\n   ,Empty\nc@example.com,Cy\n\n');
    const summary = await run({ input });
    expect(summary.rows).toBe(4);
    expect(summary.errorCodes).toEqual({ invalid_input: 1, no_key: 1 });
    const side = readOutput(path.join(dir, 'in.enriched.errors.csv'), ',');
    expect(side.records.slice(1).map((r) => [r[0], r[1], r[3]])).toEqual([
      ['2', 'broken@', 'invalid_input'],
      ['3', '   ', 'no_key'],
    ]);
  });

  it('--no-header: the first line is data, no header line is written, the sidecar names the columns column_N', async () => {
    const input = copy('no-header.csv');
    const summary = await run({ input, header: false, column: '1', by: 'email' });
    expect(summary.rows).toBe(3);
    const out = readOutput(input.replace('.csv', '.enriched.csv'), ',');
    expect(out.records.map((r) => r[0])).toEqual(['jane@example.com', 'john@example.com', 'max@example.com']);
    const side = readOutput(input.replace('.csv', '.enriched.errors.csv'), ',');
    expect(side.records[0]!.slice(0, 3)).toEqual(['row', 'column_1', 'column_2']);
  });

  it('without --no-header, a first line that is an email address is read as data, and a warning says so', async () => {
    const input = copy('no-header.csv');
    const warnings: string[] = [];
    const summary = await run({ input, onWarning: (line) => warnings.push(line) });
    expect(summary.rows).toBe(3);
    expect(summary.lookup).toMatchObject({ kind: 'email', column: 'column_1' });
    expect(warnings.join('\n')).toMatch(/first line of .*no-header\.csv holds "jane@example\.com", a key, not a column name: it is read as data/);
  });

  it('an empty key cell is skipped with no_key and the run exits as a success (no request for it)', async () => {
    const dir = makeTempDir();
    const input = path.join(dir, 'in.csv');
    fs.writeFileSync(input, 'email,name\na@example.com,A\n,No email\n  ,Spaces\n');
    const before = s.stats.byOperation.lookup_email ?? 0;
    const summary = await run({ input });
    expect(summary.status).toMatchObject({ found: 1, error: 0, skipped: 2 });
    expect(summary.errorCodes).toEqual({ no_key: 2 });
    expect((s.stats.byOperation.lookup_email ?? 0) - before).toBe(1);
  });
});

describe('files that are not CSV, and files that must never be overwritten', () => {
  it.each([
    ['workbook.ods', /workbook\.ods is an OpenDocument spreadsheet \(\.ods\): save it as \.xlsx .* or as CSV/],
    ['workbook.xls', /workbook\.xls is an Excel 97-2003 workbook \(\.xls\) .*: save it as \.xlsx .* or as CSV/],
    ['document.pdf', /document\.pdf is a PDF document/],
    ['archive.zip', /archive\.zip is a zip archive/],
    ['empty.csv', /empty\.csv is empty/],
  ])('refuses %s by name, with no output and no request', async (name, message) => {
    const input = copy(name);
    const before = s.stats.requests;
    await expect(run({ input })).rejects.toThrow(message);
    expect(fs.readdirSync(path.dirname(input))).toEqual([name]);
    expect(s.stats.requests).toBe(before);
  });

  it('every spelling of the input as an output, sidecar or store is refused before any request, the input unchanged', async () => {
    const dir = makeTempDir();
    const input = path.join(dir, 'in.csv');
    fs.writeFileSync(input, 'email\na@example.com\n');
    const bytes = fs.readFileSync(input);
    fs.mkdirSync(path.join(dir, 'sub'));
    fs.symlinkSync(input, path.join(dir, 'link.csv'));
    fs.linkSync(input, path.join(dir, 'hard.csv'));
    const spellings = [input, path.join(dir, 'sub', '..', 'in.csv'), path.join(dir, 'link.csv'), path.join(dir, 'hard.csv')];
    const before = s.stats.requests;
    for (const spelling of spellings) {
      await expect(run({ input, output: spelling })).rejects.toThrow(/^output would overwrite the input/);
      await expect(run({ input, errors: spelling })).rejects.toThrow(/^errors would overwrite the input/);
      await expect(run({ input, store: spelling })).rejects.toThrow(/^store would overwrite the input/);
    }
    await expect(run({ input, output: path.join(dir, 'out.csv'), errors: path.join(dir, 'out.csv') })).rejects.toThrow(/^errors would overwrite output/);
    expect(s.stats.requests).toBe(before);
    expect(fs.readFileSync(input).equals(bytes)).toBe(true);
    expect(fs.readdirSync(dir).sort()).toEqual(['hard.csv', 'in.csv', 'link.csv', 'sub']);
  });
});

describe('the dry run warns when the key column or the delimiter looks wrong', () => {
  it("a semicolon file read with --delimiter ',' : most rows have no usable key", async () => {
    const { planRun } = await import('../../src/run/dry-run.js');
    const input = copy('excel-de-semicolon-windows1252.csv');
    const plan = await planRun({
      input,
      baseUrl: s.baseUrl,
      token: s.token,
      store: ':memory:',
      delimiter: ',',
      by: 'email',
      column: 'Vorname;Nachname;E-Mail;Firma;Umsatz',
    });
    expect(plan.warning).toMatch(/3 of 3 rows have no usable key .*the key column looks wrong, or the delimiter: detected ','/);
    const right = await planRun({ input, baseUrl: s.baseUrl, token: s.token, store: ':memory:' });
    expect(right.warning).toBeUndefined();
  });
});

describe('stray bytes that are not UTF-8, after the first 64 KiB', () => {
  it('are copied through unchanged, and the summary counts the cells that hold them', async () => {
    const dir = makeTempDir();
    const input = path.join(dir, 'in.csv');
    const clean = Array.from({ length: 800 }, (_, i) => `p${i}@example.com,Zoë ${i} ${'x'.repeat(80)}\n`).join('');
    const bad = Buffer.concat([Buffer.from('late@example.com,'), Buffer.from([0xff, 0x41, 0xe9]), Buffer.from('\n')]);
    fs.writeFileSync(input, Buffer.concat([Buffer.from('email,name\n' + clean, 'utf8'), bad, Buffer.from('last@example.com,ok\n')]));
    expect(fs.statSync(input).size).toBeGreaterThan(64 * 1024);
    const summary = await run({ input });
    expect(summary.invalidUtf8Cells).toBe(1);
    expect(summary.rows).toBe(802);
    expect(summary.status.error).toBe(0);
    const raw = fs.readFileSync(path.join(dir, 'in.enriched.csv'));
    expect(raw.includes(bad.subarray(0, bad.length - 1))).toBe(true);
    expect(raw.subarray(0, 3).equals(BOM)).toBe(false);
  });

  it('a clean UTF-8 file counts none', async () => {
    const input = copy('pipe-separated.csv');
    expect((await run({ input })).invalidUtf8Cells).toBe(0);
  });
});
