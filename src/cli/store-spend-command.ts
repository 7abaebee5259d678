// `lead-enrich store spend`: the credits every run on the store was charged, per UTC day (the last
// 31 days, those with any) and per UTC month (the last 12), read from the ledger
// (store/store-spend.ts; docs/cli-contract.md, "Spending over days and months").
import type { CommandModule } from 'yargs';
import { DAY_MS } from '../core/budget-periods.js';
import type { SpendRow } from '../store/store-spend.js';
import { examplesText } from './help-examples.js';
import { printJson, type CliIo } from './io.js';
import { count, storeExists, storeFileOptions, storePath, type StoreArgs } from './store-args.js';
import { withStore } from './store-file.js';

const DAYS = 31;
const MONTHS = 12;

interface Spend {
  days: SpendRow[];
  months: SpendRow[];
}

/** The ledger's days and months that end today (UTC). */
function spendOf(ledger: { days(from: number, to: number): SpendRow[]; months(from: number, to: number): SpendRow[] }, now: number): Spend {
  const today = new Date(now);
  const firstMonth = Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - (MONTHS - 1), 1);
  return { days: ledger.days(now - (DAYS - 1) * DAY_MS, now), months: ledger.months(firstMonth, now) };
}

function table(label: string, rows: SpendRow[], none: string): string[] {
  if (rows.length === 0) return [label, `  ${none}`];
  const width = Math.max(...rows.map((row) => count(row.credits).length));
  return [label, ...rows.map((row) => `  ${row.period.padEnd(10)}  ${count(row.credits).padStart(width)} credits  (${count(row.calls)} charged ${row.calls === 1 ? 'lookup' : 'lookups'})`)];
}

function formatSpend(file: string, spend: Spend): string {
  return [
    `Credits charged by the runs on ${file} (UTC)`,
    ...table(`Per day, the last ${DAYS} days with any:`, spend.days, 'none'),
    ...table(`Per month, the last ${MONTHS}:`, spend.months, 'none'),
    '',
  ].join('\n');
}

/** The JSON form: the same rows, named by their period. */
function spendJson(file: string, spend: Spend | undefined) {
  return {
    path: file,
    exists: spend !== undefined,
    days: (spend?.days ?? []).map((row) => ({ day: row.period, credits: row.credits, calls: row.calls })),
    months: (spend?.months ?? []).map((row) => ({ month: row.period, credits: row.credits, calls: row.calls })),
  };
}

export function spendCommand(io: CliIo): CommandModule<object, StoreArgs> {
  return {
    command: 'spend',
    describe: 'Show the credits charged per UTC day (the last 31) and month (the last 12), every run on the store together',
    builder: (yargs) =>
      storeFileOptions(yargs).epilogue(
        examplesText([
          ['$0 store spend', 'what the runs on the default store were charged'],
          ['$0 store spend --json | jq .months', 'per month, for scripts'],
        ]),
      ) as never,
    handler: async (args) => {
      const file = storePath(args);
      const spend = storeExists(file) ? await withStore(file, true, (store) => spendOf(store.spend().ledger, Date.now())) : undefined;
      if (args.json) printJson(io, spendJson(file, spend));
      else io.out(spend ? formatSpend(file, spend) : `No result store yet at ${file}: nothing was charged through it.\n`);
    },
  };
}
