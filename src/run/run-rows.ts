// The run phase: read → plan → look up → write, rows in input order through the ordered window.
// A row answered synchronously (store, malformed key) is ready at once; the others wait in the
// window, and the reader waits when the window is full or when too many rows wait for the network.
import { LeadEnrichError } from '../api/errors.js';
import { DEFAULTS } from '../options/defaults.js';
import type { BatchLookups, PlannedRow } from '../lookup/batch-lookups.js';
import type { CsvSource } from '../read/index.js';
import type { RowSink } from '../write/row-writer.js';
import { ErrorBudget } from './error-budget.js';
import type { FinishedRow } from '../core/rows.js';
import type { RunMetrics } from './metrics.js';
import { OrderedWindow } from './ordered-window.js';
import type { RunStop } from './run-stop.js';
import { batchLookupsFor } from './prepare.js';
import type { RunState } from './open-run.js';
import { batchesUntilIdle, IDLE_MS, inputName, isStreamInput } from './input-wait.js';
import type { CellFill } from '../write/cell-fill.js';
import type { AnswerChanges } from '../write/answer-changes.js';

export interface RowLoop {
  source: CsvSource;
  lookups: BatchLookups;
  writer: RowSink;
  metrics: RunMetrics;
  /** --fill: each row's filled cells, set before the row is counted and written. */
  fill: CellFill | undefined;
  /** What changed since the earlier answers, set before the row is counted and written (with --changes, also recorded as listed). */
  changes: Pick<AnswerChanges, 'apply'> | undefined;
  stop: RunStop;
  reorderWindow: number;
  /** After a halt, how long rows in flight may still finish. */
  drainTimeoutMs: number;
  /** --max-errors, judged as lookups finish. */
  errorBudget: ErrorBudget | undefined;
  /** Looks at the first batch's plan before any of it is looked up (the key-column warning). */
  onFirstPlan?: ((planned: readonly PlannedRow[]) => void) | undefined;
  /** Whether the input is read as UTF-8 and has shown bytes that are not (their cells are counted). */
  countInvalidUtf8(): boolean;
  /** The gate's concurrency now: rows waiting for the network are bounded by twice that. */
  concurrency(): number;
  /** A stream input (no end of its own): after a halt, reading ends when it stays silent, and this is told. */
  onInputCut?: ((rowsRead: number) => void) | undefined;
}

/** The loop of a prepared run, the same for enrich (its writer) and enrichRows (the caller's loop). */
export function loopOf(run: RunState, metrics: RunMetrics, writer: RowSink): RowLoop {
  const { settings, source } = run;
  return {
    source,
    lookups: batchLookupsFor(run),
    writer,
    metrics,
    fill: run.fill,
    changes: run.listing ?? run.changes,
    stop: run.stop,
    reorderWindow: settings.tuning.reorderWindow,
    drainTimeoutMs: settings.tuning.drainTimeoutMs,
    errorBudget: settings.maxErrors ? new ErrorBudget(settings.maxErrors, run.stop) : undefined,
    countInvalidUtf8: () => source.encoding === 'utf-8' && source.sawInvalidUtf8(),
    concurrency: () => run.gate.stats.concurrency,
    onInputCut: isStreamInput(settings.input)
      ? (rowsRead) =>
          settings.warn(
            `stopped reading ${inputName(settings.input)}: nothing more arrived within ${IDLE_MS / 1000} s of the stop; the rows after row ${rowsRead} were not read, and are not in the outputs`,
          )
      : undefined,
  };
}

export async function runRows(loop: RowLoop): Promise<void> {
  const { source, lookups, metrics, stop } = loop;
  const window = new OrderedWindow<FinishedRow>(loop.reorderWindow);
  // Rows waiting for the network each hold a chain of promises and a place in the limiter's queue;
  // queuing more of them than the gate can have in flight buys nothing but memory. Rows the store
  // answers are not counted: the window alone bounds them.
  const maxWaiting = (): number => Math.max(DEFAULTS.minWaitingRows, 2 * loop.concurrency());
  const batches = loop.onInputCut ? batchesUntilIdle(source, stop.signal, () => loop.onInputCut!(metrics.rowsRead)) : source.batches;
  for await (const batch of batches) {
    const firstRow = metrics.rowsRead + 1;
    metrics.read(batch, loop.countInvalidUtf8());
    const planned = lookups.plan(batch, firstRow);
    metrics.planned(planned.length);
    if (firstRow === 1) loop.onFirstPlan?.(planned);
    for (const plannedRow of planned) {
      const { result } = plannedRow;
      const answer = typeof result === 'function' ? result() : result;
      if (!(answer instanceof Promise)) {
        window.add(answer);
        continue;
      }
      const fallback = () => lookups.interrupted(plannedRow);
      const budget = loop.errorBudget;
      window.addPending(budget ? answer.then((finished) => (budget.observe(finished), finished)) : answer, fallback);
      while (window.pending >= maxWaiting() && !stop.fatal && !stop.halted) {
        await window.waitForAnySettled(stop.signal);
        // A batch of a slow run takes minutes: write what is ready meanwhile (progress too).
        await flush(loop, window, false);
      }
    }
    await flush(loop, window, false);
    if (stop.fatal) break;
  }
  if (!stop.fatal) await flush(loop, window, true);
  if (stop.fatal) {
    // Answers already paid for may still be on their way: give them the drain time to land in
    // the store, so that the run after the new token does not pay for them again.
    await window.settleAll(stop.drainDeadline(loop.drainTimeoutMs));
    throw stop.fatal;
  }
}

/** Writes the ready rows at the head; with `all`, or while the window is full, waits for the head. */
async function flush(loop: RowLoop, window: OrderedWindow<FinishedRow>, all: boolean): Promise<void> {
  const { metrics, stop } = loop;
  for (;;) {
    const ready = window.takeReady();
    for (const row of ready) {
      loop.changes?.apply(row);
      loop.fill?.apply(row);
      metrics.count(row);
    }
    if (!(await written(loop, ready))) return;
    if (stop.fatal || window.size === 0 || (!all && !window.isFull)) return;
    // An interrupt while we wait must not wait for this row's request to time out.
    if (!stop.halted) await window.waitForHead(stop.signal);
    // After a halt, rows in flight get the drain time, then leave as skipped.
    await window.abandonHead(() => stop.drainDeadline(loop.drainTimeoutMs));
    if (stop.fatal) return;
  }
}

/**
 * Hands rows to the writer. An output that cannot be written (a full disk) stops the run as a
 * failure: no new request, and the rows in flight get the drain time so that their answers reach
 * the store (runRows then throws). False when it failed so.
 */
async function written(loop: RowLoop, rows: readonly FinishedRow[]): Promise<boolean> {
  try {
    const drained = loop.writer.writeRows(rows);
    if (drained) await drained;
    return true;
  } catch (error) {
    if (!(error instanceof LeadEnrichError)) throw error;
    loop.stop.stop('failed', error);
    return false;
  }
}
