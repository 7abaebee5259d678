// The pieces that tell a report's closing and title lines from data, on their own: what is held
// back and handed on in order, what is dropped, and which first lines are titles (never a real
// header of a ragged file).
import { describe, expect, it } from 'vitest';
import { MAX_FOOTER_LINES, TextTail, TrailingBlock } from '../../src/read/report-footer.js';
import { titleLineCount } from '../../src/read/title-lines.js';

function blockAfter(text: string): TrailingBlock {
  const tail = new TextTail();
  tail.feed(Buffer.from(text, 'latin1'));
  return new TrailingBlock(3, tail);
}

describe('a trailing block of one-cell records', () => {
  it('one-cell records between batches are held, then handed on in order when data follows', () => {
    const block = blockAfter('');
    expect(block.pass([['a', 'b', 'c'], ['lonely']])).toEqual([['a', 'b', 'c']]);
    expect(block.pass([['d', 'e', 'f']])).toEqual([['lonely'], ['d', 'e', 'f']]);
    expect(block.end()).toEqual({ rows: [], footer: undefined });
  });

  it('kept as rows at the end when nothing says footer (no blank line, no Salesforce line, no "" line)', () => {
    const block = blockAfter('a,b,c\nx@y.com\n');
    block.pass([['a', 'b', 'c'], ['x@y.com']]);
    expect(block.end()).toEqual({ rows: [['x@y.com']], footer: undefined });
  });

  it('dropped at the end below a blank line, and counted after the last data row', () => {
    const block = blockAfter('a,b,c\nd,e,f\n\nReport A\nPrinted today\n');
    expect(block.pass([['a', 'b', 'c'], ['d', 'e', 'f'], ['Report A'], ['Printed today']])).toHaveLength(2);
    expect(block.end()).toEqual({ rows: [], footer: { lines: 2, afterRow: 2, first: 'Report A' } });
  });

  it("Salesforce's own lines say footer without a blank line", () => {
    const block = blockAfter('');
    block.pass([['a', 'b', 'c'], ['Confidential Information - Do Not Distribute'], ['Acme Corp']]);
    expect(block.end().footer).toMatchObject({ lines: 2, afterRow: 1 });
  });

  it(`more than ${MAX_FOOTER_LINES} one-cell records are data, handed on at once`, () => {
    const block = blockAfter('');
    const many = Array.from({ length: MAX_FOOTER_LINES + 1 }, (_, i) => [`line ${i}`]);
    expect(block.pass([['a', 'b', 'c'], ...many])).toHaveLength(MAX_FOOTER_LINES + 2);
    expect(block.end()).toEqual({ rows: [], footer: undefined });
  });

  it('a file of one column holds nothing back', () => {
    const block = new TrailingBlock(1, new TextTail());
    expect(block.pass([['a'], ['b']])).toEqual([['a'], ['b']]);
  });
});

describe('title lines above the header', () => {
  const table = 'Name,Email,City\nAnn,ann@x.com,Oslo\nBen,ben@x.com,Rome\n';

  it('one-cell lines above a table are titles; none when the first line is the header', () => {
    expect(titleLineCount(`"Exported from HubSpot, on Nov 27"\nView: all\n${table}`, true, undefined)).toBe(2);
    expect(titleLineCount(table, true, undefined)).toBe(0);
  });

  it("a ragged file's real header is never taken for a title line", () => {
    expect(titleLineCount('Name,Email,City,Notes\nAnn,ann@x.com,Oslo\nBen,ben@x.com,Rome\nCid,cid@x.com,Bern\n', true, undefined)).toBe(0);
  });

  it('more than 20 lines above a table are not titles', () => {
    expect(titleLineCount(`${'note\n'.repeat(21)}${table}`, true, undefined)).toBe(0);
  });
});
