// The --changes file in the format its name says (write/changes-file.ts): CSV like the sidecar
// (the output's delimiter, line ending and BOM, cells formula-escaped), JSON Lines with the CSV's
// columns as members (`row` a number), and a workbook whose every cell is text.
import { PassThrough } from 'node:stream';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { ChangesFile, changesFormatOf, type ChangesLayout } from '../../src/write/changes-file.js';
import { changesFile } from '../../src/options/rules.js';

const HEADER = ['row', 'key', 'field', 'before', 'after', 'before_fetched_at', 'after_fetched_at'];
const RECORDS = [
  ['1', 'ann@acme.com', 'lead_title', 'Engineer', '=HYPERLINK("http://evil.example","Boss")', '2024-01-01T00:00:00.000Z', '2024-02-01T00:00:00.000Z'],
  ['12', 'bob@acme.com', 'lead_company_name', 'Zoë, "Ü" & Co\nGmbH', '007', '2024-01-01T00:00:00.000Z', '2024-02-01T00:00:00.000Z'],
  // A change of a key that is in no row of this run's file.
  ['', 'cy@acme.com', 'status', 'found', 'not_found', '2024-01-01T00:00:00.000Z', '2024-02-01T00:00:00.000Z'],
];

async function written(layout: ChangesLayout, batches: string[][][] = [RECORDS.slice(0, 1), RECORDS.slice(1)]): Promise<Buffer> {
  const stream = new PassThrough();
  const chunks: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  const file = new ChangesFile(stream, layout);
  await file.ready();
  for (const batch of batches) {
    file.add(batch);
    await file.drained();
  }
  await file.finish();
  stream.end();
  return Buffer.concat(chunks);
}

describe('the --changes file by its name', () => {
  it('.jsonl (and .jsonl.gz) is JSON Lines, .xlsx a workbook, anything else CSV; .xlsx.gz is refused by the option', () => {
    expect(['c.jsonl', 'C.JSONL.GZ', 'c.xlsx', 'c.csv', 'c.csv.gz', 'c.txt', '/dev/stdout', '-'].map(changesFormatOf)).toEqual([
      'jsonl',
      'jsonl',
      'xlsx',
      'csv',
      'csv',
      'csv',
      'csv',
      'csv',
    ]);
    expect(() => changesFile('c.xlsx.gz')).toThrow(/an \.xlsx is compressed already/);
    expect(changesFile(' - ')).toBe('-');
    expect(() => changesFile(' ')).toThrow(/must be a file name, or '-' for standard output/);
  });

  it("CSV: the output's delimiter, line ending and BOM; cells formula-escaped and quoted as the sidecar's", async () => {
    const bytes = await written({ format: 'csv', eol: '\r\n', delimiter: ';', bom: true });
    expect(bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(bytes.subarray(3).toString('utf8')).toBe(
      `${HEADER.join(';')}\r\n` +
        `1;ann@acme.com;lead_title;Engineer;"'=HYPERLINK(""http://evil.example"",""Boss"")";2024-01-01T00:00:00.000Z;2024-02-01T00:00:00.000Z\r\n` +
        `12;bob@acme.com;lead_company_name;"Zoë, ""Ü"" & Co\nGmbH";007;2024-01-01T00:00:00.000Z;2024-02-01T00:00:00.000Z\r\n` +
        `;cy@acme.com;status;found;not_found;2024-01-01T00:00:00.000Z;2024-02-01T00:00:00.000Z\r\n`,
    );
    // Nothing changed: the header alone.
    expect((await written({ format: 'csv', eol: '\n', delimiter: ',', bom: false }, [])).toString('utf8')).toBe(`${HEADER.join(',')}\n`);
  });

  it("JSON Lines: one object a line, the CSV's columns as members, the text as it is, `row` a number (null for no row); no BOM, no header", async () => {
    const text = (await written({ format: 'jsonl', eol: '\r\n', delimiter: ';', bom: true })).toString('utf8');
    expect(text.endsWith('\n')).toBe(true);
    const objects = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(objects).toEqual(
      RECORDS.map((cells) => ({ ...Object.fromEntries(HEADER.map((name, i) => [name, cells[i]])), row: cells[0] === '' ? null : Number(cells[0]) })),
    );
    expect(Object.keys(objects[0])).toEqual(HEADER);
    expect((await written({ format: 'jsonl', eol: '\n', delimiter: ',', bom: false }, [])).toString('utf8')).toBe('');
  });

  it('a workbook: one sheet, the header bold and frozen, then the records, every cell a text cell holding the text as it is', async () => {
    const bytes = await written({ format: 'xlsx', eol: '\n', delimiter: ',', bom: true });
    expect(bytes.subarray(0, 2).toString('latin1')).toBe('PK');
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(bytes as unknown as ArrayBuffer);
    const sheet = book.worksheets[0]!;
    expect(sheet.name).toBe('Changes');
    const rows = (sheet.getSheetValues().slice(1) as unknown[][]).map((row) => Array.from({ length: HEADER.length }, (_, i) => row[i + 1] ?? ''));
    expect(rows).toEqual([HEADER, ...RECORDS]);
    for (let r = 1; r <= RECORDS.length + 1; r += 1) {
      sheet.getRow(r).eachCell((cell) => expect(cell.type, `${cell.address}`).toBe(ExcelJS.ValueType.String));
    }
    expect(sheet.getRow(1).getCell(1).font?.bold).toBe(true);
    expect(sheet.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
  });
});
