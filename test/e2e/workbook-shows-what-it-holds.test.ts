// The enriched workbook shows what it holds: the sheet is framed by its parser, so a
// cell or a comment holding `</sheetData>` gives an output that opens, with nothing injected;
// formulas are kept, with or without a cached value (shared ones too); the added columns go after
// the last column any cell or merged range uses, and a sheet with no room for them before XFD is
// refused before the first lookup, as are rows out of order; --skip-lines finds the header of a
// workbook; a text longer than an Excel cell holds is cut there with a line that says so; bytes
// that are not UTF-8 are said to be U+FFFD in a workbook. Workbooks are made here, outputs read
// back by exceljs and LibreOffice.
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { lines, runCli } from '../helpers/cli.js';
import { hasSoffice } from '../helpers/soffice.js';
import { readByExceljs, readByLibreOffice, zipPart } from '../helpers/workbook-read.js';
import { bookOf, textCell } from '../helpers/zip.js';
import { envFor, expectNoCrash } from './reliability/support.js';
import { leftIn, unstamped, workbookRuns } from './workbook-runs.js';

const runs = workbookRuns('lead-enrich-holds-');
const { tempDir, lookups } = runs;

const STATUS = /^(found|not_found)$/;

/** Writes `sheet` (the worksheet's content) as `name` in a fresh folder; enriches it with lead_name; the output's first sheet. */
async function enrichBook(
  sheet: string,
  args: string[] = [],
  name = 'book.xlsx',
): Promise<{ dir: string; input: string; output: string; stderr: string; code: number | null }> {
  const dir = tempDir();
  const input = path.join(dir, name);
  fs.writeFileSync(input, bookOf(sheet));
  const result = await runCli(['enrich', input, '--fields', 'lead_name', ...args], { env: envFor(runs.sandbox(), dir) });
  expectNoCrash(result);
  return { dir, input, output: path.join(dir, name.replace(/\.xlsx$/, '.enriched.xlsx')), stderr: result.stderr, code: result.code };
}

async function firstSheet(file: string): Promise<ExcelJS.Worksheet> {
  return (await readByExceljs(file)).worksheets[0]!;
}

describe('the sheet is framed by its parser', () => {
  const INJECTED = '</sheetData><hyperlinks><hyperlink ref="A1" r:id="rId9"/></hyperlinks><sheetData>';

  it('a comment naming </sheetData> before the rows and a cell holding it in CDATA: an output that opens, the text as it was, nothing injected', async () => {
    const sheet =
      `<!-- rows end at </sheetData> --><sheetData><row r="1">${textCell('A1', 'email')}${textCell('B1', 'note')}</row>` +
      `<row r="2">${textCell('A2', 'ann@acme.example')}<c r="B2" t="inlineStr"><is><t><![CDATA[${INJECTED}]]></t></is></c></row></sheetData>`;
    const run = await enrichBook(sheet, ['-q']);
    expect(run.code, run.stderr).toBe(0);
    const read = await firstSheet(run.output);
    expect(read.getRow(1).values).toEqual([undefined, 'email', 'note', 'lead_status', 'lead_name']);
    expect(read.getCell('B2').value).toBe(INJECTED);
    expect(read.getCell('C2').value).toMatch(STATUS);
    const xml = zipPart(run.output, 'xl/worksheets/sheet1.xml')!.toString('utf8');
    expect(xml).not.toContain('<hyperlink ');
    expect(xml.match(/<sheetData>/g)).toHaveLength(1);
  });

  it('LibreOffice opens the same output and reads the cell as text', async (context) => {
    // Skipped only without LibreOffice (soffice): .ci/run installs libreoffice-calc, so CI runs it.
    if (!hasSoffice()) return context.skip('no LibreOffice (soffice) on PATH (Debian: libreoffice-calc)');
    const sheet = `<!-- </sheetData> --><sheetData><row r="1">${textCell('A1', 'email')}${textCell('B1', 'note')}</row><row r="2">${textCell('A2', 'ann@acme.example')}<c r="B2" t="inlineStr"><is><t><![CDATA[${INJECTED}]]></t></is></c></row></sheetData>`;
    const run = await enrichBook(sheet, ['-q']);
    expect(run.code, run.stderr).toBe(0);
    const rows = await readByLibreOffice(run.output, run.dir);
    expect(rows[1]!.slice(0, 2)).toEqual(['ann@acme.example', INJECTED]);
  });
});

describe('the cells the sheet holds', () => {
  const FORMULAS =
    `<sheetData><row r="1">${textCell('A1', 'email')}${textCell('B1', 'n')}${textCell('C1', 'twice')}${textCell('D1', 'thrice')}${textCell('E1', 'next')}</row>` +
    `<row r="2">${textCell('A2', 'ann@acme.example')}<c r="B2"><v>5</v></c><c r="C2"><f>B2*2</f></c><c r="D2"><f>B2*3</f><v>15</v></c><c r="E2"><f t="shared" ref="E2:E3" si="0">B2+1</f><v>6</v></c></row>` +
    `<row r="3">${textCell('A3', 'bob@acme.example')}<c r="B3"><v>6</v></c><c r="C3"><f>B3*2</f></c><c r="E3"><f t="shared" si="0"/><v>7</v></c></row></sheetData>`;

  it('formulas are kept, with their cached value or without one, shared ones too', async () => {
    const run = await enrichBook(FORMULAS, ['-q']);
    expect(run.code, run.stderr).toBe(0);
    const read = await firstSheet(run.output);
    expect(read.getCell('C2').value).toEqual({ formula: 'B2*2' });
    expect(read.getCell('D2').value).toEqual({ formula: 'B2*3', result: 15 });
    expect(read.getCell('E2').value).toMatchObject({ formula: 'B2+1', result: 6, shareType: 'shared', ref: 'E2:E3' });
    expect(read.getCell('E3').value).toMatchObject({ sharedFormula: 'E2', result: 7 });
    expect(read.getCell('C3').value).toEqual({ formula: 'B3*2' });
    expect([read.getCell('F1').value, read.getCell('F2').value, read.getCell('F3').value]).toEqual([
      'lead_status',
      expect.stringMatching(STATUS),
      expect.stringMatching(STATUS),
    ]);
  });

  it('LibreOffice computes the formulas that had no cached value', async (context) => {
    // Skipped only without LibreOffice (soffice): .ci/run installs libreoffice-calc, so CI runs it.
    if (!hasSoffice()) return context.skip('no LibreOffice (soffice) on PATH (Debian: libreoffice-calc)');
    const run = await enrichBook(FORMULAS, ['-q']);
    const rows = await readByLibreOffice(run.output, run.dir);
    expect(rows.slice(1, 3).map((row) => row.slice(1, 5))).toEqual([
      ['5', '10', '15', '6'],
      ['6', '12', '', '7'],
    ]);
  });

  it('a merged range past the header and a cell past it on a later row: the added columns come after both', async () => {
    const sheet =
      `<sheetData><row r="1">${textCell('A1', 'email')}${textCell('B1', 'Campaign (spring)')}</row>` +
      `<row r="2">${textCell('A2', 'ann@acme.example')}${textCell('B2', 'a')}</row>` +
      `<row r="3">${textCell('A3', 'bob@acme.example')}${textCell('H3', 'note in H')}</row></sheetData>` +
      '<mergeCells count="1"><mergeCell ref="B1:F1"/></mergeCells>';
    const run = await enrichBook(sheet, ['-q']);
    // Bob's row has a cell beyond the header's columns: an invalid_input row, as in a CSV (exit 5).
    expect(run.code, run.stderr).toBe(5);
    const read = await firstSheet(run.output);
    expect([read.getCell('I1').value, read.getCell('J1').value]).toEqual(['lead_status', 'lead_name']);
    expect(read.getCell('H3').value).toBe('note in H');
    expect([read.getCell('I2').value, read.getCell('I3').value]).toEqual([expect.stringMatching(STATUS), 'error']);
    expect((read.model as unknown as { merges: string[] }).merges).toEqual(['B1:F1']);
  });

  it('a cell at XFB leaves room for lead_status and one column (XFC, XFD); one at XFC or XFD is refused in one line before the first lookup', async () => {
    const rows = (last: string) =>
      `<sheetData><row r="1">${textCell('A1', 'email')}${textCell(`${last}1`, 'far')}</row><row r="2">${textCell('A2', 'ann@acme.example')}</row></sheetData>`;
    const fits = await enrichBook(rows('XFB'), ['-q']);
    expect(fits.code, fits.stderr).toBe(0);
    const read = await firstSheet(fits.output);
    expect([read.getCell('XFC1').value, read.getCell('XFD1').value]).toEqual(['lead_status', 'lead_name']);
    for (const last of ['XFC', 'XFD']) {
      const before = lookups();
      const run = await enrichBook(rows(last));
      expect(run.code).toBe(1);
      expect(lines(run.stderr)).toEqual([
        `lead-enrich: Cannot write the workbook of ${run.input}: its sheet uses column ${last === 'XFC' ? 16_383 : 16_384} (${last}1), and the 2 columns the run adds after it would lie past column XFD (16384), the last a worksheet has; write CSV instead (-o FILE.csv), or choose fewer columns with --fields (code: unwritable_output)`,
      ]);
      expect(lookups()).toBe(before);
      expect(leftIn(run.dir)).toEqual(['book.xlsx', 'store.sqlite']);
    }
  });

  it('rows out of order: refused in one line before the first lookup, never renumbered past row 1,048,576', async () => {
    const sheet = `<sheetData><row r="1">${textCell('A1', 'email')}</row><row r="1048576">${textCell('A1048576', 'ann@acme.example')}</row><row r="3">${textCell('A3', 'bob@acme.example')}</row></sheetData>`;
    const before = lookups();
    const run = await enrichBook(sheet);
    expect(run.code).toBe(1);
    expect(lines(run.stderr)).toEqual([
      `lead-enrich: Cannot write the workbook of ${run.input}: its sheet has its rows out of order (row 3 comes after row 1048576), and the output keeps each row at its number; open it in Excel or LibreOffice and save it again, or write CSV instead (-o FILE.csv) (code: unwritable_output)`,
    ]);
    expect(lookups()).toBe(before);
    expect(leftIn(run.dir)).toEqual(['book.xlsx', 'store.sqlite']);
  });

  it('--skip-lines 2: the header is the row after the two title rows, which the output keeps as they were', async () => {
    const sheet =
      `<sheetData><row r="1">${textCell('A1', 'Leads export')}</row><row r="2">${textCell('A2', 'made by the CRM')}${textCell('B2', '2026-11-20')}</row>` +
      `<row r="3">${textCell('A3', 'email')}${textCell('B3', 'name')}</row><row r="4">${textCell('A4', 'ann@acme.example')}${textCell('B4', 'Ann')}</row></sheetData>`;
    const run = await enrichBook(sheet, ['-q', '--skip-lines', '2']);
    expect(run.code, run.stderr).toBe(0);
    const read = await firstSheet(run.output);
    expect([1, 2, 3].map((row) => (read.getRow(row).values as unknown[]).slice(1))).toEqual([
      ['Leads export'],
      ['made by the CRM', '2026-11-20'],
      ['email', 'name', 'lead_status', 'lead_name'],
    ]);
    expect(read.getCell('C4').value).toMatch(STATUS);
    expect(read.views[0]).toMatchObject({ state: 'frozen', ySplit: 3 });
    // Without it, the first row is the header, which has no key column.
    const plain = await runCli(['enrich', run.input, '-q', '-o', path.join(run.dir, 'plain.csv')], { env: envFor(runs.sandbox(), run.dir) });
    expect(plain.code).toBe(1);
  });
});

describe('what a workbook cannot hold is said', () => {
  it('a text longer than 32,767 characters is cut there in the workbook, with one line that says so; the CSV keeps it whole', async () => {
    const dir = tempDir();
    const input = path.join(dir, 'long.csv');
    fs.writeFileSync(input, `email,note\nann@acme.example,${'x'.repeat(40_000)}\nbob@acme.example,short\n`);
    const result = await runCli(['enrich', input, '-q', '--fields', 'lead_name', '-o', path.join(dir, 'long.xlsx')], { env: envFor(runs.sandbox(), dir) });
    expectNoCrash(result);
    expect(result.code, result.stderr).toBe(0);
    expect(lines(result.stderr).map(unstamped)).toEqual([
      'lead-enrich: 1 cell of the workbook held more than 32,767 characters, the most an Excel cell holds, and was cut there (the first: B2); a CSV output (-o FILE.csv) keeps them whole',
    ]);
    const read = await firstSheet(path.join(dir, 'long.xlsx'));
    expect(read.getCell('B2').value).toBe('x'.repeat(32_767));
    expect(read.getCell('B3').value).toBe('short');
  });

  it('--encoding utf-8 with bytes that are not UTF-8, into a workbook: the summary says they are U+FFFD there, never "copied unchanged"', async () => {
    const dir = tempDir();
    const input = path.join(dir, 'latin.csv');
    fs.writeFileSync(input, Buffer.concat([Buffer.from('email,city\nann@acme.example,Montr'), Buffer.from([0xe9]), Buffer.from('al\n')]));
    const result = await runCli(['enrich', input, '--encoding', 'utf-8', '--fields', 'lead_name', '-o', path.join(dir, 'out.xlsx')], {
      env: envFor(runs.sandbox(), dir),
    });
    expectNoCrash(result);
    expect(result.code, result.stderr).toBe(0);
    const said = lines(result.stderr).map(unstamped);
    expect(said).toContain(
      'Input cells with bytes that are not UTF-8: 1 (each such byte is U+FFFD in the workbook, which holds text only; copied unchanged into the error sidecar, and into a CSV output: -o FILE.csv)',
    );
    expect(said.join('\n')).not.toContain('copied unchanged)');
    expect((await firstSheet(path.join(dir, 'out.xlsx'))).getCell('B2').value).toBe('Montr\ufffdal');
  });
});
