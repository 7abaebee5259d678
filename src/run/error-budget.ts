// --max-errors: how many looked-up rows may end in `error` before the run stops looking up
// (docs/cli-contract.md: "stop looking up once more than N rows (or N % of the rows looked up,
// judged after 50) are error; exit 4"). Rows are judged as their lookups finish, not as they are
// written. Rows that were not looked up (metrics.ts says which were, for the summary too) count for
// nothing: a malformed key (`invalid_input`) is the input's fault, not the API's, rows skipped by a
// stop were not tried, and a stored answer cost no request. A key the API refused
// (`bad_request`) was looked up, but it is the file's problem too: never an error here. A dead API
// never reaches this budget at all: its rows are held (request-path/breaker.ts). A row written
// with a stale answer because its refresh failed counts as the error it is.
import { effectiveStatus, type FinishedRow } from '../core/rows.js';
import { FILE_PROBLEMS, lookedUp } from './metrics.js';
import type { RunStop } from './run-stop.js';

export type MaxErrors = { count: number } | { percent: number };

/** Rows that must be looked up before a percentage is judged. */
export const PERCENT_JUDGED_AFTER = 50;

export class ErrorBudget {
  readonly #limit: MaxErrors;
  readonly #stop: RunStop;
  #lookedUp = 0;
  #errors = 0;

  constructor(limit: MaxErrors, stop: RunStop) {
    this.#limit = limit;
    this.#stop = stop;
  }

  /** A row whose lookup finished. */
  observe(row: FinishedRow): void {
    if (!lookedUp(row)) return;
    this.#lookedUp += 1;
    // The file's own problems (a malformed key, one the API refuses) are not the API's failures.
    if (effectiveStatus(row) !== 'error' || FILE_PROBLEMS.has(row.errorCode ?? '')) return;
    this.#errors += 1;
    if (this.#exceeded()) this.#stop.stop('max_errors');
  }

  #exceeded(): boolean {
    if ('count' in this.#limit) return this.#errors > this.#limit.count;
    return this.#lookedUp >= PERCENT_JUDGED_AFTER && this.#errors * 100 > this.#limit.percent * this.#lookedUp;
  }
}
