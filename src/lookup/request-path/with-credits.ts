// The credit reserve on the request path (credits.ts keeps the account): a request starts only
// when its worst-case cost fits above the reserve, and its answer settles what it cost.
import type { BillableOperation } from '../../core/kinds.js';
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
  return async (call) => {
    const op = call.op as BillableOperation;
    const ticket = await credits.tryBegin(op);
    if (!ticket) throw new CreditRefusedError();
    let charged = false;
    try {
      const response = await next(call);
      charged = foundIn(op, response.data);
      return response;
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
  return async (call) => {
    try {
      return await next(call);
    } catch (error) {
      if (!(error instanceof CreditRefusedError)) throw error;
      if (!credits.exhausted) {
        await refreshCredits().catch(() => {});
        try {
          return await next(call);
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
