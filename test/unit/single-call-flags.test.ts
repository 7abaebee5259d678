// What `lookup`, `mx`, `whois` and `resolve` tell their users of the two flags that hold a single
// call to the day and month budgets (cli/budget-flags.ts; docs/cli-contract.md, "Spending over days
// and months"): --store names the ledger the call is recorded in, --budget the budgets it is held
// to, and where each comes from when not given. And which budgets a call is given: the flags, all
// of them, else the config file's.
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { callOptions, givenBudgets } from '../../src/cli/budget-flags.js';
import { ConfigError } from '../../src/api/errors.js';

async function helpOf(): Promise<string> {
  return callOptions(yargs([]).scriptName('lead-enrich lookup').wrap(null)).getHelp();
}

/** The help line of `flag`: from its name to the end of its line. */
function lineOf(help: string, flag: string): string {
  const line = help.split('\n').find((l) => l.trimStart().startsWith(flag));
  expect(line, `${flag} in:\n${help}`).toBeDefined();
  return line!;
}

describe("a single call's budget flags, as --help shows them", () => {
  it('--store: the store whose ledger records the call, counted by every run on it; its default said', async () => {
    const line = lineOf(await helpOf(), '--store');
    expect(line).toContain('The result store whose ledger records what the call is charged');
    expect(line).toContain('the day and month budgets of every run on it count it');
    expect(line).toContain("[string] [default: $LEAD_ENRICH_STORE, else the default store (the sandbox's own with --sandbox)]");
  });

  it("--budget: not sent when it could pass a day or month budget, repeatable, the config file's by default", async () => {
    const line = lineOf(await helpOf(), '--budget');
    expect(line).toContain('Not sent when it could pass this day or month budget (N/day, N/month; repeatable)');
    expect(line).toContain('every run on the store together');
    expect(line).toContain('default: the config file\'s "budget"');
  });

  it('the two flags, in that order, each taking a value', async () => {
    const help = await helpOf();
    expect(help.indexOf('--store')).toBeGreaterThan(-1);
    expect(help.indexOf('--store')).toBeLessThan(help.indexOf('--budget'));
    const parsed = callOptions(yargs([])).parseSync(['--store', 's.sqlite', '--budget', '5/day', '--budget', '9/month']);
    expect(parsed.store).toBe('s.sqlite');
    expect(parsed.budget).toEqual(['5/day', '9/month']);
  });
});

describe('the budgets a single call is given', () => {
  const file = { budget: ['100/month'] };
  const door = { configFile: 'config.json' };

  it("every --budget typed, and then not the config file's", () => {
    expect(givenBudgets({ budget: ['5/day', '9/month'] }, file, door)).toEqual([
      { credits: 5, per: 'day' },
      { credits: 9, per: 'month' },
    ]);
  });

  it("the config file's when no --budget is typed", () => {
    expect(givenBudgets({}, file, door)).toEqual([{ credits: 100, per: 'month' }]);
    expect(givenBudgets({}, {}, door)).toEqual([]);
  });

  it('a bad value is refused by the door it came in by', () => {
    expect(() => givenBudgets({ budget: 'lots' }, {}, door)).toThrow(/--budget/);
    expect(() => givenBudgets({}, { budget: 'lots' }, door)).toThrow(ConfigError);
    expect(() => givenBudgets({}, { budget: 'lots' }, door)).toThrow(/config\.json.*"budget"/);
  });
});
