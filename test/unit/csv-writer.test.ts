// The writer's CSV quoting is held to csv-stringify's output (the reference), cell for cell.
import { stringify } from 'csv-stringify/sync';
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvLines } from '../../src/write/row-writer.js';

function randomCell(random: () => number): string {
  const alphabet = ['a', 'Z', '0', ' ', ',', '"', '\n', '\r', '\t', '=', "'", 'é', '東', '\u00ff', ';'];
  const length = Math.floor(random() * 8);
  let cell = '';
  for (let i = 0; i < length; i += 1) cell += alphabet[Math.floor(random() * alphabet.length)];
  return cell;
}

describe('csvLines', () => {
  it('writes what csv-stringify writes, and csv-parse reads it back unchanged', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const records = Array.from({ length: 2000 }, () => Array.from({ length: 1 + Math.floor(random() * 6) }, () => randomCell(random)));
    expect(csvLines(records, '\n')).toBe(stringify(records, { eof: true }));
    // With CRLF lines csv-stringify leaves a lone CR or LF unquoted (a reader then splits the row
    // there); we quote any cell holding either, so the text reads back right.
    for (const eol of ['\n', '\r\n']) expect(parse(csvLines(records, eol), { relax_column_count: true })).toEqual(records);
  });

  it('quotes only cells that need it', () => {
    expect(csvLines([['plain', 'a,b', 'say "hi"', 'two\nlines', '']], '\n')).toBe('plain,"a,b","say ""hi""","two\nlines",\n');
  });
});
