// The credit reserve on the request path (credits.ts keeps the account): a request starts only
// when its worst-case cost fits above the reserve, and its answer settles what it cost.
import type { CreditAccount } from '../credits.js';
import { foundIn } from '../outcome.js';
import type { Send } from './request.js';

/** The reserve refused a request: it was not sent. */
export class CreditRefusedError extends Error {
  constructor() {
    super('not looked up: the credit balance reached the reserve');
    this.name = 'CreditRefusedError';
  }
}

/** Inside the gate: reserve the worst case, send, then settle (a found answer is charged). */
export function withCredits(next: Send, credits: CreditAccount): Send {
  return async (request) => {
    const ticket = await credits.tryBegin(request.op);
    if (!ticket) throw new CreditRefusedError();
    let charged = false;
    try {
      const data = await next(request);
      charged = foundIn(request.op, data);
      return data;
    } finally {
      await credits.finish(ticket, charged);
    }
  };
}

/**
 * Outside the retries: the estimate errs on the safe side, so a refusal is checked once against
 * the real balance (a fresh /account/credits reading) before the reserve is declared reached.
 */
export function withReserveCheck(next: Send, credits: CreditAccount, refreshCredits: () => Promise<void>, onReached: () => void): Send {
  return async (request) => {
    try {
      return await next(request);
    } catch (error) {
      if (!(error instanceof CreditRefusedError)) throw error;
      if (!credits.exhausted) {
        await refreshCredits().catch(() => {});
        try {
          return await next(request);
        } catch (again) {
          if (!(again instanceof CreditRefusedError)) throw again;
        }
      }
      credits.stop();
      onReached();
      throw error;
    }
  };
}
