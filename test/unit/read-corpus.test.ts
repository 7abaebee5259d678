// Messy CSV files from public collections published on npm (fixtures/README.md lists each one's
// package, version, path and licence), read by openCsv into the records their collection means.
// csv-spectrum has expected JSON; the csvtojson and Papa Parse files are checked against records
// written out here from reading each file.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { fromBytes, openCsv, type ReadOptions } from '../../src/read/index.js';

const CORPUS = path.join(import.meta.dirname, '..', '..', 'fixtures', 'input', 'corpus');

async function readAll(file: string, options?: ReadOptions) {
  const source = await openCsv(file, options);
  const rows: string[][] = [];
  for await (const batch of source.batches) rows.push(...batch.map((row) => row.map(fromBytes)));
  return { source, header: source.header.map(fromBytes), rows };
}

interface Expected {
  header: string[];
  rows: string[][];
  delimiter?: string;
  recordDelimiter?: string;
  outputBom?: boolean;
  options?: ReadOptions;
}

const EMPLOYEE_HEADER = [
  'date',
  '*json*employee.name',
  '*json*employee.age',
  '*json*employee.number',
  '*array*address',
  '*array*address',
  '*jsonarray*employee.key',
  '*jsonarray*employee.key',
  '*omit*id',
];
const EMPLOYEE_ROWS = [
  ['2012-02-12', 'Eric', '31', '51234', 'Dunno Street', 'Kilkeny Road', 'key1', 'key2', '2'],
  ['2012-03-06', 'Ted', '28', '51289', 'O FUTEBOL.¿', 'Tormore', 'key3', 'key4', '4'],
];
const TABSV_ROW = (n: number, debit: string) => [
  'AA',
  'BBBBBB',
  '0',
  '20140701',
  'CCCCCCCC',
  'ddddddddddddddd',
  '',
  '',
  `ZZZZZZZ${n}`,
  '20140701',
  'EEEEE EEE EEEEEE',
  debit,
  '0,00',
  '',
  '',
  '20150630',
  '0,00',
  '',
];

const CSVTOJSON: Record<string, Expected> = {
  dataDiffDelimiter: {
    header: ['annee', 'jour', 'date', 'b_1', 'b_2', 'devise', ''],
    rows: [
      ['2015029', 'LUNDI   ', '09/03/2015', '35', '31', 'eur', ''],
      ['2015028', 'SAMEDI  ', '07/03/2015', '48', '9', 'eur', ''],
    ],
    delimiter: ';',
  },
  dataIgnoreEmpty: {
    header: ['col1', ' col2.0', ' col2.1', 'col4.col3', 'col4.col5'],
    rows: [
      ['d1', '', 'd3', '', 'world'],
      ['d2', 'd', 'd', 'd', 'd'],
      ['', '', '', '', ''],
      ['d4', 'd2', 'd3'],
    ],
    delimiter: ',',
  },
  dataNoTrimBOM: {
    header: ['name', 'age'],
    rows: [
      ['joe', '20'],
      ['sam', '30'],
    ],
    outputBom: true,
  },
  dataNoTrimCRLF: {
    header: ['name', 'age'],
    rows: [
      ['joe', '20'],
      ['sam', '30'],
    ],
    recordDelimiter: '\r\n',
  },
  dataWithPipeAsDelimiter: { header: EMPLOYEE_HEADER, rows: EMPLOYEE_ROWS, delimiter: '|' },
  dataWithTabAsDelimiter: { header: EMPLOYEE_HEADER, rows: EMPLOYEE_ROWS, delimiter: '\t' },
  dataWithMultipleLineRow: { header: ['aa', 'bb'], rows: [['ss', '12345\n6789,abcde"\nddee']] },
  dataWithTripleQoutes: {
    header: ['Year', 'Make', 'Model', 'Description', 'Price'],
    rows: [
      ['1997', 'Ford', 'E350', 'ac, abs, moon', '3000.00'],
      ['1999', 'Chevy', 'Venture "Extended Edition"', '', '4900.00'],
      ['1999', 'Chevy', 'Venture "Extended Edition, Very Large"', '', '5000.00'],
      ['1996', 'Jeep', 'Grand Cherokee', 'MUST SELL!air, moon roof, loaded', '4799.00'],
    ],
  },
  // Its first data line is malformed (""10028"" opens and closes a quote at once): relaxed, its
  // cells keep their quotes, and no line is merged into another or lost.
  dataWithQoutes: {
    header: ['TIMESTAMP', 'UPDATE', 'UID', 'BYTES SENT', 'BYTES RCVED'],
    rows: [
      ['13954264"22', 'n', '""10028""', '""1213""', '""5461""'],
      ['abc, def, ccc', ' n', '10013', '9954', '13560'],
      ['1395426422', 'n', '10013', '9954', '13560'],
      ['1395426422', 'n', '10109', '221391500', '141836'],
      ['1395426422', 'n', '10007', '53448', '308549'],
      ['1395426422', 'n', '10022', '15506', '72125'],
    ],
  },
  testEol: {
    header: ['column_1', 'column_2', 'column_3'],
    rows: [
      ['John', '25', 'xxx'],
      ['Samantha', '28', 'yyy'],
    ],
    recordDelimiter: '\r',
    options: { header: false },
  },
  tabsv: {
    header: [
      'JournalCode',
      'JournalLib',
      'EcritureNum',
      'EcritureDate',
      'CompteNum',
      'CompteLib',
      'CompAuxNum',
      'CompAuxLib',
      'PieceRef',
      'PieceDate',
      'EcritureLib',
      'Debit',
      'Credit',
      'EcritureLet',
      'DateLet',
      'ValidDate',
      'Montantdevise',
      'Idevise',
    ],
    rows: [TABSV_ROW(1, '34,81'), TABSV_ROW(2, '12,02'), TABSV_ROW(3, '37,98'), TABSV_ROW(4, '27,48')],
    delimiter: '\t',
  },
  twodoublequotes: {
    header: ['title', 'actors', 'data', 'uuid', 'fieldA', 'fieldB'],
    rows: [['"', '["Neil", "Bill"", "Carl","Richard","Linus"]', 'xyabcde', 'fejal"eifa', 'bnej""falkfe', '"eisjfes"']],
  },
  trailingComma: {
    header: ['field1', 'field2'],
    rows: [
      ['value1', 'value2', ' '],
      ['value1', 'value2', ' '],
    ],
    delimiter: ',',
  },
  noheaderWithVaryColumnNum: {
    header: ['column_1', 'column_2', 'column_3', 'column_4'],
    rows: [
      ['John', '25', 'XXX'],
      ['Samantha', '28', 'YYY', '7'],
    ],
    options: { header: false },
  },
};

const PAPAPARSE: Record<string, Expected> = {
  'sample-header.csv': {
    header: ['title', 'name'],
    rows: [
      ['test title 01', 'test name 01'],
      ['', 'test name 02'],
    ],
  },
  'utf-8-bom-sample.csv': { header: ['A', 'B', 'C'], rows: [['X', 'Y', 'Z']], outputBom: true },
};

function check(result: Awaited<ReturnType<typeof readAll>>, expected: Expected) {
  expect(result.header).toEqual(expected.header);
  expect(result.rows).toEqual(expected.rows);
  expect(result.source.encoding).toBe('utf-8');
  if (expected.delimiter) expect(result.source.delimiter).toBe(expected.delimiter);
  expect(result.source.recordDelimiter).toBe(expected.recordDelimiter ?? '\n');
  expect(result.source.outputBom).toBe(expected.outputBom ?? false);
}

describe('csvtojson 1.1.12 test data', () => {
  it.each(Object.entries(CSVTOJSON))('%s', async (name, expected) => {
    check(await readAll(path.join(CORPUS, 'csvtojson-1.1.12', name), expected.options), expected);
  });
});

describe('Papa Parse 5.7.1 test files', () => {
  it.each(Object.entries(PAPAPARSE))('%s', async (name, expected) => {
    check(await readAll(path.join(CORPUS, 'papaparse-5.7.1', name), expected.options), expected);
  });

  it('long-sample.csv has no header line: eight records of seven cells, the last without a line ending', async () => {
    const { header, rows } = await readAll(path.join(CORPUS, 'papaparse-5.7.1', 'long-sample.csv'), { header: false });
    expect(header).toHaveLength(7);
    expect(rows).toHaveLength(8);
    expect(rows.every((row) => row.length === 7)).toBe(true);
    expect(rows[0]!.slice(0, 3)).toEqual(['Grant', 'Dyer', 'Donec.elementum@orciluctuset.example']);
    expect(rows[7]!.slice(0, 2)).toEqual(['Talon', 'Salinas']);
  });
});

const spectrum = path.dirname(createRequire(import.meta.url).resolve('csv-spectrum/package.json'));
const spectrumNames = fs.readdirSync(path.join(spectrum, 'csvs')).map((f) => path.basename(f, '.csv'));

describe('csv-spectrum 2.0.0 through openCsv', () => {
  it.each(spectrumNames)('%s', async (name) => {
    const json = JSON.parse(fs.readFileSync(path.join(spectrum, 'json', `${name}.json`), 'utf8')) as unknown;
    const expected = (Array.isArray(json) ? json : [json]) as Array<Record<string, string>>;
    const { source, header, rows } = await readAll(path.join(spectrum, 'csvs', `${name}.csv`));
    expect(header).toEqual(Object.keys(expected[0]!));
    const objects = rows.map((row) => Object.fromEntries(header.map((h, i) => [h, row[i]])));
    // Its location_coordinates.json has another phone number than its own CSV: that cell is not compared.
    if (name === 'location_coordinates') for (const object of [...objects, ...expected]) delete object['Contact Phone Number'];
    expect(objects).toEqual(expected);
    expect(source.encoding).toBe('utf-8');
    expect(source.recordDelimiter).toBe(name.endsWith('_crlf') ? '\r\n' : '\n');
  });
});
