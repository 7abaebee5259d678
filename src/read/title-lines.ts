// Title lines above the header: report exports (HubSpot's "Exported from ..." lines, a report's
// name and date) put one-cell lines before the table. They are told from the head of the file by
// the same scan that finds the delimiter: the first line from which the text reads as a table
// (several fields, the lines below agreeing) is the header, when every line above it is one cell.
import { fitsAsTable, fieldsOfFirstLine } from './detect-layout.js';

/** More lines than this above the header is not a title: the file is read as it is. */
export const MAX_TITLE_LINES = 20;

/** Where the line that begins at `start` ends, its line ending included; -1 when the text ends first. */
function lineEnd(text: string, start: number): number {
  for (let i = start; i < text.length; i += 1) {
    const c = text[i];
    if (c === '\n') return i + 1;
    if (c === '\r') return text[i + 1] === '\n' ? i + 2 : i + 1;
  }
  return -1;
}

/** The text after its first `count` lines (blank lines count: the parser's line numbers do). */
export function afterLines(text: string, count: number): string {
  let at = 0;
  for (let n = 0; n < count; n += 1) {
    const end = lineEnd(text, at);
    if (end < 0) return '';
    at = end;
  }
  return text.slice(at);
}

/** The first `count` lines' text, blank ones left out, for a message. */
export function firstLines(text: string, count: number): string[] {
  const lines: string[] = [];
  let at = 0;
  for (let n = 0; n < count; n += 1) {
    const end = lineEnd(text, at);
    const line = text.slice(at, end < 0 ? undefined : end).replace(/[\r\n]+$/, '');
    if (line.trim() !== '') lines.push(line);
    if (end < 0) break;
    at = end;
  }
  return lines;
}

/**
 * How many lines above the header are titles: 0 when the first line reads as a header already (or
 * nothing reads as a table). A skipped line must be one cell under the delimiter the table has,
 * so a ragged file's real header is never taken for a title.
 */
export function titleLineCount(text: string, complete: boolean, delimiter: string | undefined): number {
  if (fitsAsTable(text, complete, delimiter) !== undefined) return 0;
  let at = 0;
  for (let count = 1; count <= MAX_TITLE_LINES; count += 1) {
    const end = lineEnd(text, at);
    if (end < 0) return 0;
    at = end;
    const rest = text.slice(at);
    const table = fitsAsTable(rest, complete, delimiter);
    if (table === undefined) continue;
    const above = text.slice(0, at);
    return everyLineOneCell(above, count, table) ? count : 0;
  }
  return 0;
}

function everyLineOneCell(text: string, count: number, delimiter: string): boolean {
  let at = 0;
  for (let n = 0; n < count; n += 1) {
    const end = lineEnd(text, at);
    const line = text.slice(at, end < 0 ? undefined : end);
    if (fieldsOfFirstLine(line, delimiter) > 1) return false;
    at = end;
  }
  return true;
}
