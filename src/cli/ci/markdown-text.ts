// Text from outside (a file's name, a header cell, a fatal error's one line) in the job summary's
// Markdown: it makes no markup, no link and no HTML there. Every ASCII punctuation character is
// backslash-escaped (CommonMark lets any be; GitHub-flavoured Markdown's table cells need `|` so),
// which also breaks the literal autolinks (`www.`, `http:`, `a@b.c`), mentions (`@x`), references
// (`#1`) and emoji codes (`:x:`) before they form; control characters and line breaks are shown
// escaped (core/terminal-text.ts), so a value stays on its line, in its cell. Long values are cut.
import { terminalText } from '../../core/terminal-text.js';

const PUNCTUATION = /[!-/:-@[-`{-~]/g;

/** How much of a value the summary shows. */
const SHOWN = 200;

/** `text` as literal Markdown text, on one line, at most `max` characters of it shown. */
export function markdownText(text: string, max = SHOWN): string {
  const cut = [...text].length > max ? `${[...text].slice(0, max).join('')}…` : text;
  return terminalText(cut).replace(PUNCTUATION, '\\$&');
}

/** A GitHub-flavoured Markdown table: the header's cells, then the rows' (cells written as Markdown already); `right`: the columns aligned right (numbers). */
export function markdownTable(header: readonly string[], rows: ReadonlyArray<readonly (string | number)[]>, right: readonly number[] = []): string[] {
  const line = (cells: ReadonlyArray<string | number>) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map((_, i) => (right.includes(i) ? '---:' : '---'))), ...rows.map(line)];
}
