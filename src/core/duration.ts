// Durations for options such as --max-age and `cache prune --older-than`.
// A bare number is rejected: "30" could mean seconds, minutes or days, and guessing wrong with a
// cache age either wastes credits (too short) or serves stale answers (too long).

import { ConfigError } from '../api/errors.js';
import { RuleBroken } from './rule.js';

const UNIT_MS = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
} as const;

type Unit = keyof typeof UNIT_MS;

// One part: a non-negative number (decimals allowed: "1.5h") and a lower-case unit. `ms` comes
// before `m` in the alternation so "500ms" is not read as "500m" followed by junk. Upper case is
// rejected on purpose: "1M" reads as a month to many people.
const PART = /(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)/y;

export const DURATION_RULE = 'must be a duration such as 30d, 12h or 15m';

/**
 * A duration such as `30d`, `12h`, `15m`, `45s`, `500ms`, `2w`, `1d12h` or `1d 12h` in milliseconds
 * (rounded to a whole millisecond). RuleBroken for anything else (options/option-table.ts words it).
 */
export function durationMs(raw: unknown): number {
  const input = typeof raw === 'string' ? raw.trim() : '';
  const fail = (hint = ''): never => {
    throw new RuleBroken(DURATION_RULE, raw, false, hint);
  };
  if (input === '') fail();
  if (/^\d+(?:\.\d+)?$/.test(input)) fail(' (a bare number is ambiguous: add a unit, one of ms, s, m, h, d, w)');

  let total = 0;
  let index = 0;
  while (index < input.length) {
    PART.lastIndex = index;
    const match = PART.exec(input);
    if (match === null) fail();
    const [whole, amount, unit] = match as unknown as [string, string, Unit];
    total += Number(amount) * UNIT_MS[unit];
    index += whole.length;
    // Allow spaces between parts ("2d 3h", the form formatDuration prints).
    while (input[index] === ' ') index++;
  }
  if (!Number.isFinite(total) || total > Number.MAX_SAFE_INTEGER) fail(' (too large)');
  return Math.round(total);
}

/** durationMs for a command line's flag, `what` (e.g. `--older-than`): a ConfigError naming it. */
export function parseDuration(text: string, what: string): number {
  try {
    return durationMs(text);
  } catch (error) {
    if (!(error instanceof RuleBroken)) throw error;
    throw new ConfigError(`Invalid option ${what}: ${error.rule}, got '${String(text)}'${error.hint}`);
  }
}

const FORMAT_UNITS: ReadonlyArray<[string, number]> = [
  ['d', UNIT_MS.d],
  ['h', UNIT_MS.h],
  ['m', UNIT_MS.m],
  ['s', UNIT_MS.s],
  ['ms', UNIT_MS.ms],
];

/**
 * A short human form for output: the two most significant non-zero units, truncated
 * (`2d 3h`, `45s`, `1m 30s`, `500ms`, `0s`). Days are the largest unit so ages read like the
 * `30d` people type. Not an exact round trip for durations with more than two units.
 */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return String(ms);
  if (ms < 0) return `-${formatDuration(-ms)}`;
  let rest = Math.floor(ms);
  if (rest === 0) return '0s';
  const parts: string[] = [];
  for (const [unit, size] of FORMAT_UNITS) {
    const count = Math.floor(rest / size);
    if (count > 0) {
      parts.push(`${count}${unit}`);
      rest -= count * size;
    } else if (parts.length > 0) {
      // A zero in the middle ends the output: "1d 0h 5m" would print as "1d".
      break;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}
