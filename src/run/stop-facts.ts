// The figures a stop's words name (lookup/stops.ts), read from a run's summary: the summary, its
// one line under -q and the run report say them.
import { periodWords, resetText } from '../core/budget-periods.js';
import { formatDuration } from '../core/duration.js';
import type { StopFacts } from '../lookup/stops.js';
import type { EnrichSummary } from './summary.js';

/** Where an account stop bound, in the outcome's sentence: the reserve, the daily limit, or the budget that bound (`at --budget 200/day`). */
function stoppedAt(s: EnrichSummary): string {
  const bound = s.stoppedBy === 'budget' ? s.budgets?.find((b) => b.stopped) : undefined;
  if (bound) return `at --budget ${bound.budget}`;
  return s.stoppedBy === 'daily_limit' ? "at the account's daily limit" : s.stoppedBy === 'budget' ? 'at --budget' : 'at the credit reserve';
}

/** The figures a stop's words name (lookup/stops.ts). */
export function stopFacts(s: EnrichSummary): StopFacts {
  return {
    at: stoppedAt(s),
    spent: s.stoppedBy === 'budget' ? budgetStopWords(s) : '',
    patience: formatDuration(s.patienceMs),
    unavailableFor: formatDuration(s.apiUnavailableMs),
    apiFailure: s.apiFailure,
  };
}

/** What the budget that stopped the run had spent, and when its period starts again. */
export function budgetStopWords(s: EnrichSummary): string {
  const bound = s.budgets?.find((b) => b.stopped);
  if (!bound) return '';
  if (bound.per === 'run' || !bound.resetsAt) return ` (${bound.spent} credits spent by this run)`;
  const period = { per: bound.per, start: 0, end: Date.parse(bound.resetsAt), key: bound.period ?? '' };
  return ` (${bound.spent} of ${bound.credits} credits spent ${periodWords(period)}; ${resetText(period, Date.parse(s.endedAt))})`;
}
