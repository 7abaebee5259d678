// Text as the HTML report writes it: escaped, and numbers, shares and times in one format.
import { formatDuration } from '../core/duration.js';

/**
 * Text for HTML content or an attribute. A URL shown as text (a --base-url on the command line)
 * gets its colon as a character reference: the page reads the same, and nothing in it, for a
 * reader, a mail filter or a check, looks like a reference to elsewhere (the report is one file).
 */
export function esc(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;')
    .replace(/\b(https?|ftp|file|data|javascript):/gi, '$1&#58;');
}

/** 12,345 */
export function num(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** 87.5 %, or – when there is nothing to divide. */
export function pct(rate: number | null): string {
  return rate === null ? '–' : `${(Math.round(rate * 1000) / 10).toFixed(1)} %`;
}

/** A duration as formatDuration writes it; from 10 s on, in whole seconds (milliseconds there are noise). */
export function duration(ms: number): string {
  return ms <= 0 ? '0s' : formatDuration(ms >= 10_000 ? Math.round(ms / 1000) * 1000 : Math.round(ms));
}

/** 2026-11-25 14:02:09 UTC */
export function when(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} UTC`;
}

/** A table: the header cells (none: a table of names and values), then the rows (cells already escaped); numbers right-aligned by class. */
export function table(head: readonly string[] | undefined, rows: ReadonlyArray<readonly string[]>, numeric: ReadonlySet<number> = new Set()): string {
  const cell = (tag: string, text: string, i: number) => `<${tag}${numeric.has(i) ? ' class="n"' : ''}>${text}</${tag}>`;
  const thead = head ? `<thead><tr>${head.map((h, i) => cell('th', esc(h), i)).join('')}</tr></thead>` : '';
  return `<table${head ? '' : ' class="kv"'}>${thead}<tbody>${rows
    .map((r) => `<tr>${r.map((c, i) => cell('td', c, i)).join('')}</tr>`)
    .join('')}</tbody></table>`;
}
