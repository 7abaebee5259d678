// `lead-enrich store spend`: the credits every run on the store was charged, each service apart, per
// UTC day (the last 31 days with any) and per UTC month (the last 12 with any), read from the
// ledger (store/store-spend.ts; docs/cli-contract.md, "Spending over days and months"). Given day
// or month budgets (--budget, else the config file's `budget`), what is left of each, per service.
// Every charge is listed on the day it is dated, whatever this machine's clock says: a charge dated
// later than it (a machine whose clock is ahead made it) is said to be so.
import type { CommandModule } from 'yargs';
import { isPeriodLimit, type PeriodLimit } from '../core/budget-periods.js';
import { formatDuration } from '../core/duration.js';
import { standingOf, type BudgetStanding } from '../lookup/budget.js';
import { chooseConfigFile, readConfigFile } from '../options/config-file.js';
import { processEnv } from '../api/environment.js';
import type { LedgerReader, SpendRow } from '../store/store-spend.js';
import { givenBudgets, type BudgetArgs } from './budget-flags.js';
import { flagOptions } from './flag-options.js';
import { examplesText } from './help-examples.js';
import { printJson, type CliIo } from './io.js';
import { noticeLines } from './stderr-lines.js';
import { count, serviceOption, storeExists, storeOptions, storePath, type StoreArgs } from './store-args.js';
import { withStore } from './store-file.js';

const DAYS = 31;
const MONTHS = 12;

interface SpendArgs extends StoreArgs, BudgetArgs {
  config?: string | undefined;
}

interface ServiceSpend {
  service: string;
  days: SpendRow[];
  months: SpendRow[];
  /** Held now by calls in flight, or by runs that stopped until a run counts them. */
  held: number;
  budgets: BudgetStanding[];
}

interface Spend {
  days: SpendRow[];
  months: SpendRow[];
  held: number;
  /** When the newest charge is dated (epoch ms). */
  newest: number | undefined;
  services: ServiceSpend[];
}

/** The ledger of `service` (of every service when undefined), each service apart, with what the budgets have left now. */
async function spendOf(ledger: LedgerReader, limits: readonly PeriodLimit[], service: string | undefined, now: number): Promise<Spend> {
  const services = service === undefined ? ledger.services() : [service];
  const each = await Promise.all(
    services.map(async (name) => ({
      service: name,
      days: ledger.days(DAYS, name),
      months: ledger.months(MONTHS, name),
      held: ledger.heldNow(name),
      budgets: await Promise.all(limits.map((limit) => standingOf(limit, { standing: (period) => ledger.standing(period, name) }, now))),
    })),
  );
  return {
    days: ledger.days(DAYS, service),
    months: ledger.months(MONTHS, service),
    held: ledger.heldNow(service),
    newest: ledger.newestCharge(service),
    services: each,
  };
}

function rowText(row: SpendRow, width: number): string {
  const calls = `${count(row.calls)} charged ${row.calls === 1 ? 'lookup' : 'lookups'}`;
  const lapsed = row.lapsed > 0 ? `; ${count(row.lapsed)} credits of them the worst case of lookups in flight of a run that stopped` : '';
  return `    ${row.period.padEnd(10)}  ${count(row.credits).padStart(width)} credits  (${calls}${lapsed})`;
}

function table(label: string, rows: SpendRow[]): string[] {
  if (rows.length === 0) return [`  ${label}`, '    none'];
  const width = Math.max(...rows.map((row) => count(row.credits).length));
  return [`  ${label}`, ...rows.map((row) => rowText(row, width))];
}

function budgetText(b: BudgetStanding): string {
  return `${b.budget}: ${count(b.spent)} spent ${b.per === 'day' ? 'on' : 'in'} ${b.period}, ${count(b.left)} left`;
}

function serviceLines(s: ServiceSpend): string[] {
  return [
    s.service,
    ...(s.budgets.length > 0 ? [`  Budgets (UTC, by this machine's clock): ${s.budgets.map(budgetText).join('; ')}`] : []),
    ...table(`Per day, the last ${DAYS} days with any:`, s.days),
    ...table(`Per month, the last ${MONTHS} with any:`, s.months),
    ...(s.held > 0
      ? [`  Held now by lookups in flight: ${count(s.held)} credits (a run that stopped leaves them until the next run counts them as spent)`]
      : []),
  ];
}

/** Said when the newest charge is dated after this machine's clock: its day is listed as dated. */
function aheadLine(newest: number | undefined, now: number): string[] {
  if (newest === undefined || newest <= now) return [];
  return [
    `The newest charge is dated ${new Date(newest).toISOString()}, ${formatDuration(newest - now)} later than this machine's clock: a machine whose clock is ahead made it; it is listed on the day it is dated.`,
  ];
}

function formatSpend(file: string, spend: Spend, now: number): string {
  const none = spend.services.length === 0 ? ['  nothing was charged'] : [];
  return [
    `Credits charged through ${file}, each service apart (UTC days and months)`,
    ...none,
    ...spend.services.flatMap(serviceLines),
    ...aheadLine(spend.newest, now),
    '',
  ].join('\n');
}

const rowJson = (key: 'day' | 'month') => (row: SpendRow) => ({ [key]: row.period, credits: row.credits, calls: row.calls, lapsed: row.lapsed });

/** The JSON form: the same rows, named by their period; `days` and `months` of every service listed together. */
function spendJson(file: string, service: string | undefined, spend: Spend | undefined, now: number) {
  return {
    path: file,
    ...(service === undefined ? {} : { service }),
    exists: spend !== undefined,
    days: (spend?.days ?? []).map(rowJson('day')),
    months: (spend?.months ?? []).map(rowJson('month')),
    held: spend?.held ?? 0,
    newestCharge: spend?.newest === undefined ? null : new Date(spend.newest).toISOString(),
    newestAhead: spend?.newest !== undefined && spend.newest > now,
    services: (spend?.services ?? []).map((s) => ({
      service: s.service,
      days: s.days.map(rowJson('day')),
      months: s.months.map(rowJson('month')),
      held: s.held,
      budgets: s.budgets,
    })),
  };
}

/** The day and month budgets given (a run's own, `N`, has no period here: left out). */
function periodBudgets(args: SpendArgs, io: CliIo): PeriodLimit[] {
  const chosen = chooseConfigFile(args.config, processEnv());
  const file = chosen ? readConfigFile(chosen.path, noticeLines(io), chosen.from) : {};
  return givenBudgets(args, file, { configFile: chosen?.path ?? '' }).filter(isPeriodLimit);
}

export function spendCommand(io: CliIo): CommandModule<object, SpendArgs> {
  return {
    command: 'spend',
    describe: 'Show the credits charged per UTC day (the last 31) and month (the last 12), each service apart, every run on the store together',
    builder: (yargs) =>
      flagOptions(storeOptions(yargs), ['budget', 'config'], {
        budget: {
          describe: 'show what is left of this day or month budget (N/day, N/month; repeatable), per service; default: the config file\'s "budget"',
        },
        config: { describe: 'the config file whose "budget" is shown' },
      }).epilogue(
        examplesText([
          ['$0 store spend', 'what the runs on the default store were charged, per service'],
          ['$0 store spend --service https://api.example.com/v2 --budget 500/day', "one service's spend, and what is left of its day budget"],
          ['$0 store spend --json | jq .months', 'per month, for scripts'],
        ]),
      ) as never,
    handler: async (args) => {
      const service = serviceOption(args);
      const limits = periodBudgets(args, io);
      const file = storePath(args);
      const now = Date.now();
      const spend = storeExists(file) ? await withStore(file, true, (store) => spendOf(store.spend().ledger, limits, service, now)) : undefined;
      if (args.json) printJson(io, spendJson(file, service, spend, now));
      else io.out(spend ? formatSpend(file, spend, now) : `No result store yet at ${file}: nothing was charged through it.\n`);
    },
  };
}
