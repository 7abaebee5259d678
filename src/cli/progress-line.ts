// A progress frame as text: one terminal line that fits the terminal's width, or one plain line
// for a log. The terminal line is made of slots, each of a fixed width at a given terminal width,
// always in the same order: a field never jumps or vanishes from one frame to the next (only a
// resize or a total that gains a digit moves them). Which slots are shown depends on the width
// alone, never on what they hold: when they do not all fit, the least important go first (the
// counts, the lookups in flight, the bar, the credits ... the rows done last).
import { formatDuration } from '../core/duration.js';
import type { ProgressFrame } from './progress-model.js';

/** HH:MM:SS in local time. */
export function clockTime(epochMs: number): string {
  return new Date(epochMs).toTimeString().slice(0, 8);
}

/** One format for every rate (progress and summary): one decimal, "10.0 rows/s", never "10" beside "9.9". */
export function formatRate(rowsPerSecond: number): string {
  return `${rowsPerSecond.toFixed(1)} rows/s`;
}

/** "1 row", "2 rows": the count with its noun. */
export function rowsWord(n: number): string {
  return `${n} ${n === 1 ? 'row' : 'rows'}`;
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

function credits(frame: ProgressFrame): string {
  return `${frame.credits} credits spent`;
}

function counts(frame: ProgressFrame): string {
  return `found ${frame.found}, not found ${frame.notFound}, errors ${frame.errors}, skipped ${frame.skipped}`;
}

interface Slot {
  text: string;
  /** Characters the slot takes, whatever it holds now. */
  width: number;
  /** Lower is more important: kept longest. */
  rank: number;
}

const SEPARATOR = ' | ';
const BAR_MIN = 8;
const BAR_MAX = 30;
/** "API unavailable since 12:00:01": the pace slot's widest text (the rate and the ETA take less). */
const PACE_WIDTH = 30;
const RATE_WIDTH = 12;
/** Up to a million credits, a thousand lookups in flight, before the slots grow. */
const CREDITS_WIDTH = '999999 credits spent'.length;
const IN_FLIGHT_WIDTH = '999 in flight'.length;

/** "  4% 123/~2500 rows": the rows done padded to the total's digits, a place kept for the "~". */
function rowsSlot(frame: ProgressFrame): Slot {
  if (frame.total === undefined) {
    const text = `${frame.done} rows`;
    return { text, width: Math.max(text.length, 12), rank: 0 };
  }
  const digits = String(frame.total).length;
  const text = `${String(frame.percent).padStart(3)}% ${String(frame.done).padStart(digits)}/${frame.exact ? '' : '~'}${frame.total} rows`;
  return { text, width: 4 + 1 + 2 * digits + 2 + 5, rank: 0 };
}

/** The rate and the ETA, or why no row moves: one slot, so that a pause moves no other field. */
function paceSlot(frame: ProgressFrame): Slot {
  const held = waiting(frame);
  const left = eta(frame);
  const text = held ?? (left ? `${formatRate(frame.rowsPerSecond).padEnd(RATE_WIDTH)}${SEPARATOR}${left}` : formatRate(frame.rowsPerSecond));
  return { text, width: PACE_WIDTH, rank: 1 };
}

/** The slots in the order shown. */
function slots(frame: ProgressFrame): Slot[] {
  const digits = String(Math.max(frame.total ?? 0, frame.done)).length;
  return [
    rowsSlot(frame),
    paceSlot(frame),
    { text: credits(frame), width: CREDITS_WIDTH, rank: 2 },
    { text: `${frame.inFlight} in flight`, width: IN_FLIGHT_WIDTH, rank: 4 },
    { text: counts(frame), width: 'found , not found , errors , skipped '.length + 4 * digits, rank: 5 },
  ];
}

function bar(percent: number, width: number): string {
  const filled = Math.round((percent / 100) * width);
  return `${'█'.repeat(filled)}${'░'.repeat(width - filled)}`;
}

/** The bar's width: a steady share of the terminal, so that it does not jump with the numbers. */
function barWidth(columns: number): number {
  return Math.min(BAR_MAX, Math.max(BAR_MIN, Math.floor(columns / 6)));
}

/** What goes first when the slots do not all fit: the counts, the lookups in flight, the bar, the credits, the pace. */
const DROPS: ReadonlyArray<number | 'bar'> = [5, 4, 'bar', 2, 1];

/**
 * The terminal line, at most `columns - 1` characters (the last column is left free: a line that
 * fills it leaves some terminals' cursor waiting to wrap). Line wrapping is never turned off.
 */
export function terminalLine(frame: ProgressFrame, columns: number): string {
  const room = Math.max(20, columns) - 1;
  const size = frame.percent === undefined ? 0 : barWidth(columns) + 1;
  const widthOf = (kept: Slot[], withBar: boolean) => kept.reduce((sum, s) => sum + s.width, 0) + SEPARATOR.length * (kept.length - 1) + (withBar ? size : 0);
  let kept = slots(frame);
  let withBar = size > 0;
  for (const drop of DROPS) {
    if (widthOf(kept, withBar) <= room) break;
    if (drop === 'bar') withBar = false;
    else kept = kept.filter((s) => s.rank !== drop);
  }
  const line = kept
    .map((s, i) => (i === kept.length - 1 ? s.text : s.text.padEnd(s.width)))
    .join(SEPARATOR)
    .trimEnd();
  if (line.length > room) return `${line.slice(0, room - 1)}…`;
  if (!withBar || frame.percent === undefined) return line;
  // After the percentage (the first four characters): " 42% ████░░░░ 1050/~2500 rows | ...".
  return `${line.slice(0, 4)} ${bar(frame.percent, size - 1)}${line.slice(4)}`;
}

/** One line for a log (no terminal): every field, in words. */
export function plainLine(frame: ProgressFrame): string {
  const of = frame.total === undefined ? '' : ` of ${frame.exact ? '' : 'about '}${frame.total} (${frame.percent}%)`;
  const parts = [`${rowsWord(frame.done)} done${of}`];
  const held = waiting(frame);
  if (held) parts.push(held);
  const left = eta(frame);
  if (left) parts.push(left);
  parts.push(`${formatRate(frame.rowsPerSecond)} looked up`);
  if (frame.inFlight > 0) parts.push(`${frame.inFlight} ${frame.inFlight === 1 ? 'lookup' : 'lookups'} in flight`);
  return `lead-enrich: ${parts.join(', ')}; ${counts(frame)}; ${credits(frame)}`;
}
