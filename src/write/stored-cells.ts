// How the store keeps an answer's own added columns (so that a known row is written without
// parsing its answer): one CSV record, comma-separated,
// each cell formula-escaped, led by the layout it was rendered with:
//
//   2:3bfbb6ca,Ana Ortiz,"CTO, ""Data""",Acme,...
//
// Why a CSV record and not a JSON array of cells: a CSV run with the default delimiter and column
// set writes the record as it is — no JSON.parse, no per-cell escaping, quoting or array per known
// row (known rows at 1 M rows: bench/analysis.md). Any other run (another delimiter, --fields)
// splits it back into cells (splitRecord), which costs about what JSON.parse did.
//
// The layout (CELLS_VERSION and a hash of the column names) makes cells of any other layout
// "foreign": the store then reads the answer itself, so changing a column cannot shift cached rows.
import { createHash } from 'node:crypto';
import { cellsText } from '../store/answer-cells.js';
import { csvLines, escapeFormula } from './csv-lines.js';

export { recordOf } from '../store/answer-cells.js';

/** Bump when the value or the format of a stored cell changes while the column names do not. */
const CELLS_VERSION = 3;

/** The layout cell for these column names, e.g. `2:3bfbb6ca`. */
export function layoutOf(names: readonly string[]): string {
  return `${CELLS_VERSION}:${createHash('sha1').update(names.join(',')).digest('hex').slice(0, 8)}`;
}

/** The cells, formula-escaped, as one comma-separated record. */
export function recordText(cells: readonly string[]): string {
  return csvLines([cells.map(escapeFormula)], '', ',');
}

/** What the store keeps: the layout, then the record (store/answer-cells.ts). */
export function storedText(layout: string, cells: readonly string[]): string {
  return cellsText({ layout, record: recordText(cells) });
}

/** The cells of a record written by csvLines with ',' (RFC 4180: quoted cells, quotes doubled). */
export function splitRecord(record: string): string[] {
  const cells: string[] = [];
  let at = 0;
  for (;;) {
    if (record.charCodeAt(at) === 34 /* " */) {
      let cell = '';
      let from = at + 1;
      for (;;) {
        const quote = record.indexOf('"', from);
        if (quote === -1) throw new Error('unterminated quoted cell in a stored record');
        cell += record.slice(from, quote);
        if (record.charCodeAt(quote + 1) !== 34) {
          at = quote + 1;
          break;
        }
        cell += '"';
        from = quote + 2;
      }
      cells.push(cell);
    } else {
      const comma = record.indexOf(',', at);
      const end = comma === -1 ? record.length : comma;
      cells.push(record.slice(at, end));
      at = end;
    }
    if (at >= record.length) return cells;
    at += 1; // the comma
    if (at === record.length) {
      cells.push('');
      return cells;
    }
  }
}

/**
 * Adds 1 to `counts[i]` for each of a record's first `counts.length` cells that is not empty,
 * without splitting it (the fill rates of the known-rows path). csvLines never quotes an empty
 * cell, so a quoted cell holds something.
 */
export function countNonEmpty(record: string, counts: Float64Array): void {
  const length = record.length;
  let at = 0;
  for (let i = 0; i < counts.length && at < length; i += 1) {
    if (record.charCodeAt(at) === 34 /* " */) {
      counts[i]! += 1;
      let quote = record.indexOf('"', at + 1);
      while (quote !== -1 && record.charCodeAt(quote + 1) === 34) quote = record.indexOf('"', quote + 2);
      if (quote === -1) return;
      at = quote + 2; // past the closing quote and the comma
    } else {
      const comma = record.indexOf(',', at);
      const end = comma === -1 ? length : comma;
      if (end > at) counts[i]! += 1;
      at = end + 1;
    }
  }
}
