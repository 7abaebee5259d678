// One run of the data path, as phases (docs/architecture.md):
//   prepare (options, input header, store, account, gate, writer) → run (read → plan → look up →
//   write, through the ordered window) → finish (last balance, outputs in place, summary).
import { keyWarning } from '../plan/key-warning.js';
import type { EnrichOptions } from './enrich-options.js';
import { resolveOptions } from './settings.js';
import { finish } from './finish.js';
import { RunMetrics } from './metrics.js';
import { prepare } from './prepare.js';
import { Resources } from './resources.js';
import { loopOf, runRows } from './run-rows.js';
import { progressOf, type EnrichSummary } from './summary.js';

export type { EnrichOptions, EnrichProgress, EnrichTuning } from './enrich-options.js';
export type { EnrichSummary } from './summary.js';

/** Runs the whole pipeline and returns its summary. Throws only for fatal errors (config, input, 401). */
export async function enrich(options: EnrichOptions): Promise<EnrichSummary> {
  const startedAt = Date.now();
  const settings = resolveOptions(options);
  const resources = new Resources();
  let failed = true;
  try {
    const run = await prepare(settings, resources);
    const metrics = new RunMetrics(run.targets.length === 1 ? run.targets[0]!.kind : undefined, startedAt, run.fillRates);
    let ticks: NodeJS.Timeout | undefined;
    if (settings.onProgress) {
      const onProgress = settings.onProgress;
      ticks = setInterval(() => onProgress(progressOf(run, metrics)), settings.tuning.progressIntervalMs);
      ticks.unref();
      resources.defer(() => clearInterval(ticks));
    }
    await runRows({
      ...loopOf(run, metrics, run.writer),
      onFirstPlan: (planned) => {
        const unusable = (code: string) => planned.filter((p) => typeof p.result !== 'function' && p.result.errorCode === code).length;
        const warning = keyWarning({ rows: planned.length, invalidRows: unusable('invalid_input'), noKeyRows: unusable('no_key') }, run.source, run.targets);
        if (warning) settings.warn(`${warning}; looking up the rows that have one`);
      },
    });
    const summary = await finish(run, metrics);
    // The last snapshot, after the last balance reading: every row written, the input read to its
    // end (the progress's 100 %), and the credits spent the summary says (a cost learned only from
    // that reading would otherwise leave the last frame above the summary's figure).
    clearInterval(ticks);
    settings.onProgress?.({ ...progressOf(run, metrics), creditsSpent: summary.credits.spent, final: true });
    failed = false;
    return summary;
  } finally {
    await resources.release(failed);
  }
}
