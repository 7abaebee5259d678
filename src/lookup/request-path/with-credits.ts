// The credit reserve and the run's budgets on the request path (credits.ts keeps the account,
// budget.ts the budgets and the ledger): a request starts only when its worst-case cost fits above
// the reserve and within every budget, and its answer settles what it cost.
import type { BillableOperation } from '../../core/kinds.js';
import type { BudgetTicket, Budgets } from '../budget.js';
import { answerCost, budgetHold, type CreditAccount, type CreditTicket } from '../credits.js';
import { foundIn } from '../outcome.js';
import type { Send } from './request.js';

/** The reserve (or, with `budget`, one of the run's budgets) refused a request: it was not sent. */
export class CreditRefusedError extends Error {
  readonly by: 'credits' | 'budget';
  constructor(by: 'credits' | 'budget' = 'credits') {
    super(by === 'budget' ? 'not looked up: the next lookup could have spent more than --budget' : 'not looked up: the credit balance reached the reserve');
    this.name = 'CreditRefusedError';
    this.by = by;
  }
}

/**
 * Inside the gate: reserve the worst case against the reserve and every budget, send, then settle
 * (a found answer is charged what its content costs, and recorded in the ledger).
 */
export function withCredits(next: Send, credits: CreditAccount, budgets?: Budgets): Send {
  return async (call) => {
    const op = call.op as BillableOperation;
    const ticket = await credits.tryBegin(op);
    if (!ticket) throw new CreditRefusedError('credits');
    const held = budgets && (await holdOrRelease(budgets, ticket, credits));
    let cost = 0;
    try {
      const response = await next(call);
      if (foundIn(op, response.data)) cost = answerCost(op, response.data, credits.costOf(op));
      return response;
    } finally {
      if (held) await budgets!.finish(held, cost);
      await credits.finish(ticket, cost > 0, cost);
    }
  };
}

/** Holds the call's worst case against every budget; a refusal (or a ledger that failed: Redis lost) sends nothing, and the credit reservation goes. */
async function holdOrRelease(budgets: Budgets, ticket: CreditTicket, credits: CreditAccount): Promise<BudgetTicket> {
  let held: BudgetTicket | undefined;
  try {
    held = await budgets.tryBegin(ticket.op, budgetHold(ticket.op, ticket.cost));
  } finally {
    if (!held) await credits.finish(ticket, false);
  }
  if (!held) throw new CreditRefusedError('budget');
  return held;
}

/**
 * Outside the retries: the estimate errs on the safe side, so a refusal is checked once against
 * the real balance (a fresh /account/credits reading) before the reserve is declared reached. A
 * budget counts charges, which no reading changes: its refusal stands at once.
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
