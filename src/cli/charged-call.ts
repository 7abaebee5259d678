// One call of `lookup`, `mx` or `whois`, counted as a run counts its calls (docs/cli-contract.md,
// "Spending over days and months": every charged call counts). It holds its worst case in the
// ledger of the store the command would use (--store, else LEAD_ENRICH_STORE, else the default
// store; against --sandbox the sandbox's own) against the day and month budgets given (--budget,
// else the config file's `budget`), and is refused before anything is sent when it could pass one:
// exit 3, one line. What it is charged is recorded there, so the nightly run's budgets count it.
// A budget for one run (`N`) is a run's: a single call is held to the day and month budgets only.
import { randomUUID } from 'node:crypto';
import { BudgetRefusedError } from '../api/errors.js';
import { isPeriodLimit } from '../core/budget-periods.js';
import type { BillableOperation } from '../core/kinds.js';
import { budgetCallLine, Budgets } from '../lookup/budget.js';
import { answerCost, budgetHold, PUBLISHED_FOUND_COST } from '../lookup/credits.js';
import { foundIn } from '../lookup/outcome.js';
import { runGoing } from '../core/processes.js';
import { storeLedger } from '../lookup/spend-ledgers.js';
import { DEFAULTS } from '../options/defaults.js';
import { givenBudgets, type ChargedCallArgs } from './budget-flags.js';
import { openStoreFile } from './store-file.js';
import type { Target } from './target.js';

/** Sends `send` once, held against the budgets and recorded in the store's ledger; the answer. */
export async function chargedCall<T>(target: Target, args: ChargedCallArgs, op: BillableOperation, send: () => Promise<T>): Promise<T> {
  const limits = givenBudgets(args, target.config.file, target.config.fileDoor).filter(isPeriodLimit);
  const store = await openStoreFile(target.storePath(args.store), false);
  const runId = randomUUID();
  const gone = runGoing(runId);
  const ledger = storeLedger(store, runId, DEFAULTS.spendHoldLeaseMs, target.service);
  try {
    const budgets = new Budgets({ limits, ledger, now: Date.now, service: target.service, runId });
    // The price a run starts from: a person at the published price with two phones (raised to the
    // dearest call the ledger remembers), another operation at the published price as its upper bound.
    const ticket = await budgets.tryBegin(op, budgetHold(op, PUBLISHED_FOUND_COST));
    if (!ticket) throw new BudgetRefusedError(budgetCallLine(budgets.stopped!));
    let charged = 0;
    try {
      const data = await send();
      if (foundIn(op, data)) charged = answerCost(op, data, PUBLISHED_FOUND_COST);
      return data;
    } finally {
      await budgets.finish(ticket, charged);
    }
  } finally {
    ledger.close();
    store.close();
    gone();
  }
}
