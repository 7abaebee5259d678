// The account reads before the first lookup (the balance, and the rate window), shared by the run
// and its dry run. They go down the request path before its gate is open: a 429 here waits for
// the server's hint (with-pause.ts) and tries again; other transient failures are retried as any
// call. A run's (`atStart`) go through the breaker too: an API down when it starts is an outage,
// waited for up to --patience (docs/cli-contract.md, "Every night, unattended").
import { LeadEnrichError, PaymentRequiredError, UnauthorizedError } from '../api/errors.js';
import { restated } from '../api/restated.js';
import { parseServiceLimits, type RateLimitFacts } from '../api/limits.js';
import type { Credits, ServiceLimits } from '../api/types.js';
import type { RequestPath } from './request-path/request-path.js';

export interface AccountReading {
  balance: number;
  /** low_credit_balance_min_threshold: the default reserve. */
  threshold: number;
  limits: RateLimitFacts;
  /** The API answered 402 to a read: a balance of nothing (docs/api-behaviour-notes.md, "Credits"). */
  outOfCredits: boolean;
  /** How long the limits read took: a first measure of the latency. */
  latencyMs: number;
}

export async function readAccount(
  path: RequestPath,
  rpm: number | undefined,
  options: { atStart?: boolean; now?: () => number } = {},
): Promise<AccountReading> {
  const now = options.now ?? Date.now;
  const call = (op: 'credits' | 'limits') => (options.atStart ? path.callAtStart(op, {}) : path.call(op, {}));
  // A server at zero balance may answer 402 to everything: that is a balance of nothing, not a
  // fatal error. No lookup is made; every row is still written.
  let outOfCredits = false;
  const credits: Pick<Credits, 'total_remaining_credits' | 'low_credit_balance_min_threshold'> = await call('credits')
    .then((response) => response.data as Credits)
    .catch((error: unknown) => {
      if (!(error instanceof PaymentRequiredError)) return rethrowStartup(error);
      outOfCredits = true;
      return { total_remaining_credits: 0, low_credit_balance_min_threshold: 0 };
    });
  const asked = now();
  const limits = await call('limits').then(
    (response) => parseServiceLimits(response.data as ServiceLimits),
    (error: unknown): RateLimitFacts => {
      // Out of credits the rate does not matter: nothing will be sent.
      if (!(error instanceof PaymentRequiredError)) return rethrowStartup(error);
      outOfCredits = true;
      return { rpm: rpm ?? 1, remaining: 0, resetAt: undefined, bulkConcurrency: undefined };
    },
  );
  return {
    balance: credits.total_remaining_credits,
    threshold: credits.low_credit_balance_min_threshold ?? 0,
    limits,
    outOfCredits,
    latencyMs: now() - asked,
  };
}

/** The failure said as the start's, of its own class still (a NetworkError is one whatever path threw it). */
function rethrowStartup(error: unknown): never {
  if (error instanceof UnauthorizedError) throw error;
  if (error instanceof LeadEnrichError) {
    throw restated(error, `Cannot read the account before starting: ${error.message}`);
  }
  throw error;
}
