// The day and month budgets of the commands other than `enrich` (docs/cli-contract.md, "Spending
// over days and months"): `lookup`, `mx` and `whois` hold to them as a run does, and `store spend`
// shows what is left of each. `--budget` as typed (repeatable), else the config file's `budget`.
import type { Argv } from 'yargs';
import { flagOptions } from './flag-options.js';
import type { BudgetLimit } from '../core/budget-periods.js';
import { readOption } from '../options/option-table.js';
import type { Door } from '../options/refusal.js';
import type { FileConfig } from '../options/config-file.js';

export interface BudgetArgs {
  budget?: string | string[] | undefined;
}

/** What a single call (`lookup`, `mx`, `whois`) is given: the store whose ledger records it, and its budgets. */
export interface ChargedCallArgs extends BudgetArgs {
  store?: string | undefined;
}

/** The budgets given: the flags (all of them), else the config file's. */
export function givenBudgets(args: BudgetArgs, file: FileConfig, fileDoor: Door): BudgetLimit[] {
  return (args.budget === undefined ? readOption('budget', file.budget, fileDoor) : readOption('budget', args.budget, 'flag')) ?? [];
}

/** --store and --budget of a single call (charged-call.ts): the ledger it is recorded in, and the budgets it holds to. */
export function callOptions<T>(yargs: Argv<T>): Argv<T & ChargedCallArgs> {
  return flagOptions(yargs, ['store', 'budget'], {
    store: {
      describe: 'The result store whose ledger records what the call is charged (the day and month budgets of every run on it count it)',
      defaultDescription: "$LEAD_ENRICH_STORE, else the default store (the sandbox's own with --sandbox)",
    },
    budget: {
      describe:
        'Not sent when it could pass this day or month budget (N/day, N/month; repeatable), every run on the store together; default: the config file\'s "budget"',
    },
  }) as Argv<T & ChargedCallArgs>;
}
