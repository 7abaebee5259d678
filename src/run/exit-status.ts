// The exit status a run's summary means (docs/cli-contract.md, "Exit status of `enrich`"): the command
// line exits with it, and the run report names it.
import { STOPS } from '../lookup/stops.js';
import type { EnrichSummary } from './summary.js';

export function exitStatusOf(summary: Pick<EnrichSummary, 'stoppedBy' | 'status' | 'fileErrors' | 'stale'>): number {
  // A run stopped early exits with its reason's status (lookup/stops.ts).
  if (summary.stoppedBy) return STOPS[summary.stoppedBy].exit;
  // Rows skipped (no_key, complete, ...) are not errors: a run whose rows are all answered or skipped exits 0.
  const errors = errorRows(summary);
  if (errors === 0) return 0;
  // Only the file's own problems (keys malformed or refused by the API): scripts may accept 5.
  return errors === summary.fileErrors ? 5 : 2;
}

/** The rows in error, and those written with a stale answer because their refresh failed (an error all the same). */
export function errorRows(summary: Pick<EnrichSummary, 'status' | 'stale'>): number {
  return summary.status.error + (summary.stale?.errors ?? 0);
}
