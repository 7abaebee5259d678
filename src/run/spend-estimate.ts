// What a run may spend, at least, for the question asked before a costly run in a terminal. The
// dry run's count, cut short: it stops reading once the lookups it has met could cost more than
// the threshold, so the question costs a glance at a big file, never a whole pass over it.
import { PUBLISHED_FOUND_COST } from '../lookup/credits.js';
import type { EnrichOptions } from './enrich-options.js';
import { countRows } from './count-rows.js';
import { isStreamInput } from './input-wait.js';
import { openStore, storedAnswers } from './open-run.js';
import { Resources } from './resources.js';
import { resolveOptions } from './settings.js';

export interface SpendEstimate {
  /** Lookups counted (not stored yet), at least this many when `more` is set. */
  lookups: number;
  /** Those lookups at the published cost of a found lead: the most they may cost. */
  credits: number;
  /** The count stopped early, past the threshold: the run may need more lookups still. */
  more: boolean;
}

/** Undefined for an input that cannot be read twice (stdin, a named pipe, a stream): nothing can be told before the run. */
export async function spendEstimate(options: EnrichOptions, aboveCredits: number, service: string): Promise<SpendEstimate | undefined> {
  const settings = resolveOptions(options);
  if (isStreamInput(settings.input)) return undefined;
  const resources = new Resources();
  try {
    const store = openStore(settings, resources, false);
    const counted = await countRows(settings, storedAnswers(settings, store, settings.service ?? service), {
      stopAbove: Math.floor(aboveCredits / PUBLISHED_FOUND_COST),
      quiet: true,
    });
    return { lookups: counted.lookupsToMake, credits: counted.lookupsToMake * PUBLISHED_FOUND_COST, more: counted.cut };
  } finally {
    await resources.release(false);
  }
}
