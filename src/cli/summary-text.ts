// What `enrich` says when it ends: the summary (its first line the outcome, coloured on a
// terminal), or one line for a quiet run that did not exit 0; and the exit status of
// docs/cli-contract.md. Colour comes from node:util's styleText, which honours NO_COLOR, FORCE_COLOR
// and a stream that is not a terminal (no escape codes in a pipe or a log file).
import { styleText } from 'node:util';
import { periodWords } from '../core/budget-periods.js';
import { formatDuration } from '../core/duration.js';
import { terminalText } from '../core/terminal-text.js';
import { errorRows, exitStatusOf } from '../run/exit-status.js';
import { stopFacts } from '../run/stop-facts.js';
import { stopWords } from '../lookup/stops.js';
import type { EnrichSummary, SummaryBudget } from '../run/summary.js';
import { formatRate, rowsWord } from './progress-line.js';

export type Tone = 'good' | 'warn' | 'bad';

/** Turns a text into its coloured form, or leaves it as it is. */
export type Paint = (tone: Tone, text: string) => string;

export const noPaint: Paint = (_tone, text) => text;

const COLOURS = { good: 'green', warn: 'yellow', bad: 'red' } as const;

/** Colours for `stream`, when it takes them (a terminal; NO_COLOR and FORCE_COLOR as Node.js reads them). */
export function paintFor(stream: NodeJS.WriteStream): Paint {
  return (tone, text) => styleText(COLOURS[tone], text, { stream });
}

/** Every budget as it stands at the end: "Budgets: 200/day 196 spent today, 4 left; ...". */
function budgetsLine(s: EnrichSummary): string | undefined {
  if (!s.budgets?.length) return undefined;
  const spentIn = (b: SummaryBudget) => (b.per === 'run' ? 'by this run' : periodWords({ per: b.per, key: b.period ?? '' }));
  return `Budgets: ${s.budgets.map((b) => `${b.budget}: ${b.spent} spent ${spentIn(b)}, ${b.left} left`).join('; ')}`;
}

/** How each exit status reads. */
const TONES: Readonly<Record<number, Tone>> = { 0: 'good', 5: 'warn', 3: 'warn', 130: 'warn', 4: 'bad', 2: 'bad' };

/** The run's outcome in one sentence, with its exit status, and how it reads (good, warn, bad). */
export function outcomeOf(s: EnrichSummary): { tone: Tone; text: string } {
  const status = exitStatusOf(s);
  const tone = TONES[status] ?? 'bad';
  const see = s.errorsFile ? `; see ${s.errorsFile}` : '';
  if (s.stoppedBy) {
    const words = stopWords(s.stoppedBy);
    return { tone, text: `${words.outcome(stopFacts(s))} (exit ${status})${'seeSidecar' in words ? see : ''}.` };
  }
  if (status === 0) return { tone, text: `Done: ${rowsWord(s.rows)} (exit 0).` };
  if (status === 5)
    return {
      tone,
      text: `Done: ${rowsWord(s.status.error)} ${s.status.error === 1 ? 'holds a key that is' : 'hold keys that are'} malformed or refused by the API (exit 5)${see}.`,
    };
  return { tone, text: `Finished with ${rowsWord(errorRows(s))} in error${staleErrorWords(s)} (exit ${status})${see}.` };
}

/** Of the rows in error, those written with their stale answer (their refresh failed). */
function staleErrorWords(s: EnrichSummary): string {
  const n = s.stale?.errors ?? 0;
  return n > 0 ? ` (${n} written with ${n === 1 ? 'its' : 'their'} stale answer)` : '';
}

/** "; stale 112" after the statuses (of the found and not found rows): nothing when no row is stale. */
function staleCount(s: EnrichSummary): string {
  return s.stale?.rows ? `; stale ${s.stale.rows}` : '';
}

/** "Stale: 112 rows written with their stored answer …": the rows the run could not refresh, by what stopped it. */
function staleLine(s: EnrichSummary): string | undefined {
  if (!s.stale?.rows) return undefined;
  const reasons = Object.entries(s.stale.reasons)
    .map(([code, n]) => `${code} ${n}`)
    .join(', ');
  const they = s.stale.rows === 1 ? 'its stored answer' : 'their stored answers';
  return `Stale: ${rowsWord(s.stale.rows)} written with ${they}, older than --max-age, not refreshed (${reasons}); the same command later refreshes them`;
}

/**
 * "Time: 4m 12s (2400 rows looked up in 4m 10s, 9.6 rows/s)": the rate of the lookups over the
 * time they took. Under a second of looking up there is no rate worth giving (a few answers in
 * 3 ms are no thousand a second), and a rate over a floored second would contradict the time beside it.
 */
function timeLine(s: EnrichSummary): string {
  const rate = s.lookupMs >= 1000 ? `, ${formatRate((s.rowsLookedUp * 1000) / s.lookupMs)}` : '';
  const looked = s.rowsLookedUp > 0 ? `${rowsWord(s.rowsLookedUp)} looked up in ${formatDuration(s.lookupMs)}${rate}` : 'no row looked up';
  return `Time: ${formatDuration(s.elapsedMs)} (${looked})`;
}

/** The error codes ("server_error 12"), apart from the reasons rows were skipped for ("complete 246"): those are no errors. */
function codesOf(s: EnrichSummary): { errors: string; skipped: string } {
  const skipped = s.skipReasons ?? {};
  const list = (entries: Array<[string, number]>) =>
    entries
      .filter(([, n]) => n > 0)
      .map(([code, n]) => `${code} ${n}`)
      .join(', ');
  return { errors: list(Object.entries(s.errorCodes).map(([code, n]) => [code, n - (skipped[code] ?? 0)])), skipped: list(Object.entries(skipped)) };
}

/** One line, for `-q` runs that did not exit 0: what happened and where to look. */
export function oneLineSummary(s: EnrichSummary): string {
  const why = s.stoppedBy ? stopWords(s.stoppedBy).quiet(stopFacts(s)) : `${rowsWord(errorRows(s))} ${errorRows(s) === 1 ? 'is an error' : 'are errors'}`;
  const { errors, skipped } = codesOf(s);
  const stale = Object.entries(s.stale?.reasons ?? {})
    .map(([code, n]) => `${code} ${n}`)
    .join(', ');
  const codes = [errors, skipped && `skipped: ${skipped}`, stale && `stale: ${stale}`].filter(Boolean).join('; ');
  const where = s.errorsFile ? `; see ${s.errorsFile}` : '';
  return `${why}: ${rowsWord(s.rows)} (found ${s.status.found}, not found ${s.status.not_found}, errors ${s.status.error}, skipped ${s.status.skipped}${staleCount(s)})${codes ? `; ${codes}` : ''}${where}`;
}

/** The summary, for a terminal: the names in it (files, columns) with their control characters escaped, the outcome painted. */
export function formatSummary(s: EnrichSummary, paint: Paint = noPaint): string {
  const outcome = outcomeOf(s);
  const [first, ...rest] = summaryLines(s, outcome.text).map((line) => terminalText(line));
  return [paint(outcome.tone, first!), ...rest].join('\n');
}

function summaryLines(s: EnrichSummary, outcome: string): string[] {
  const lines = [
    outcome,
    `Rows: ${s.rows} (found ${s.status.found}, not found ${s.status.not_found}, errors ${s.status.error}, skipped ${s.status.skipped}${staleCount(s)})`,
    `Billing: ${billingWords(s.billing)}`,
    ...Object.entries(s.withBilling ?? {}).map(([extra, b]) => `Billing of --with ${extra}: ${billingWords(b)}`),
    ...(s.accountRead
      ? [
          `Requests: ${s.requests} (retries ${s.retries}, rate-limited ${s.rateLimited}) at up to ${rateOf(s)}`,
          `Credits: ${s.credits.before} before, ${s.credits.after} after${s.credits.exact ? '' : ' (estimated)'}, ${s.credits.spent} spent, reserve ${s.credits.reserve}`,
        ]
      : unreadAccountLines(s)),
    ...(s.credits.exact && s.credits.fell > s.credits.spent
      ? [`The balance fell by ${s.credits.fell}; this run spent ${s.credits.spent}: another client uses the account`]
      : []),
    timeLine(s),
  ];
  const fill = fillLine(s);
  if (fill) lines.push(fill);
  const changed = changedLine(s);
  if (changed) lines.push(changed);
  const carried = carriedLine(s);
  if (carried) lines.push(carried);
  const codes = codesOf(s);
  if (codes.errors) lines.push(`Error codes: ${codes.errors}`);
  if (codes.skipped) lines.push(`Skipped (not errors): ${codes.skipped}`);
  const stale = staleLine(s);
  if (stale) lines.push(stale);
  if (s.foundBy && Object.keys(s.foundBy).length > 1)
    lines.push(
      `Found by: ${Object.entries(s.foundBy)
        .map(([kind, n]) => `${kind} ${n}`)
        .join(', ')}`,
    );
  if (s.invalidUtf8Cells > 0) lines.push(invalidUtf8Line(s));
  if (s.partial) lines.push(`Partial: --limit ${s.limit}: the outputs hold the first ${s.limit} data rows of the input only`);
  if (s.output && s.output !== '-') lines.push(`Output: ${s.output}`);
  if (s.errorsFile) lines.push(`Errors and skipped rows: ${s.errorsFile}`);
  if (s.changesFile) lines.push(`Changes: ${s.changesFile}`);
  if (s.report) lines.push(`Report: ${s.report}`);
  const budgets = budgetsLine(s);
  if (budgets) lines.push(budgets);
  if (s.stoppedBy) lines.push(stopWords(s.stoppedBy).summary(stopFacts(s)));
  if (s.shard) lines.push(`Shard: ${s.shard.index} of ${s.shard.count} (only this shard's rows are in the outputs)`);
  if (s.apiUnavailableMs > 0 && s.stoppedBy !== 'api_unavailable')
    lines.push(`The API was unavailable for ${formatDuration(s.apiUnavailableMs)} in all; the rows waited for it.`);
  return lines;
}

/** "charged 2, free 1, cached 40, duplicate 0, none 3", and "stale N" when a row was. */
function billingWords(b: Record<string, number>): string {
  return `charged ${b.charged ?? 0}, free ${b.free ?? 0}, cached ${b.cached ?? 0}, duplicate ${b.duplicate ?? 0}, ${b.stale ? `stale ${b.stale}, ` : ''}none ${b.none ?? 0}`;
}

/** A run that never read the account: nothing was to be looked up, or the API was down from the start (or it was stopped first). */
function unreadAccountLines(s: EnrichSummary): string[] {
  if (s.stoppedBy === 'api_unavailable') return ['Requests: 0 (the API was unavailable from the start)', 'Credits: none spent (the account could not be read)'];
  if (s.stoppedBy === 'interrupt') return ['Requests: 0 (interrupted before the account was read)', 'Credits: none spent'];
  return ['Requests: 0 (every answer was stored)', 'Credits: none spent (the account was not read: nothing to look up)'];
}

/** The run's rate: "600 RPM", or "100 per 400ms" for an account whose window is not a minute. */
function rateOf(s: EnrichSummary): string {
  return s.windowMs === 60_000 ? `${s.rpm} RPM` : `${s.rpm} per ${formatDuration(s.windowMs)}`;
}

/** "Changed since the last answer: 9 of the 30 rows looked up again (lead_title 9, status 1)"; nothing when none was. */
function changedLine(s: EnrichSummary): string | undefined {
  const { compared, rows, fields } = s.changed ?? { compared: 0, rows: 0, fields: {} };
  if (compared === 0) return undefined;
  const each = Object.entries(fields)
    .map(([field, n]) => `${field} ${n}`)
    .join(', ');
  return `Changed since the last answer: ${rows} of the ${compared === 1 ? 'row' : `${compared} rows`} looked up again${each ? ` (${each})` : ''}`;
}

/** "Also listed, found by earlier runs and not reported before: 4 changes of 3 keys (1 key not in this file)"; nothing when none. */
function carriedLine(s: EnrichSummary): string | undefined {
  const { keys, lines, keysNotInFile } = s.carriedOver ?? { keys: 0, lines: 0, keysNotInFile: 0 };
  if (lines === 0) return undefined;
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  const outside = keysNotInFile > 0 ? ` (${plural(keysNotInFile, 'key')} not in this file)` : '';
  return `Also listed, found by earlier runs and not reported before: ${plural(lines, 'change')} of ${plural(keys, 'key')}${outside}`;
}

/** The one line of fill rates: each added column's share of the found rows holding a value (and --fill's cells). */
function fillLine(s: EnrichSummary): string | undefined {
  const rates = Object.entries(s.fillRates ?? {});
  const filled = Object.entries(s.filled ?? {});
  if (rates.length === 0 && filled.length === 0) return undefined;
  const found = s.status.found;
  const share = (n: number) => (found > 0 ? `${Math.round((100 * n) / found)} %` : '-');
  const parts = rates.length
    ? `Fill rate of the ${found === 1 ? 'row' : `${found} rows`} found: ${rates.map(([name, n]) => `${name} ${share(n)}`).join(', ')}`
    : 'Fill rate: no column an answer fills';
  return filled.length ? `${parts}; cells filled: ${filled.map(([column, n]) => `${column} ${n}`).join(', ')}` : parts;
}

/** Cells with bytes that are not UTF-8: copied unchanged into CSV; a JSON Lines or workbook output holds text, U+FFFD in their place. */
function invalidUtf8Line(s: EnrichSummary): string {
  if (s.outputFormat === 'csv') return `Input cells with bytes that are not UTF-8 (copied unchanged): ${s.invalidUtf8Cells}`;
  const output = s.outputFormat === 'xlsx' ? 'workbook' : 'JSON Lines output';
  return `Input cells with bytes that are not UTF-8: ${s.invalidUtf8Cells} (each such byte is U+FFFD in the ${output}, which holds text only; copied unchanged into the error sidecar, and into a CSV output: -o FILE.csv)`;
}
