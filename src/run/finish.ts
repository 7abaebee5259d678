// The last phase: a last reading of the balance (what the run really spent), the outputs renamed
// into place, the summary, and the run report (--report), which a stopped run writes too.
import type { RunMetrics } from './metrics.js';
import type { RunState } from './open-run.js';
import { writeReport } from '../report/write-report.js';
import { reportOf } from './report-of.js';
import { summaryOf, type EnrichSummary, type SummaryBudget } from './summary.js';

export async function finish(run: RunState, metrics: RunMetrics): Promise<EnrichSummary> {
  let balanceAfter = run.credits.estimatedBalance;
  let exact = run.path.counts.requests === 0;
  const readings = run.path.readings;
  if (!exact && !run.stop.halted && readings) {
    try {
      await readings.refresh();
      balanceAfter = run.credits.estimatedBalance;
      exact = true;
    } catch {
      // The estimate stands; the summary says it is one.
    }
  }
  // The carried changes of keys no row stood for, then the files in place, then what they list is reported.
  await run.listing?.listRest(run.writer, run.settings.warn);
  const files = await run.writer.commit();
  run.listing?.markReported(run.settings.warn);
  const summary = summaryOf(run, metrics, { files, balanceAfter, exact, budgets: await budgetsAtEnd(run) });
  if (run.settings.report) await report(run, summary, run.settings.report);
  return summary;
}

/** The budgets as they stand once this run's charges are committed; none when the ledger cannot be read (the run's failure says why). */
async function budgetsAtEnd(run: RunState): Promise<SummaryBudget[]> {
  if (run.budgets.limits.length === 0) return [];
  try {
    run.store.flush();
    const stop = run.budgets.stopped;
    return (await run.budgets.standings()).map((standing, i) => {
      const stopped = stop?.limit === run.budgets.limits[i];
      return { ...standing, stopped, ...(stopped && stop?.period ? { resetsAt: new Date(stop.period.end).toISOString() } : {}) };
    });
  } catch {
    return [];
  }
}

/** The report, after the outputs: a report that cannot be written is said, and costs the run nothing else. */
async function report(run: RunState, summary: EnrichSummary, file: string): Promise<void> {
  const { settings } = run;
  const fillFields: Record<string, string[]> = {};
  for (const t of run.fill?.targets ?? []) (fillFields[t.columnName] ??= []).push(`${settings.prefix}${t.field}`);
  try {
    await writeReport(
      file,
      reportOf(summary, {
        timeline: run.timeline,
        windowMs: settings.tuning.windowMs,
        accountRpm: run.accountRpm,
        commandLine: settings.commandLine,
        secrets: settings.token === undefined ? [] : [settings.token],
        fillFields,
      }),
    );
  } catch (error) {
    summary.report = undefined;
    settings.warn(`Cannot write the report ${file}: ${(error as Error).message}`);
  }
}
