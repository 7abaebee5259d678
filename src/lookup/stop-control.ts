// What the look-up step asks of the run's one stop (run/run-stop.ts owns it): whether a lookup may
// start, what a row that may not becomes, and how a failure stops the run. Declared here, below
// the run, so that lookup/ never imports run/.
import type { LeadEnrichError } from '../api/errors.js';
import type { Unanswered } from './outcome.js';

export type { StoppedBy, StopReason } from './stops.js';
import type { StopReason } from './stops.js';

export interface StopControl {
  /** Aborted once the run halts (interrupt, 401): waits give up, rows in flight drain. */
  readonly signal: AbortSignal;
  readonly halted: boolean;
  /** No queued request and no retry may be sent any more (every stop but the credit reserve's and the budget's). */
  readonly requestsStopped: boolean;
  /** No lookup may start any more, nor a retry waiting for the gate be sent (any stop: the gate drops what waits). */
  readonly lookupsStopped: boolean;
  /** The run gave up on an API that stayed down past --patience. */
  readonly apiUnavailable: boolean;
  /** Why Redis was lost, with --redis. */
  readonly redisLost: LeadEnrichError | undefined;
  /** What a lookup that may not start now becomes (and the stop records that it turned a row away), or undefined. */
  refusal(): Unanswered | undefined;
  /** What a lookup refused for `reason` becomes; recorded as a row turned away for it. */
  turnAway(reason: 'credits' | 'budget'): Unanswered;
  stop(reason: StopReason, error?: LeadEnrichError): void;
}
