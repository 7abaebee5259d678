// CSV text for the writer's hot path.
const QUOTE = /"/g;
/** Per delimiter, the cells that must be quoted: those holding it, a quote, CR or LF (made once per delimiter). */
const NEEDS_QUOTES = new Map<string, RegExp>();

function needsQuotes(delimiter: string): RegExp {
  let pattern = NEEDS_QUOTES.get(delimiter);
  if (!pattern) {
    pattern = new RegExp(`["\\r\\n${delimiter.replace(/[\\\]^-]/g, '\\$&')}]`);
    NEEDS_QUOTES.set(delimiter, pattern);
  }
  return pattern;
}

/**
 * CSV text for records, each line ended by `eol`: a cell is quoted when it holds the delimiter, a
 * quote, CR or LF, with quotes doubled (RFC 4180), exactly as csv-stringify does by default (a test
 * holds the two to the same output). Written out here because it is the writer's hot path:
 * csv-stringify spent about six times as long per row on the same records.
 */
export function csvLines(records: readonly (readonly string[])[], eol: string, delimiter = ','): string {
  const quoted = needsQuotes(delimiter);
  let text = '';
  for (const record of records) {
    for (let i = 0; i < record.length; i += 1) {
      const cell = record[i]!;
      if (i > 0) text += delimiter;
      text += quoted.test(cell) ? `"${cell.replace(QUOTE, '""')}"` : cell;
    }
    text += eol;
  }
  return text;
}

/**
 * Spreadsheets run a cell that starts with one of these as a formula (CSV injection), also after
 * control characters they pass over (LibreOffice runs NUL then `=1+1`): escaped all the same.
 */
const FORMULA_START = /^[\x00-\x1f\x7f]*[=+\-@]|^[\t\r]/;

/** Added cells only: input cells are never changed. */
export function escapeFormula(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}
