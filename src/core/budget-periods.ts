// The budgets a run may be given (docs/cli-contract.md, "Spending over days and months"): N credits
// for this run, a UTC calendar day or a UTC calendar month, and the arithmetic of those periods.
// Every layer names a budget the same way: `200` (this run), `200/day`, `2000/month`.
import { formatDuration } from './duration.js';

export type BudgetPer = 'run' | 'day' | 'month';

export interface BudgetLimit {
  credits: number;
  per: BudgetPer;
}

/** A budget over a calendar period (not the run's own). */
export interface PeriodLimit extends BudgetLimit {
  per: 'day' | 'month';
}

/** One UTC calendar day or month: [start, end) in epoch ms, and its name (`2026-03-14`, `2026-03`). */
export interface Period {
  per: 'day' | 'month';
  start: number;
  end: number;
  key: string;
}

export const DAY_MS = 86_400_000;

/** `200/day` as typed; a run's budget is `200`. */
export function budgetText(limit: BudgetLimit): string {
  return limit.per === 'run' ? String(limit.credits) : `${limit.credits}/${limit.per}`;
}

export function isPeriodLimit(limit: BudgetLimit): limit is PeriodLimit {
  return limit.per !== 'run';
}

/** The UTC day or month `at` falls in. */
export function periodAt(per: 'day' | 'month', at: number): Period {
  const date = new Date(at);
  const year = date.getUTCFullYear();
  const month = date.getUTCMonth();
  if (per === 'month') {
    return { per, start: Date.UTC(year, month, 1), end: Date.UTC(year, month + 1, 1), key: date.toISOString().slice(0, 7) };
  }
  const start = Date.UTC(year, month, date.getUTCDate());
  return { per, start, end: start + DAY_MS, key: date.toISOString().slice(0, 10) };
}

/** The UTC day number of `at` (days since 1970-01-01): how the store keeps a day's total. */
export function dayNumber(at: number): number {
  return Math.floor(at / DAY_MS);
}

/** "on 2026-03-14 (UTC)" / "in 2026-03 (UTC)": the period a line about spending names. */
export function periodWords(period: Pick<Period, 'per' | 'key'>): string {
  return `${period.per === 'day' ? 'on' : 'in'} ${period.key} (UTC)`;
}

/** When the period starts again: "the day resets at 00:00 UTC, in 5h 12m" (the month names its date). */
export function resetText(period: Period, now: number): string {
  const left = formatDuration(Math.max(1000, period.end - now));
  if (period.per === 'day') return `the day resets at 00:00 UTC, in ${left}`;
  return `the month resets on ${new Date(period.end).toISOString().slice(0, 10)} at 00:00 UTC, in ${left}`;
}
