// The rate a run uses, computed once for the run and its dry run from the settings and what
// /account/limits said.
import type { RateLimitFacts } from '../../api/limits.js';

export interface RatePlan {
  /** Requests per window this run may make. */
  rpm: number;
  /** What the server's current window still allows, as the gate starts with it. */
  facts: Pick<RateLimitFacts, 'remaining' | 'resetAt'>;
}

/**
 * --rpm (or the account's rate). A --rpm below the account's also caps what is left of the
 * current window: the run must not spend the account's whole remaining window at once.
 */
export function rateFor(rpm: number | undefined, limits: RateLimitFacts): RatePlan {
  if (rpm === undefined || rpm >= limits.rpm) return { rpm: rpm ?? limits.rpm, facts: limits };
  return { rpm, facts: { remaining: Math.min(rpm, limits.remaining), resetAt: limits.resetAt } };
}
