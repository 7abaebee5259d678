// The CSV text of the writer's hot path (write/csv-lines.ts): a cell is quoted when it holds the
// delimiter, a quote, CR or LF, with quotes doubled (RFC 4180), for any delimiter the input used,
// those that mean something inside a regular expression's character class too; and an added cell
// that a spreadsheet would run as a formula (CSV injection) is written with a leading quote.
import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { csvLines, escapeFormula } from '../../src/write/csv-lines.js';

describe('quoting, per delimiter', () => {
  it('quotes exactly the cells that hold the delimiter, a quote, CR or LF', () => {
    expect(csvLines([['a', 'b;c', 'd,e', 'say "x"', 'cr\rhere', 'lf\nhere', '']], '\n', ';')).toBe('a;"b;c";d,e;"say ""x""";"cr\rhere";"lf\nhere";\n');
    expect(csvLines([['a\tb', 'c,d']], '\r\n', '\t')).toBe('"a\tb"\tc,d\r\n');
  });

  it.each([']', '^', '-', '\\', '|', '.', '*'])('a delimiter %j is taken literally, never as part of a pattern', (delimiter) => {
    const records = [['plain', `x${delimiter}y`, 'a', 'b-c^d]e\\f']];
    const text = csvLines(records, '\n', delimiter);
    expect(parse(text, { delimiter })).toEqual(records);
    // A cell without the delimiter (nor a quote, CR or LF) is not quoted.
    expect(text.startsWith(`plain${delimiter}"x${delimiter}y"${delimiter}a${delimiter}`)).toBe(true);
  });

  it('the same delimiter twice gives the same text (its pattern is kept)', () => {
    const records = [['x;y', 'z']];
    expect(csvLines(records, '\n', ';')).toBe(csvLines(records, '\n', ';'));
    expect(csvLines(records, '\n', ';')).toBe('"x;y";z\n');
  });

  it('every record ends with the line ending asked for, an empty record too', () => {
    expect(csvLines([[], ['a'], ['b', 'c']], '\r\n')).toBe('\r\na\r\nb,c\r\n');
    expect(csvLines([], '\n')).toBe('');
  });
});

describe('cells a spreadsheet would run as a formula', () => {
  it.each(['=1+1', '+33 1 23', '-5', '@SUM(A1)', '\tx', '\rx', '\x00=1+1', '\x1f+1', '\x7f@x', '\x01\x02-3'])('%j is written with a leading quote', (cell) => {
    expect(escapeFormula(cell)).toBe(`'${cell}`);
  });

  it.each(['', 'a=1', ' =1', 'x+y', 'café', '1-2', "'=1", '\nx', 'a\t'])('%j is written as it is', (cell) => {
    expect(escapeFormula(cell)).toBe(cell);
  });
});
