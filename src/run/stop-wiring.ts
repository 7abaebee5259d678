// What the run says and does as it stops: the lines for an API that goes down and comes back, and
// for the account's stops (the reserve, the budget), and the outside stops wired to the run's one
// RunStop (the caller's abort, a second interrupt, Redis lost).
import type { Coordinator } from '../cluster/coordinator.js';
import { formatDuration } from '../core/duration.js';
import { optionWord } from '../options/option-table.js';
import { budgetStopLine, type BudgetStop } from '../lookup/budget.js';
import type { Availability } from '../lookup/request-path/breaker.js';
import type { RunStop, StopReason } from './run-stop.js';
import type { EnrichSettings } from './settings.js';

/** An API that goes down and comes back is one event: one line each way (docs/cli-contract.md, "An API that fails"). */
export function tellAvailability(event: Availability, settings: EnrichSettings, stop: RunStop): void {
  const patience = formatDuration(settings.patience);
  switch (event.kind) {
    case 'unavailable':
      settings.tellAvailability(
        `The API is unavailable (${event.failure}): holding the rows, one request at a time until it answers, for up to ${optionWord('patience')} ${patience}`,
      );
      return;
    case 'back':
      settings.tellAvailability(`The API is back after ${formatDuration(event.downMs)}: going on at full pace`);
      return;
    case 'gave_up':
      settings.tellAvailability(
        `The API stayed unavailable for ${formatDuration(event.downMs)} (${optionWord('patience')} ${patience}): the rows not looked up are skipped; the same command finishes the work later`,
      );
      stop.stop('api_unavailable');
      return;
  }
}

/**
 * The line said the moment the account stops the run: the rows still queued are written as
 * skipped in a moment, but a run that ends minutes later must not leave the user wondering why it
 * went quiet meanwhile. Every stop the account makes has one (the reserve's, a 402's).
 */
export function accountStopLine(reason: StopReason, reserve: number, budget: BudgetStop | undefined): string | undefined {
  if (reason === 'credits') {
    return `No more lookups: the credit balance reached the reserve (${reserve} credits) or the API answered 402; the rows not looked up are written as skipped (credit_reserve). Add credits and run the same command again to finish`;
  }
  if (reason === 'budget' && budget) return budgetStopLine(budget);
  return undefined;
}

/**
 * The caller's abort is an interrupt (a second: quit), from the run's first request on: an
 * interrupt while the start waits for an API that is down ends the wait.
 */
export function wireInterrupts(settings: EnrichSettings, stop: RunStop): void {
  const signal = settings.signal;
  if (signal?.aborted) stop.stop('interrupt');
  else signal?.addEventListener('abort', () => stop.stop('interrupt'), { once: true });
  if (settings.quit?.aborted) stop.quit();
  else settings.quit?.addEventListener('abort', () => stop.quit(), { once: true });
}

/** Redis lost stops lookups. */
export function wireCoordinator(settings: EnrichSettings, stop: RunStop, coordinator: Coordinator | undefined): void {
  coordinator?.onLost((error) => {
    settings.tellAvailability(error.message);
    stop.stop('redis', error);
  });
  if (coordinator?.lost) stop.stop('redis', coordinator.lost);
}
