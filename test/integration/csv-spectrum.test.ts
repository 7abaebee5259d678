// Every file of the csv-spectrum corpus passes through enrich with its cells unchanged: the
// output's input columns, read back, equal the corpus's expected JSON.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrich } from '../../src/run/enrich.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { makeTempDir, readCsvBytes, readCsvObjects } from '../helpers/files.js';

const corpus = path.dirname(createRequire(import.meta.url).resolve('csv-spectrum/package.json'));
const names = fs.readdirSync(path.join(corpus, 'csvs')).map((f) => path.basename(f, '.csv'));

let sandbox: Sandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, rpm: 60_000 });
});
afterAll(() => sandbox.close());

describe('csv-spectrum passthrough', () => {
  it.each(names)('%s', async (name) => {
    const dir = makeTempDir();
    const input = path.join(dir, `${name}.csv`);
    fs.copyFileSync(path.join(corpus, 'csvs', `${name}.csv`), input);
    const json = JSON.parse(fs.readFileSync(path.join(corpus, 'json', `${name}.json`), 'utf8')) as unknown;
    const expected = (Array.isArray(json) ? json : [json]) as Array<Record<string, string>>;
    const header = Object.keys(expected[0]!);
    // No column of the corpus is a key: look up "by email" in the first column, so every row is
    // an invalid-input row and no request is made; what matters here is the cells.
    const summary = await enrich({ input, by: 'email', column: header[0]!, baseUrl: sandbox.baseUrl, token: sandbox.token, store: ':memory:' });
    expect(summary.rows).toBe(expected.length);
    // Byte for byte: the input's cells (latin1-read, so invalid UTF-8 compares too) reappear as they were.
    const inputCells = readCsvBytes(input);
    const outputCells = readCsvBytes(path.join(dir, `${name}.enriched.csv`));
    expect(outputCells.map((row) => row.slice(0, header.length))).toEqual(inputCells);
    const sidecarCells = readCsvBytes(path.join(dir, `${name}.enriched.errors.csv`));
    expect(sidecarCells.map((row) => row.slice(1, header.length + 1))).toEqual(inputCells);
    // And as the corpus expects them. Its location_coordinates.json disagrees with its own CSV
    // (another phone number, and the CSV is latin1, not UTF-8), so that file is checked by bytes only.
    if (name !== 'location_coordinates') {
      const rows = readCsvObjects(path.join(dir, `${name}.enriched.csv`));
      expect(rows.map((row) => Object.fromEntries(header.map((h) => [h, row[h]])))).toEqual(expected);
    }
    if (name.endsWith('_crlf')) expect(fs.readFileSync(path.join(dir, `${name}.enriched.csv`), 'utf8')).toContain('\r\n');
  });
});
