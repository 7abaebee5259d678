// A progress frame as text: one terminal line that fits the terminal's width, or one plain line
// for a log. The terminal line keeps its fields in one order and, when they do not all fit,
// leaves out the least important first (the bar, then the counts, ... the rows done last).
import { formatDuration } from '../core/duration.js';
import type { ProgressFrame } from './progress-model.js';

/** HH:MM:SS in local time. */
export function clockTime(epochMs: number): string {
  return new Date(epochMs).toTimeString().slice(0, 8);
}

export function formatRate(rowsPerSecond: number): string {
  const n = rowsPerSecond;
  return `${n > 0 && n < 10 ? n.toFixed(1) : Math.round(n)} rows/s`;
}

/** Why no row moves: the API is down, or a 429 paused the run until the rate limit's next window. */
function waiting(frame: ProgressFrame): string | undefined {
  if (frame.apiUnavailableSince !== undefined) return `API unavailable since ${clockTime(frame.apiUnavailableSince)}`;
  if (frame.rateLimitedUntil !== undefined) return `rate-limited until ${clockTime(frame.rateLimitedUntil)}`;
  return undefined;
}

/** "ETA 1m 5s": always a duration with its unit. */
function eta(frame: ProgressFrame): string | undefined {
  return frame.etaMs === undefined ? undefined : `ETA ${formatDuration(frame.etaMs)}`;
}

function rows(frame: ProgressFrame): string {
  if (frame.total === undefined) return `${frame.done} rows`;
  return `${String(frame.percent).padStart(3)}% ${frame.done}/${frame.exact ? '' : '~'}${frame.total} rows`;
}

interface Field {
  text: string | undefined;
  /** Lower is more important: kept longest. */
  rank: number;
}

const SEPARATOR = ' | ';
const BAR_MIN = 8;
const BAR_MAX = 30;

/** The fields in the order shown, each with its rank. */
function fields(frame: ProgressFrame): Field[] {
  return [
    { text: rows(frame), rank: 0 },
    { text: waiting(frame), rank: 1 },
    { text: eta(frame), rank: 2 },
    { text: formatRate(frame.rowsPerSecond), rank: 3 },
    { text: frame.inFlight > 0 ? `${frame.inFlight} in flight` : undefined, rank: 5 },
    { text: `found ${frame.found}, not found ${frame.notFound}, skipped ${frame.skipped}`, rank: 7 },
    { text: frame.errors > 0 ? `errors ${frame.errors}` : undefined, rank: 4 },
    { text: `credits ${frame.credits}`, rank: 6 },
  ];
}

function bar(percent: number, width: number): string {
  const filled = Math.round((percent / 100) * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

/** The bar's width: a steady share of the terminal, so that it does not jump as fields come and go. */
function barWidth(columns: number): number {
  return Math.min(BAR_MAX, Math.max(BAR_MIN, Math.floor(columns / 6)));
}

/**
 * The terminal line, at most `columns - 1` characters (the last column is left free: a line that
 * fills it leaves some terminals' cursor waiting to wrap). Line wrapping is never turned off.
 * The bar goes first when room is short, then the fields by rank.
 */
export function terminalLine(frame: ProgressFrame, columns: number): string {
  const room = Math.max(20, columns) - 1;
  let kept = fields(frame).filter((f): f is Field & { text: string } => f.text !== undefined);
  const width = (list: typeof kept) => list.reduce((sum, f) => sum + f.text.length, 0) + SEPARATOR.length * Math.max(0, list.length - 1);
  while (kept.length > 1 && width(kept) > room) {
    const worst = Math.max(...kept.map((f) => f.rank));
    kept = kept.filter((f) => f.rank !== worst);
  }
  const line = kept.map((f) => f.text).join(SEPARATOR);
  if (line.length > room) return `${line.slice(0, room - 1)}…`;
  const size = barWidth(columns);
  if (frame.percent === undefined || line.length + size + 1 > room) return line;
  // After the percentage (the first four characters): " 42% ████░░░░ 1050/~2500 rows | ...".
  return `${line.slice(0, 4)} ${bar(frame.percent, size)}${line.slice(4)}`;
}

/** One line for a log (no terminal): every field, in words. */
export function plainLine(frame: ProgressFrame): string {
  const of = frame.total === undefined ? '' : ` of ${frame.exact ? '' : 'about '}${frame.total} (${frame.percent}%)`;
  const parts = [`${frame.done} rows done${of}`];
  const held = waiting(frame);
  if (held) parts.push(held);
  const left = eta(frame);
  if (left) parts.push(left);
  parts.push(`${formatRate(frame.rowsPerSecond)} looked up`);
  if (frame.inFlight > 0) parts.push(`${frame.inFlight} ${frame.inFlight === 1 ? 'lookup' : 'lookups'} in flight`);
  const counts = `found ${frame.found}, not found ${frame.notFound}, errors ${frame.errors}, skipped ${frame.skipped}, credits ${frame.credits}`;
  return `lead-enrich: ${parts.join(', ')}; ${counts}`;
}
