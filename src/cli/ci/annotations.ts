// The run's rows in the sidecar as GitHub annotations, one per code, never one per row
// (docs/cli-contract.md, "In a CI step"): `::error` for the rows in `error`, `::warning` for the rows
// skipped that a run again finishes (the account's stops, the API's outage, --max-errors, an
// interrupt); rows skipped with nothing to do (no_key, complete) are no news. Each points at the
// input and the line of the code's first row. The runner shows at most 10 errors and 10 warnings
// of a step: what is over is said in one `::notice`, not dropped unsaid.
import type { EnrichSummary } from '../../run/summary.js';
import { workflowCommand } from './workflow-commands.js';

/** Rows skipped that no one needs to act on: an empty key, a row complete already (not in the sidecar). */
const NO_NEWS = new Set(['no_key', 'complete']);

/** The runner's cap, per level and step. */
export const SHOWN_PER_LEVEL = 10;

/** The row numbers an annotation names. */
export const ROWS_NAMED = 5;

export interface CodeCount {
  code: string;
  count: number;
  /** `error` rows; `warning`: skipped rows a run again finishes; `skipped`: skipped with nothing to do (no_key). */
  level: 'error' | 'warning' | 'skipped';
}

/**
 * The sidecar's codes: the rows in error by code, then the skipped ones a run again finishes, then
 * the other skipped ones (no_key); each the most rows first. `complete` rows are not in the sidecar.
 */
export function codeCounts(s: Pick<EnrichSummary, 'errorCodes' | 'skipReasons'>): CodeCount[] {
  const skipped = s.skipReasons ?? {};
  const byCount = (a: CodeCount, b: CodeCount) => b.count - a.count || a.code.localeCompare(b.code);
  const errors = Object.entries(s.errorCodes).map(([code, n]): CodeCount => ({ code, count: n - (skipped[code] ?? 0), level: 'error' }));
  const others = Object.entries(skipped)
    .filter(([code, count]) => count > 0 && code !== 'complete')
    .map(([code, count]): CodeCount => ({ code, count, level: NO_NEWS.has(code) ? 'skipped' : 'warning' }));
  return [
    ...errors.filter((c) => c.count > 0).sort(byCount),
    ...others.filter((c) => c.level === 'warning').sort(byCount),
    ...others.filter((c) => c.level === 'skipped').sort(byCount),
  ];
}

export interface AnnotationPlace {
  /** The input as `file=` names it (relative to the workspace); none for stdin or a stream. */
  file: string | undefined;
  /** The sidecar, as the message names it. */
  sidecar: string | undefined;
  /** Each code's first rows (data rows, as the sidecar numbers them). */
  rows: ReadonlyMap<string, readonly number[]>;
  /** The line in the file of a row. */
  lines: ReadonlyMap<number, number>;
}

const rowsWord = (n: number) => `${n} ${n === 1 ? 'row' : 'rows'}`;

/** The annotation lines: one per code, at most SHOWN_PER_LEVEL of each level, then one notice for the rest. */
export function annotationLines(codes: readonly CodeCount[], place: AnnotationPlace): string[] {
  const errors = codes.filter((c) => c.level === 'error');
  const warnings = codes.filter((c) => c.level === 'warning');
  const shown = [...errors.slice(0, SHOWN_PER_LEVEL), ...warnings.slice(0, SHOWN_PER_LEVEL)];
  const rest = [...errors.slice(SHOWN_PER_LEVEL), ...warnings.slice(SHOWN_PER_LEVEL)];
  const see = place.sidecar === undefined ? '' : `; see ${place.sidecar}`;
  const lines = shown.map((c) => {
    const first = place.rows.get(c.code) ?? [];
    const line = first[0] === undefined ? undefined : place.lines.get(first[0]);
    return workflowCommand(c.level, { file: place.file, line, title: `lead-enrich (${c.code})` }, `${message(c, first)}${see}`);
  });
  if (rest.length > 0) {
    const each = rest.map((c) => `${c.code} ${c.count}`).join(', ');
    const title = `lead-enrich: ${rest.length} more ${rest.length === 1 ? 'code' : 'codes'}`;
    lines.push(workflowCommand('notice', { file: place.file, title }, `${rowsWord(rest.reduce((n, c) => n + c.count, 0))} more, by code: ${each}${see}`));
  }
  return lines;
}

/** "300 rows in error with invalid_input: rows 2, 5, 9, 12, 20 and 295 more". */
function message(c: CodeCount, first: readonly number[]): string {
  const what =
    c.level === 'error'
      ? `${rowsWord(c.count)} in error with ${c.code}`
      : `${rowsWord(c.count)} skipped with ${c.code} (run the same command again to finish them)`;
  if (first.length === 0) return what;
  const more = c.count > first.length ? ` and ${c.count - first.length} more` : '';
  return `${what}: ${first.length === 1 && more === '' ? 'row' : 'rows'} ${first.join(', ')}${more}`;
}
