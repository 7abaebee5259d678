// What happened on a night, as the conditions table counts it: what was drawn and took effect
// (an outage that the runs met, a kill that landed, a disk that filled), read from the runs and the
// sandbox's counters, not from the plan alone.
import { DAY_MS } from './plan.js';

/** The conditions of the table, in its order; `calendar` ones come from the dates, not the seed. */
export const CONDITIONS = [
  ['down at start', 'the API down at the start'],
  ['down mid-run', 'the API down for a while mid-run'],
  ['past patience', 'a run stopped: the API down past --patience (exit 2)'],
  ['flaky', 'flaky answers (5xx, resets, bad bodies)'],
  ['daily limit', 'the daily limit reached (exit 3)'],
  ['reserve', 'the credit reserve reached (exit 3)'],
  ['day budget', 'the day budget reached (exit 3)'],
  ['month budget', 'the month budget reached (exit 3)'],
  ['slow', 'slow answers'],
  ['overlap', "the same command again while the night's runs (exit 1: output in use)"],
  ['second line', 'the other cron line (no --changes) before the nightly one'],
  ['side by side', 'the other cron line and the nightly one at once'],
  ['killed', 'a run killed with SIGKILL'],
  ['store full', 'a full disk under the store (exit 1)'],
  ['outputs full', 'a full disk under the outputs (exit 1)'],
  ['midnight', 'a run across midnight UTC'],
  ['month end', 'a run across a month end'],
  ['contacts', 'the contacts file changed'],
  ['malformed', 'a malformed address in the file (exit 5)'],
  ['damaged', 'a stored answer damaged (not JSON) before the runs'],
  ['feb end', 'a night on the last day of February', 'calendar'],
  ['30-day end', 'a night on the last day of a 30-day month', 'calendar'],
  ['31-day end', 'a night on the last day of a 31-day month', 'calendar'],
  ['leap day', 'a night on 29 February', 'calendar'],
];

const dayOf = (ms) => Math.floor(ms / DAY_MS);
const monthOf = (ms) => new Date(ms).toISOString().slice(0, 7);

/** The sandbox counters the table reads a difference of. */
export function countersOf(sandbox) {
  return { outage: sandbox.stats.outage.requests, faults: Object.values(sandbox.stats.faults).reduce((a, b) => a + b, 0) };
}

export function conditionsOf(night, runs, before, after, hasMalformed, damaged) {
  const seen = new Set();
  const stopped = (by) => runs.some((run) => run.json?.stoppedBy === by);
  const budgetStopped = (per) => runs.some((run) => run.json?.budgets?.some((b) => b.per === per && b.stopped));
  const fatal = (code) => runs.some((run) => run.status === 1 && run.json?.error?.code === code);
  if (after.outage > before.outage) seen.add(night.outage?.at === 'start' ? 'down at start' : 'down mid-run');
  if (stopped('api_unavailable')) seen.add('past patience');
  if (after.faults > before.faults) seen.add('flaky');
  if (stopped('daily_limit')) seen.add('daily limit');
  if (stopped('credits')) seen.add('reserve');
  if (budgetStopped('day')) seen.add('day budget');
  if (budgetStopped('month')) seen.add('month budget');
  if (night.latency && !night.overlap && !night.kill) seen.add('slow');
  if (runs.some((run) => run.command === 'main again' && run.json?.error?.code === 'output_locked')) seen.add('overlap');
  if (runs.some((run) => run.command === 'second')) seen.add(night.secondOverlap ? 'side by side' : 'second line');
  if (runs.some((run) => run.killed)) seen.add('killed');
  if (night.diskFull?.disk === 'store' && (fatal('store_failed') || fatal('config'))) seen.add('store full');
  if (night.diskFull?.disk === 'outputs' && fatal('unwritable_output')) seen.add('outputs full');
  if (runs.some((run) => dayOf(run.startedAt) !== dayOf(run.endedAt))) seen.add('midnight');
  if (runs.some((run) => monthOf(run.startedAt) !== monthOf(run.endedAt))) seen.add('month end');
  if (night.n > 0 && (night.contacts.add || night.contacts.remove || night.contacts.edit)) seen.add('contacts');
  if (hasMalformed) seen.add('malformed');
  if (damaged) seen.add('damaged');
  const date = new Date(night.date);
  const length = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 0)).getUTCDate();
  if (length === date.getUTCDate()) seen.add(length < 30 ? 'feb end' : `${length}-day end`);
  if (date.getUTCMonth() === 1 && date.getUTCDate() === 29) seen.add('leap day');
  return seen;
}
