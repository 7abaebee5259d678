// The line each record of a CSV text begins on, as an annotation's `line=` names it
// (read/record-lines.ts): the header, the lines above it, blank lines and the line breaks inside
// quoted cells counted, CR, LF and CRLF one line each.
import { describe, expect, it } from 'vitest';
import { RecordLines } from '../../src/read/record-lines.js';

/** The line of each record 0..n-1 of `text`, fed in chunks of `chunk` bytes. */
function linesOf(text: string, n: number, options: { skipLines?: number; delimiter?: string; chunk?: number } = {}): Array<number | undefined> {
  const scan = new RecordLines(
    options.delimiter ?? ',',
    options.skipLines ?? 0,
    Array.from({ length: n }, (_, i) => i),
  );
  const bytes = Buffer.from(text, 'utf8');
  const size = options.chunk ?? bytes.length;
  for (let at = 0; at < bytes.length; at += size) scan.feed(bytes.subarray(at, at + size));
  return Array.from({ length: n }, (_, i) => scan.lineOf(i));
}

describe('RecordLines: the line a record begins on', () => {
  it('one record a line: the header is line 1, row N is line N + 1', () => {
    expect(linesOf('email\na@x.io\nb@x.io\n', 3)).toEqual([1, 2, 3]);
  });

  it('blank lines are no records, but are lines', () => {
    expect(linesOf('\n\nemail\n\na@x.io\n\n\nb@x.io', 3)).toEqual([3, 5, 8]);
  });

  it('a quoted cell holding line breaks (LF, CRLF, CR) and doubled quotes: the record after it begins lower', () => {
    const text = 'email,note\r\n"a@x.io","one\r\ntwo\nthree ""quoted""\rfour"\r\nb@x.io,x\r\n';
    expect(linesOf(text, 3)).toEqual([1, 2, 6]);
    // Byte by byte: a CRLF or a doubled quote split between chunks counts the same.
    expect(linesOf(text, 3, { chunk: 1 })).toEqual([1, 2, 6]);
  });

  it('CRLF is one line break, CR alone is one', () => {
    expect(linesOf('h\r\na\r\rb\rc\r\n', 4)).toEqual([1, 2, 4, 5]);
  });

  it('--skip-lines: the lines above the header are counted, not read as records', () => {
    expect(linesOf('Report "x\nGenerated today\nemail\na@x.io\n', 2, { skipLines: 2 })).toEqual([3, 4]);
  });

  it('a quote inside an unquoted cell is a character (relax_quotes), not the start of a quoted cell', () => {
    expect(linesOf('h,n\na@x.io,5" screen\nb@x.io,x\n', 3)).toEqual([1, 2, 3]);
  });

  it('another delimiter: a quote opens a cell after it', () => {
    expect(linesOf('h;n\na@x.io;"x\ny"\nb@x.io;z\n', 3, { delimiter: ';' })).toEqual([1, 2, 4]);
  });

  it('stops once every record asked for has begun; a delimiter of several bytes is not told: no line', () => {
    const scan = new RecordLines(',', 0, [1]);
    scan.feed('h\na\n');
    expect(scan.done).toBe(true);
    const wide = new RecordLines('\xc2\xa7', 0, [0]);
    wide.feed('h\n');
    expect(wide.done).toBe(true);
    expect(wide.lineOf(0)).toBeUndefined();
  });
});
