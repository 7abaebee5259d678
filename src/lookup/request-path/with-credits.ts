// The credit reserve and the run's budget on the request path (credits.ts keeps the account,
// budget.ts the cap): a request starts only when its worst-case cost fits above the reserve and
// within the budget, and its answer settles what it cost.
import type { BillableOperation } from '../../core/kinds.js';
import type { RunBudget } from '../budget.js';
import { answerCost, type CreditAccount } from '../credits.js';
import { foundIn } from '../outcome.js';
import type { Send } from './request.js';

/** The reserve (or, with `budget`, the run's cap) refused a request: it was not sent. */
export class CreditRefusedError extends Error {
  readonly by: 'credits' | 'budget';
  constructor(by: 'credits' | 'budget' = 'credits') {
    super(by === 'budget' ? 'not looked up: the next lookup could have spent more than --budget' : 'not looked up: the credit balance reached the reserve');
    this.name = 'CreditRefusedError';
    this.by = by;
  }
}

/** Inside the gate: reserve the worst case, send, then settle (a found answer is charged what its content costs). */
export function withCredits(next: Send, credits: CreditAccount, budget?: RunBudget): Send {
  return async (call) => {
    const op = call.op as BillableOperation;
    const ticket = await credits.tryBegin(op);
    if (!ticket) throw new CreditRefusedError('credits');
    if (budget && !budget.tryBegin(ticket.cost)) {
      await credits.finish(ticket, false);
      throw new CreditRefusedError('budget');
    }
    let cost = 0;
    try {
      const response = await next(call);
      if (foundIn(op, response.data)) cost = answerCost(op, response.data, credits.costOf(op));
      return response;
    } finally {
      budget?.finish(ticket.cost, cost);
      await credits.finish(ticket, cost > 0, cost);
    }
  };
}

/**
 * Outside the retries: the estimate errs on the safe side, so a refusal is checked once against
 * the real balance (a fresh /account/credits reading) before the reserve is declared reached. The
 * budget counts this run's own charges, which no reading changes: its refusal stands at once.
 */
export function withReserveCheck(next: Send, credits: CreditAccount, refreshCredits: () => Promise<void>, onReached: () => void): Send {
  return async (call) => {
    try {
      return await next(call);
    } catch (error) {
      if (!(error instanceof CreditRefusedError) || error.by === 'budget') throw error;
      if (!credits.exhausted) {
        await refreshCredits().catch(() => {});
        // A fresh balance that cannot pay for this call above the reserve is the reserve reached:
        // tried again, the call would only wait for its turn at the gate to be refused there.
        if (credits.estimatedBalance - credits.costOf(call.op as BillableOperation) >= credits.reserve) {
          try {
            return await next(call);
          } catch (again) {
            if (!(again instanceof CreditRefusedError) || again.by === 'budget') throw again;
          }
        }
      }
      credits.stop();
      onReached();
      throw error;
    }
  };
}
