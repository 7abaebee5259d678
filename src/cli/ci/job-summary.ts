// The job summary: one section of GitHub-flavoured Markdown for a run's outcome, whatever it is
// (docs/cli-contract.md, "In a CI step"). Its figures are the run's summary object's
// (run/summary.ts), the words the terminal's summary uses (summary-text.ts). Nothing in it comes
// from the file's cells or the API's answers; the names it shows (files, the key column) are
// escaped (markdown-text.ts), and it holds no HTML. At most SUMMARY_BYTES.
import { formatDuration } from '../../core/duration.js';
import { exitStatusOf } from '../../run/exit-status.js';
import type { EnrichSummary } from '../../run/summary.js';
import { outcomeOf } from '../summary-text.js';
import { VERSION } from '../version.js';
import { markdownTable, markdownText } from './markdown-text.js';
import type { CodeCount } from './annotations.js';

/** A section's most bytes: a job's summary page takes 1 MiB in all, for every step of it. */
export const SUMMARY_BYTES = 64 * 1024;

/** The codes the summary lists, the most rows first; the rest are counted. */
const CODES_SHOWN = 10;

export interface SummaryPlace {
  /** A path as the summary shows it: relative to the workspace when inside it. */
  shownPath(file: string): string;
}

/** The code a run's outcome is named by: its stop's, else its errors' most frequent; none for a clean run. */
export function outcomeCode(s: EnrichSummary, codes: readonly CodeCount[]): string | undefined {
  const stops: Record<string, string> = {
    credits: 'credit_reserve',
    budget: 'budget',
    daily_limit: 'daily_limit',
    max_errors: 'max_errors',
    api_unavailable: 'api_unavailable',
    redis: 'redis_unavailable',
    interrupt: 'interrupted',
  };
  if (s.stoppedBy !== undefined) return stops[s.stoppedBy] ?? s.stoppedBy;
  return exitStatusOf(s) === 0 ? undefined : codes.find((c) => c.level === 'error')?.code;
}

/** The section for a finished run (every exit status but a fatal 1). */
export function runSection(s: EnrichSummary, codes: readonly CodeCount[], place: SummaryPlace): string {
  const status = exitStatusOf(s);
  // The terminal's sentence, without the sidecar's path (the files are listed below).
  const words = outcomeOf({ ...s, errorsFile: undefined }).text.replace(/\.$/, '');
  const code = outcomeCode(s, codes);
  const heading = code === undefined ? words : words.replace(`(exit ${status})`, `(exit ${status}, ${code})`);
  const lines = [
    `### lead-enrich: ${markdownText(heading, 400)}`,
    '',
    ...countsTable('Rows', { rows: s.rows, ...s.status }),
    '',
    ...countsTable('Billing', s.billing),
    '',
    ...creditLines(s),
    ...codeLines(codes),
    ...fileLines(s, place),
    `${inputLine(s, place)} · ${formatDuration(s.elapsedMs)} · lead-enrich ${VERSION}`,
    '',
  ];
  return capped(lines);
}

/** The section for a fatal failure: its code, its one line (escaped) and what was written: nothing. */
export function fatalSection(fatal: { status: number; code: string; message: string }): string {
  return capped([
    `### lead-enrich: failed (exit ${fatal.status}, ${markdownText(fatal.code)})`,
    '',
    markdownText(fatal.message, 600),
    '',
    fatal.status === 130
      ? 'Interrupted before any row was written: no output.'
      : 'Nothing was looked up or written: fix the cause the line names and run the same command again.',
    '',
    `lead-enrich ${VERSION}`,
    '',
  ]);
}

/** A table of one row of counts, named `title`, under their words: rows by status, rows by billing. */
function countsTable(title: string, counts: Readonly<Record<string, number>>): string[] {
  const entries = Object.entries(counts);
  const header = ['', ...entries.map(([word]) => markdownText(word.replace(/_/g, ' ')))];
  return markdownTable(
    header,
    [[`**${title}**`, ...entries.map(([, n]) => n)]],
    entries.map((_, i) => i + 1),
  );
}

function creditLines(s: EnrichSummary): string[] {
  const credits = s.accountRead
    ? `**Credits:** ${s.credits.before} before, ${s.credits.after} after${s.credits.exact ? '' : ' (estimated)'}, ${s.credits.spent} spent, reserve ${s.credits.reserve}`
    : '**Credits:** none spent (the account was not read)';
  const budgets = (s.budgets ?? []).map(
    (b) =>
      `${markdownText(b.budget)}: ${b.spent} spent${b.per === 'run' ? ' by this run' : ` ${b.per === 'day' ? 'on' : 'in'} ${markdownText(b.period ?? '')} (UTC)`}, ${b.left} left${b.stopped ? ' (stopped the run)' : ''}`,
  );
  const { compared, rows } = s.changed ?? { compared: 0, rows: 0 };
  return [
    credits,
    ...(budgets.length ? ['', `**Budgets:** ${budgets.join('; ')}`] : []),
    ...(compared > 0 ? ['', `**Changed since the last answer:** ${rows} of the ${compared} rows looked up again`] : []),
    '',
  ];
}

const LEVEL_WORDS: Record<CodeCount['level'], string> = { error: 'error', warning: 'skipped: the same command again finishes them', skipped: 'skipped' };

/** The sidecar's codes with their rows, the most first, ten at most, then how many more. */
function codeLines(codes: readonly CodeCount[]): string[] {
  if (codes.length === 0) return [];
  const shown = [...codes].sort((a, b) => b.count - a.count || a.code.localeCompare(b.code)).slice(0, CODES_SHOWN);
  const rest = codes.length - shown.length;
  const left = codes.filter((c) => !shown.includes(c)).reduce((sum, c) => sum + c.count, 0);
  return [
    ...markdownTable(
      ['Code', 'Rows', 'Rows are'],
      shown.map((c) => [markdownText(c.code), c.count, LEVEL_WORDS[c.level]]),
      [1],
    ),
    ...(rest > 0 ? ['', `and ${rest} more codes (${left} rows): see the sidecar`] : []),
    '',
  ];
}

/** The files the run wrote, relative to the workspace. */
function fileLines(s: EnrichSummary, place: SummaryPlace): string[] {
  const output = s.output === '-' ? 'stdout' : s.output === '(stream)' || s.output === undefined ? undefined : markdownText(place.shownPath(s.output));
  const files: Array<[string, string | undefined]> = [
    ['Output', output],
    ['Errors and skipped rows', s.errorsFile === undefined ? undefined : markdownText(place.shownPath(s.errorsFile))],
    ['Report', s.report === undefined ? undefined : markdownText(place.shownPath(s.report))],
    ['Changes', s.changesFile === undefined ? undefined : markdownText(place.shownPath(s.changesFile))],
  ];
  const written = files.filter((f): f is [string, string] => f[1] !== undefined);
  return written.length === 0 ? [] : [...markdownTable(['File', 'Path'], written), ''];
}

/** "Input: data/contacts.csv, by email from column Email" (the waterfall's kinds in order). */
function inputLine(s: EnrichSummary, place: SummaryPlace): string {
  const input = s.input === '-' ? 'stdin' : s.input === '(stream)' ? 'a stream' : markdownText(place.shownPath(s.input));
  const targets = s.lookup.waterfall ?? [{ kind: s.lookup.kind, column: s.lookup.column }];
  return `Input: ${input}, by ${targets.map((t) => `${t.kind} from column ${markdownText(t.column)}`).join(', then ')}`;
}

/** The lines as one text of at most SUMMARY_BYTES: past it, whole lines are left out and the cut said. */
function capped(lines: string[]): string {
  const text = `${lines.join('\n')}\n`;
  if (Buffer.byteLength(text) <= SUMMARY_BYTES) return text;
  const kept: string[] = [];
  let bytes = 200;
  for (const line of lines) {
    bytes += Buffer.byteLength(line) + 1;
    if (bytes > SUMMARY_BYTES) break;
    kept.push(line);
  }
  return `${kept.join('\n')}\n\n(the rest of this summary is left out: it would pass ${SUMMARY_BYTES / 1024} KiB)\n`;
}
