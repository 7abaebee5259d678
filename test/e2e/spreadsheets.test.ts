// Spreadsheets (cli-contract "Spreadsheets"): an .xlsx input read directly, its cells as
// text as the contract says; an .xlsx output that keeps the input's types and writes every added
// cell as text. The input workbook was written by LibreOffice (fixtures/README.md), the outputs are
// read back with exceljs's in-memory reader (another program than our writer and our reader) and,
// where LibreOffice is installed, converted to CSV by LibreOffice.
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fromBytes, openSource } from '../../src/read/index.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { columnsFor } from '../../src/write/columns.js';
import { RowWriter } from '../../src/write/row-writer.js';
import { CLI_PATH, lines, REPO_ROOT, runCli } from '../helpers/cli.js';
import { makeTempDir, readCsvObjects } from '../helpers/files.js';
import { hangBound, run } from '../helpers/processes.js';
import { hasSoffice, soffice } from '../helpers/soffice.js';
import { expectedEmail } from './reliability/support.js';

const WORKBOOK = path.join(REPO_ROOT, 'fixtures', 'input', 'workbook-types.xlsx');

function copyWorkbook(name = 'contacts.xlsx'): { dir: string; file: string } {
  const dir = makeTempDir('lead-enrich-xlsx-');
  const file = path.join(dir, name);
  fs.copyFileSync(WORKBOOK, file);
  return { dir, file };
}

/** The output's sheet `name`, or its first. */
async function readWorkbook(file: string, name?: string): Promise<ExcelJS.Worksheet> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  return name === undefined ? workbook.worksheets[0]! : workbook.getWorksheet(name)!;
}

// The fixture's sheet Contacts has two empty rows above its header (row 3) and one between Ann
// (row 4) and Bob (row 6): the output keeps every row at its own row number, so that hyperlinks,
// merged cells and other sheets' formulas still point at the same cells.
const [HEADER_ROW, ANN, BOB, CARL] = [3, 4, 6, 7];

/** CSV records as text (the sidecar, a CSV output), BOM removed. */
function csvRecords(file: string): string[][] {
  return fs
    .readFileSync(file, 'utf8')
    .replace(/^\ufeff/, '')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split(','));
}

const HEADER = ['email', 'name', 'employees', 'account_id', 'score', 'signed_up', 'last_call', 'active', 'double_score', 'website', 'notes', 'shout'];

describe('an .xlsx input: cells as text', () => {
  it('numbers, dates, booleans, formulas, a hyperlink, rich text and empty cells read as the contract says; the header is the first non-empty row', async () => {
    const source = await openSource(WORKBOOK);
    const rows: string[][] = [];
    for await (const batch of source.batches) rows.push(...batch.map((row) => row.map(fromBytes)));
    expect(source.sheet).toBe('Contacts');
    expect(source.header.map(fromBytes)).toEqual(HEADER);
    expect(rows).toEqual([
      [
        'ann@example.com',
        'Ann Ortiz',
        '250',
        '123456789012345',
        '0.1',
        '2026-11-24',
        '2026-11-24T09:30:00',
        'TRUE',
        '0.2',
        'acme.example',
        'Call back soon',
        'ANN ORTIZ',
      ],
      // The fully empty row between the two is not a row; #DIV/0! is the formula's cached error.
      [
        'bob@example.com',
        'Bob Öztürk',
        '1000000',
        '-2.5',
        '0.0000001',
        '1999-12-31',
        '2027-01-02T23:59:59',
        'FALSE',
        '#DIV/0!',
        '',
        '=SUM(1,2) is not a formula here',
      ],
      ['carl@example.com', '', '1234567.891'],
    ]);
  });
});

describe('an .xlsx input whose parts lie in another order (xlsx-populate)', () => {
  // A hyperlink's sheet1.xml.rels between the worksheets, and the shared strings last in the zip:
  // read front to back (exceljs's streaming reader) the zip ended after the worksheets, and every
  // text cell, the header's included, read as empty. The zip's directory finds every part.
  const POPULATED = path.join(REPO_ROOT, 'fixtures', 'input', 'workbook-xlsx-populate.xlsx');

  it('reads every cell, text ones included, of the first sheet and of --sheet 2', async () => {
    const rowsOf = async (sheet?: string) => {
      const source = await openSource(POPULATED, sheet === undefined ? {} : { sheet });
      const rows = [source.header.map(fromBytes)];
      for await (const batch of source.batches) rows.push(...batch.map((row) => row.map(fromBytes)));
      return rows;
    };
    expect(await rowsOf()).toEqual([
      ['Email', 'Name', 'Count', 'Site', 'Note'],
      ['ann@acme.example', 'Ann Ortiz', '42', 'Acme site', 'Very important lead'],
      ['gus@acme.example', 'Gus & Co', '-3'],
    ]);
    expect(await rowsOf('2')).toEqual([['mail'], ['dora@acme.example']]);
  });

  it('is enriched end to end: exit 0, the emails looked up', async () => {
    const dir = makeTempDir('lead-enrich-xlsx-');
    const file = path.join(dir, 'leads.xlsx');
    fs.copyFileSync(POPULATED, file);
    const r = await runCli(['enrich', file, '--sandbox', '--store', path.join(dir, 's.sqlite'), '-o', path.join(dir, 'out.csv'), '-q'], {});
    expect(r.code, r.stderr).toBe(0);
    const rows = readCsvObjects(path.join(dir, 'out.csv'));
    expect(rows.map((row) => [row.Email, row.Name, row.lead_status])).toEqual([
      ['ann@acme.example', 'Ann Ortiz', expect.stringMatching(/^(found|not_found)$/)],
      ['gus@acme.example', 'Gus & Co', expect.stringMatching(/^(found|not_found)$/)],
    ]);
  });
});

describe('enrich contacts.xlsx (CLI, sandbox)', () => {
  it('writes contacts.enriched.xlsx: input cells keep their types, lead_status and added cells are text, header bold and frozen; the sidecar stays CSV', async () => {
    const { dir, file } = copyWorkbook();
    const result = await runCli(['enrich', file, '--sandbox']);
    expect(result.code, result.stderr).toBe(0);
    expect(fs.readdirSync(dir).sort()).toEqual(['contacts.enriched.errors.csv', 'contacts.enriched.xlsx', 'contacts.xlsx']);
    expect(csvRecords(path.join(dir, 'contacts.enriched.errors.csv'))).toEqual([['row', ...HEADER, 'error_code', 'error_message']]);
    const sheet = await readWorkbook(path.join(dir, 'contacts.enriched.xlsx'));
    expect(sheet.name).toBe('Contacts');
    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: HEADER_ROW });
    const header = sheet.getRow(HEADER_ROW);
    expect((header.values as unknown[]).slice(1, 15)).toEqual([...HEADER, 'lead_status', 'lead_name']);
    expect(header.getCell(1).font?.bold).toBe(true);
    expect(sheet.rowCount).toBe(CARL);
    expect([1, 2, 5].map((row) => sheet.getRow(row).cellCount)).toEqual([0, 0, 0]);
    const ann = sheet.getRow(ANN);
    expect(ann.getCell(3).value).toBe(250);
    expect(ann.getCell(4).value).toBe(123456789012345);
    expect(ann.getCell(5).value).toBe(0.1);
    expect(ann.getCell(6).value).toEqual(new Date(Date.UTC(2026, 10, 24)));
    expect(ann.getCell(7).value).toEqual(new Date(Date.UTC(2026, 10, 24, 9, 30)));
    expect(ann.getCell(8).value).toBe(true);
    // A formula kept, with its cached value: every cell keeps its row and column, so its references hold.
    expect(ann.getCell(9).type).toBe(ExcelJS.ValueType.Formula);
    expect(ann.getCell(9).value).toEqual({ formula: 'E4*2', result: 0.2 });
    // The input's hyperlink, kept as a hyperlink.
    expect(ann.getCell(10).value).toMatchObject({ text: 'acme.example', hyperlink: expect.stringContaining('acme.example') });
    const bob = sheet.getRow(BOB);
    expect(bob.getCell(9).value).toEqual({ formula: '1/0', result: { error: '#DIV/0!' } });
    expect(bob.getCell(10).type).toBe(ExcelJS.ValueType.Null);
    expect(bob.getCell(11).type).toBe(ExcelJS.ValueType.String);
    expect(bob.getCell(11).value).toBe('=SUM(1,2) is not a formula here');
    for (const row of [ANN, BOB, CARL]) {
      const cells = sheet.getRow(row);
      expect(['found', 'not_found']).toContain(cells.getCell(13).value);
      for (let column = 13; column <= sheet.columnCount; column += 1) {
        const cell = cells.getCell(column);
        expect([ExcelJS.ValueType.String, ExcelJS.ValueType.Null], `row ${row} column ${column}`).toContain(cell.type);
      }
    }
    // lead_experience_months, a number in the API's answer, is a text cell like every added cell.
    const months = (header.values as unknown[]).indexOf('lead_experience_months');
    expect(typeof ann.getCell(months).value).toBe('string');
  });

  it('-o x.csv writes CSV; --format jsonl too; --sheet Other and --sheet 2 read the second sheet; row numbers do not count the empty row', async () => {
    const { dir, file } = copyWorkbook();
    const csv = await runCli(['enrich', file, '--sandbox', '-o', path.join(dir, 'x.csv')]);
    expect(csv.code, csv.stderr).toBe(0);
    const records = readCsvObjects(path.join(dir, 'x.csv'));
    expect(records.map((r) => [r.email, r.signed_up, r.last_call, r.active, r.double_score])).toEqual([
      ['ann@example.com', '2026-11-24', '2026-11-24T09:30:00', 'TRUE', '0.2'],
      ['bob@example.com', '1999-12-31', '2027-01-02T23:59:59', 'FALSE', '#DIV/0!'],
      ['carl@example.com', '', '', '', ''],
    ]);
    const jsonl = await runCli(['enrich', file, '--sandbox', '--format', 'jsonl', '-o', path.join(dir, 'x.jsonl')]);
    expect(jsonl.code, jsonl.stderr).toBe(0);
    const objects = fs
      .readFileSync(path.join(dir, 'x.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { row: number; input: Record<string, string> });
    expect(objects.map((o) => [o.row, o.input.email, o.input.account_id])).toEqual([
      [1, 'ann@example.com', '123456789012345'],
      [2, 'bob@example.com', '-2.5'],
      [3, 'carl@example.com', ''],
    ]);
    for (const sheet of ['Other', '2']) {
      const output = path.join(dir, `other-${sheet}.xlsx`);
      const result = await runCli(['enrich', file, '--sandbox', '--sheet', sheet, '-o', output]);
      expect(result.code, result.stderr).toBe(0);
      // The whole workbook: Contacts copied as it is, Other enriched.
      const read = await readWorkbook(output, 'Other');
      expect(read.name).toBe('Other');
      expect((await readWorkbook(output)).name).toBe('Contacts');
      expect([2, 3].map((row) => [read.getRow(row).getCell(1).value, read.getRow(row).getCell(2).value])).toEqual([
        ['dora@example.com', 'Acme Ärzte GmbH'],
        ['erik@example.com', 'Nørd AS'],
      ]);
    }
  });

  it('--sheet Nope: exit 1, one line naming the sheets, nothing written', async () => {
    const { dir, file } = copyWorkbook();
    const result = await runCli(['enrich', file, '--sandbox', '--sheet', 'Nope']);
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      `lead-enrich: Invalid option --sheet: ${file} has no sheet 'Nope'; its sheets are 1 'Contacts', 2 'Other': give --sheet NAME or --sheet N (code: config)`,
    ]);
    expect(fs.readdirSync(dir)).toEqual(['contacts.xlsx']);
    const csv = path.join(dir, 'plain.csv');
    fs.writeFileSync(csv, 'email\nann@example.com\n');
    const onCsv = await runCli(['enrich', csv, '--sandbox', '--sheet', 'Other']);
    expect(onCsv.code).toBe(1);
    expect(lines(onCsv.stderr)).toEqual([
      `lead-enrich: Invalid option --sheet: ${csv} is not an .xlsx workbook (--sheet picks a worksheet of one), got 'Other' (code: config)`,
    ]);
  });

  it('--dry-run, --no-header and --shard work on a workbook as on a CSV', async () => {
    const { dir, file } = copyWorkbook();
    const plan = await runCli(['enrich', file, '--sandbox', '--dry-run', '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ rows: 3, lookup: { kind: 'email', column: 'email' } });
    const headerless = await runCli(['enrich', file, '--sandbox', '--no-header', '--column', '1', '--by', 'email', '-o', path.join(dir, 'nh.csv'), '--json']);
    expect(JSON.parse(headerless.stdout)).toMatchObject({ rows: 4 });
    expect(headerless.code).toBe(5);
    expect(readCsvObjects(path.join(dir, 'nh.errors.csv')).map((r) => [r.row, r.column_1, r.error_code])).toEqual([['1', 'email', 'invalid_input']]);
    const shards = await Promise.all(['1/2', '2/2'].map((shard) => runCli(['enrich', file, '--sandbox', '--shard', shard, '--json'])));
    expect(shards.map((r) => r.code)).toEqual([0, 0]);
    expect(shards.map((r) => (JSON.parse(r.stdout) as { rows: number }).rows).reduce((a, b) => a + b)).toBe(3);
  });

  it('a workbook on standard input is refused in one line: stdin is CSV', async () => {
    const result = await runCli(['enrich', '-', '--sandbox', '-o', '-'], { input: fs.readFileSync(WORKBOOK) });
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      'lead-enrich: standard input is an Excel workbook, which is read from its path only (not from standard input, a stream or gzip): give the .xlsx file itself, or save it as CSV (code: unreadable_input)',
    ]);
  });

  it('a workbook cut short: exit 1, one line that says so, nothing written', async () => {
    const dir = makeTempDir('lead-enrich-xlsx-');
    const file = path.join(dir, 'cut.xlsx');
    fs.writeFileSync(file, fs.readFileSync(WORKBOOK).subarray(0, 4000));
    const result = await runCli(['enrich', file, '--sandbox']);
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      `lead-enrich: Cannot read the workbook ${file}: the file ends before the workbook does (cut short?); open it in Excel or LibreOffice and save it again as .xlsx (or as CSV) (code: unreadable_input)`,
    ]);
    expect(fs.readdirSync(dir)).toEqual(['cut.xlsx']);
  });

  it(
    'LibreOffice reads the output back: the values as text, and a cell starting with = is text, not a formula',
    async (context) => {
      // Skipped only without LibreOffice (soffice): .ci/run installs libreoffice-calc, so CI runs it;
      // a developer machine without it skips this one read-back (exceljs's in-memory reader still checks the output).
      if (!hasSoffice()) return context.skip('no LibreOffice (soffice) on PATH (Debian: libreoffice-calc)');
      const { dir, file } = copyWorkbook();
      expect((await runCli(['enrich', file, '--sandbox'])).code).toBe(0);
      await soffice(
        ['--headless', '--convert-to', 'csv:Text - txt - csv (StarCalc):44,34,76', '--outdir', dir, path.join(dir, 'contacts.enriched.xlsx')],
        120_000,
      );
      // The two empty rows above the header are kept (LibreOffice writes them as lines of commas), the empty one between Ann and Bob too.
      const converted = path.join(dir, 'contacts.enriched.csv');
      fs.writeFileSync(
        converted,
        fs
          .readFileSync(converted, 'utf8')
          .split('\n')
          .filter((line) => !/^,*$/.test(line))
          .join('\n'),
      );
      const records = readCsvObjects(converted);
      expect(records.map((r) => [r.employees, r.account_id, r.signed_up, r.active, r.notes])).toEqual([
        ['250', '123456789012345', '2026-11-24', 'TRUE', 'Call back soon'],
        ['1000000', '-2.5', '1999-12-31', 'FALSE', '=SUM(1,2) is not a formula here'],
        ['1234567.891', '', '', '', ''],
      ]);
      expect(records.every((r) => ['found', 'not_found'].includes(r.lead_status!))).toBe(true);
    },
    hangBound(150_000),
  ); // LibreOffice's start: 25-35 s at a load average of 17 on 2 cores, as in the other conversions (test/helpers/workbook-read.ts)
});

describe('-o x.xlsx for a CSV input', () => {
  let sandbox: Sandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0, rpm: 60_000 });
  });
  afterAll(() => sandbox.close());

  it('is a real workbook (not CSV text named .xlsx): every input cell text, as the CSV held it', async () => {
    const dir = makeTempDir('lead-enrich-xlsx-');
    const input = path.join(dir, 'plain.csv');
    fs.writeFileSync(input, 'email,zip,note\nann@example.com,01234,=1+1\nbob@example.com,,"a, b"\n');
    const output = path.join(dir, 'plain.xlsx');
    const result = await runCli(['enrich', input, '-o', output], { env: { LEAD_API_BASE_URL: sandbox.baseUrl, LEAD_API_TOKEN: sandbox.token } });
    expect(result.code, result.stderr).toBe(0);
    expect(fs.readFileSync(output).subarray(0, 4)).toEqual(Buffer.from([0x50, 0x4b, 0x03, 0x04]));
    const sheet = await readWorkbook(output);
    expect(sheet.name).toBe('Sheet1');
    expect([sheet.getRow(2).getCell(2).value, sheet.getRow(2).getCell(3).value, sheet.getRow(3).getCell(3).value]).toEqual(['01234', '=1+1', 'a, b']);
    expect(sheet.getRow(2).getCell(3).type).toBe(ExcelJS.ValueType.String);
    expect(sheet.getRow(3).getCell(2).type).toBe(ExcelJS.ValueType.Null);
    expect(fs.existsSync(path.join(dir, 'plain.errors.csv'))).toBe(true);
  });
});

describe('the workbook writer', () => {
  const columns = columnsFor('email', { mx: false, whois: false });
  const finished = (row: number, name: string) => ({
    row,
    cells: [`p${row}@example.com`],
    status: 'found' as const,
    billing: 'charged' as const,
    data: { lead: { name } },
  });

  it('writes an added value that starts with = as a text cell, never a formula', async () => {
    const dir = makeTempDir('lead-enrich-xlsx-');
    const output = path.join(dir, 'out.xlsx');
    const writer = new RowWriter({
      output,
      errors: undefined,
      format: 'xlsx',
      header: ['email'],
      columns,
      recordDelimiter: '\n',
      delimiter: ',',
      bom: false,
      headerLine: true,
    });
    await writer.writeRows([finished(1, '=HYPERLINK("http://evil.example","x")'), finished(2, '+1-555-0100'), finished(3, '@SUM(A1)')]);
    await writer.commit();
    const sheet = await readWorkbook(output);
    const names = [2, 3, 4].map((row) => sheet.getRow(row).getCell(3));
    expect(names.map((cell) => cell.type)).toEqual([ExcelJS.ValueType.String, ExcelJS.ValueType.String, ExcelJS.ValueType.String]);
    expect(names.map((cell) => cell.value)).toEqual(['=HYPERLINK("http://evil.example","x")', '+1-555-0100', '@SUM(A1)']);
  });

  it('writes text that XML cannot hold as Excel does: a carriage return, a control character and a literal _x0041_ read back as they were', async () => {
    const dir = makeTempDir('lead-enrich-xlsx-');
    const output = path.join(dir, 'out.xlsx');
    const writer = new RowWriter({
      output,
      errors: undefined,
      format: 'xlsx',
      header: ['email'],
      columns,
      recordDelimiter: '\n',
      delimiter: ',',
      bom: false,
      headerLine: true,
    });
    const names = ['line\r\nbreak', 'bell\u0007here', 'literal _x0041_ text', ' padded ', 'a < b & c'];
    await writer.writeRows(names.map((name, i) => finished(i + 1, name)));
    await writer.commit();
    const source = await openSource(output);
    const rows: string[][] = [];
    for await (const batch of source.batches) rows.push(...batch.map((row) => row.map(fromBytes)));
    expect(rows.map((row) => row[2])).toEqual(names);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a workbook on standard output into a pipe closed early (| head -c 4): exit 1 and one line, never a crash', async () => {
    const dir = makeTempDir('lead-enrich-xlsx-');
    const file = path.join(dir, 'book.xlsx');
    fs.copyFileSync(path.join(REPO_ROOT, 'fixtures', 'input', 'workbook-three-sheets.xlsx'), file);
    // A real pipe to a program that stops reading after four bytes, as a shell user has it.
    const args = [
      CLI_PATH,
      'enrich',
      file,
      '--sheet',
      'Contacts',
      '--sandbox',
      '--store',
      path.join(dir, 's.sqlite'),
      '--format',
      'xlsx',
      '-o',
      '-',
      '--errors',
      path.join(dir, 'e.csv'),
      '-q',
    ];
    const result = await run('sh', ['-c', '"$0" "$@" | head -c 4 > /dev/null; exit "${PIPESTATUS:-0}"', process.execPath, ...args], { timeoutMs: 60_000 });
    expect(lines(result.stderr)).toEqual([
      'lead-enrich: Cannot write the output: its reader has gone (the pipe is closed); the run stopped, and the answers it received are kept in the store for the next run (code: unwritable_output)',
    ]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('leaves nothing that looks finished until the workbook is complete, and nothing at all when the run fails', async () => {
    const dir = makeTempDir('lead-enrich-xlsx-');
    const output = path.join(dir, 'out.xlsx');
    const writer = new RowWriter({
      output,
      errors: undefined,
      format: 'xlsx',
      header: ['email'],
      columns,
      recordDelimiter: '\n',
      delimiter: ',',
      bom: false,
      headerLine: true,
    });
    await writer.writeRows(Array.from({ length: 2000 }, (_, i) => finished(i + 1, `Person ${i}`)));
    expect(fs.existsSync(output)).toBe(false);
    await writer.abort();
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});

describe('--fill into a workbook', () => {
  it("fills the sheet's own blank cells with text cells, keeps the cells that hold values with their types", async () => {
    const { dir, file } = copyWorkbook();
    const result = await runCli(['enrich', file, '--sandbox', '--fill', 'website=lead_company_domain,name=lead_name']);
    expect(result.code, result.stderr).toBe(0);
    const sheet = await readWorkbook(path.join(dir, 'contacts.enriched.xlsx'));
    // The input's shape: its columns, then lead_status only.
    expect((sheet.getRow(HEADER_ROW).values as unknown[]).slice(1)).toEqual([...HEADER, 'lead_status']);
    const [ann, bob, carl] = [ANN, BOB, CARL].map((n) => sheet.getRow(n));
    const lead = (email: string) => (expectedEmail(email).data as { lead: { name: string; company_domain: string } }).lead;
    // Ann's website held a value: kept. Bob's was blank, Carl's name too: filled, as text.
    expect(ann!.getCell(10).value).toMatchObject({ text: 'acme.example' });
    expect(bob!.getCell(10).value).toBe(lead('bob@example.com').company_domain);
    expect(bob!.getCell(10).type).toBe(ExcelJS.ValueType.String);
    expect(carl!.getCell(2).value).toBe(lead('carl@example.com').name);
    // The other cells keep their types.
    expect(ann!.getCell(3).value).toBe(250);
  });
});
