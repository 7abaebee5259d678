// The last phase: a last reading of the balance (what the run really spent), the outputs renamed
// into place, and the summary.
import type { RunMetrics } from './metrics.js';
import type { PreparedRun } from './prepare.js';
import { summaryOf, type EnrichSummary } from './summary.js';

export async function finish(run: PreparedRun, metrics: RunMetrics): Promise<EnrichSummary> {
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
  const files = await run.writer.commit();
  return summaryOf(run, metrics, { files, balanceAfter, exact });
}
