// An answer's rendered cells, as the store keeps them beside the answer (a CSV run with the
// default columns writes them as they are, with no JSON.parse of the lead). The store knows no column: the caller renders the
// cells (write/stored-cells.ts) and names their layout; the store keeps `<layout>,<record>` and
// hands a record back only to a caller that asks for the same layout, so cells rendered with other
// columns (another version) are never used: the answer itself is read instead.
import type { Operation } from '../api/types.js';

export interface AnswerCells {
  /** Names the columns and format the record was rendered with, e.g. `2:3bfbb6ca`. */
  layout: string;
  /** The cells, one record. */
  record: string;
}

/** The caller's rendering of an answer's cells (write/stored-cells.ts); undefined for an operation with none. */
export interface CellsRenderer {
  layout(op: Operation): string | undefined;
  render(op: Operation, data: unknown): AnswerCells | undefined;
}

/** What the `cells` column holds. */
export function cellsText(cells: AnswerCells): string {
  return `${cells.layout},${cells.record}`;
}

/**
 * The record after the layout when `text` was rendered with `layout`; undefined for cells of
 * another layout (or of the JSON form of schema v2, which starts with `[`).
 */
export function recordOf(text: string, layout: string): string | undefined {
  return text.length > layout.length && text.charCodeAt(layout.length) === 44 /* , */ && text.startsWith(layout) ? text.slice(layout.length + 1) : undefined;
}
