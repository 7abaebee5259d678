// The account side of a run's start: whether the account must be read at all (a re-run whose
// every answer is stored needs no API), and the credit reserve's guard sized from the reading.
import { UnauthorizedError, isTransient } from '../api/errors.js';
import type { Coordinator } from '../cluster/coordinator.js';
import type { AccountReading } from '../lookup/account.js';
import { CreditGuard, SharedCreditGuard, type CreditAccount } from '../lookup/credits.js';
import { countRows, type StoredAnswers } from './count-rows.js';
import { isStreamInput } from './input-wait.js';
import type { RunStop } from './run-stop.js';
import type { EnrichSettings } from './settings.js';

/** Rows counted against the store before the account is read: beyond them, the count waits for the API to fail. */
const GLANCE_ROWS = 100_000;

/** The two ways a run reads its account (open-run.ts). */
export interface AccountReads {
  /** Once, its failure thrown. */
  readAccount(): Promise<AccountReading>;
  /** An API that is down waited for; undefined when the run gave up on it or was stopped. */
  awaitAccount(): Promise<AccountReading | undefined>;
}

/**
 * A re-run whose every answer is stored sends no request: it must not need the API either (an
 * offline laptop, an outage). Told by counting the rows against the store before the account is
 * read, a count that stops at the first key not stored (a run with work to do pays a glance at its
 * first rows) or after GLANCE_ROWS (a re-run of a big file is not read twice when the API answers:
 * only when the account read then fails is the rest counted). A regular file only (stdin or a pipe cannot be read
 * twice), never with --redis (the other workers' claims decide) nor --refresh (every key is asked again).
 * A run with lookups to make waits for an API that is down (awaitAccount); one that gave up on it is
 * `offline`: it sends nothing.
 */
export async function accountOrNone(
  settings: EnrichSettings,
  census: StoredAnswers,
  reads: AccountReads,
): Promise<{ offline: boolean; account: AccountReading }> {
  const awaited = async () => {
    const account = await reads.awaitAccount();
    return account ? { offline: false, account } : { offline: true, account: accountUnread(settings) };
  };
  if (isStreamInput(settings.input) || settings.redis || settings.refresh) return awaited();
  const glance = await countRows(settings, census, { stopAbove: 0, maxRows: GLANCE_ROWS, quiet: true });
  if (glance.lookupsToMake > 0) return awaited();
  if (glance.cutAtRows) {
    try {
      return { offline: false, account: await reads.readAccount() };
    } catch (error) {
      if (error instanceof UnauthorizedError) throw error;
      const whole = await countRows(settings, census, { stopAbove: 0, quiet: true });
      if (whole.lookupsToMake > 0) {
        if (!isTransient(error)) throw error;
        return awaited();
      }
      settings.notice(`no lookup to make: every answer is stored; going on without the API, which could not be read (${(error as Error).message})`);
      return { offline: true, account: accountUnread(settings) };
    }
  }
  settings.notice('no lookup to make: every answer is stored; the account was not read (the API was not asked)');
  return { offline: true, account: accountUnread(settings) };
}

/** The account of a run that sends nothing: no balance read, nothing reserved, the rate as given. */
function accountUnread(settings: EnrichSettings): AccountReading {
  const rpm = settings.rpm ?? 60;
  return { balance: 0, threshold: 0, limits: { rpm, remaining: rpm, resetAt: undefined, bulkConcurrency: undefined }, outOfCredits: false, latencyMs: 0 };
}

/** The reserve guard, alone or shared through Redis; a run that may spend nothing stops here. */
export async function creditAccount(
  account: AccountReading | undefined,
  reserve: number,
  coordinator: Coordinator | undefined,
  stop: RunStop,
  warn: (line: string) => void,
): Promise<CreditAccount> {
  // Not read (nothing will be sent): no balance yet, the reserve not checked against a balance never
  // read. It is kept all the same: a call the run makes after all is refused until a reading says
  // the balance, and then held above --min-credits like any other.
  if (!account) return new CreditGuard({ balance: 0, reserve });
  const options = { balance: account.balance, reserve };
  const credits: CreditAccount = coordinator ? await SharedCreditGuard.create(options, coordinator) : new CreditGuard(options);
  if (account.outOfCredits) {
    warn('The API answered 402 (out of credits) to the account read: no lookups will be made');
    credits.markExhausted();
    stop.stop('credits');
  } else if (credits.atReserve) {
    warn(`The balance (${account.balance}) is at or below the credit reserve (${reserve}): no lookups will be made`);
    credits.stop();
    stop.stop('credits');
  }
  return credits;
}
