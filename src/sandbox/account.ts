// The sandbox account: its token (and whether it was revoked), its credit balance and the
// threshold /account/credits reports. Steps 2 and 6 of the server's order decide here, and the
// charge of step 7 is taken here, so the balance has exactly one owner.

import type { Credits } from '../api/types.js';
import { sandboxCredits } from './account-data.js';
import type { SandboxKeyOperation } from './keys.js';
import { intOption, type ResolvedSandboxOptions } from './options.js';
import type { SandboxStats } from './stats.js';

export class SandboxAccount {
  private balance: number;
  private revoked = false;
  private readonly expectedAuth: string;
  private readonly threshold: number;
  private readonly stats: SandboxStats;

  constructor(options: Pick<ResolvedSandboxOptions, 'token' | 'credits' | 'threshold'>, stats: SandboxStats) {
    this.expectedAuth = `Bearer ${options.token}`;
    this.balance = options.credits;
    this.threshold = options.threshold;
    this.stats = stats;
  }

  get credits(): number {
    return this.balance;
  }

  setCredits(n: number): void {
    this.balance = intOption('credits', n, this.balance, 0);
  }

  /** From now on every request gets 401. */
  revoke(): void {
    this.revoked = true;
  }

  /**
   * Step 2: `Authorization` must be exactly `Bearer <token>` (docs/api-behaviour-notes.md, "Error bodies":
   * 401, before the path). A refusal is counted.
   */
  authorize(authorization: string | undefined): boolean {
    if (this.revoked || authorization !== this.expectedAuth) {
      this.stats.unauthorized++;
      return false;
    }
    return true;
  }

  /**
   * Step 6, then the charge of step 7: false (a 402, counted) when the balance is <= 0 or the
   * answer costs more than is left; otherwise the answer is charged its cost (a miss costs 0).
   */
  pay(op: SandboxKeyOperation, key: string, found: boolean, cost: number): boolean {
    if (this.balance <= 0 || cost > this.balance) {
      this.stats.paymentRequired++;
      return false;
    }
    if (found) {
      this.balance -= cost;
      this.stats.creditsCharged += cost;
      const chargeKey = `${op}:${key}`;
      this.stats.charges.set(chargeKey, (this.stats.charges.get(chargeKey) ?? 0) + 1);
      this.stats.chargedAt.set(chargeKey, Date.now());
    }
    return true;
  }

  /** GET /account/credits (2.6) for the live balance. */
  creditsData(): Credits {
    return sandboxCredits(this.balance, this.threshold);
  }
}
