// `lead-enrich store stats|prune|clear|check`: look into, tidy and check the durable result store
// (src/store/result-store.ts) without running a lookup. Needs no token and no network.
// Every entry was paid for: `clear` asks first in a terminal and needs --yes otherwise, and
// --service limits a command to one API's answers (docs/cli-contract.md, "Store housekeeping").
import type { Argv, CommandModule } from 'yargs';
import { flagOptions, readFlag, tableOptions } from './flag-options.js';
import { COMMAND_FLAGS } from '../options/command-flags.js';
import { ConfigError } from '../api/errors.js';
import { formatDuration } from '../core/duration.js';
import type { ResultStoreStats } from '../store/result-store.js';
import type { LedgerSize } from '../store/store-spend.js';
import { withStore } from './store-file.js';
import { examplesText } from './help-examples.js';
import { noticeLines } from './stderr-lines.js';
import { printJson, type CliIo } from './io.js';
import { askOnTerminal, saidYes, type AskUser } from './ask-user.js';
import { checkCommand } from './store-check-command.js';
import { exportCommand, showCommand } from './store-export-command.js';
import { spendCommand } from './store-spend-command.js';
import { count, formatBytes, ofService, serviceOption, storeExists, storeOptions, storePath, type StoreArgs } from './store-args.js';

interface ClearArgs extends StoreArgs {
  yes?: boolean | undefined;
}

export { askOnTerminal, type AskUser } from './ask-user.js';

function formatWhen(ms: number | undefined, now: number): string {
  if (ms === undefined) return '-';
  const age = now - ms;
  return `${new Date(ms).toISOString()} (${age >= 0 ? `${formatDuration(age)} ago` : `${formatDuration(-age)} in the future`})`;
}

/** `name count` lines under one label, largest first, then by name. */
function breakdown(label: string, counts: Record<string, number>, pad: (text: string) => string): string[] {
  const entries = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  if (entries.length === 0) return [`${pad(label)}-`];
  const width = Math.max(...entries.map(([name]) => name.length));
  return entries.map(([name, n], i) => `${pad(i === 0 ? label : '')}${name.padEnd(width)}  ${count(n)}`);
}

/** The ledger's line: its per-call rows, the days it has totals for, its bytes. */
function ledgerLine(ledger: LedgerSize): string {
  const bytes = ledger.bytes === undefined ? '' : `, ${formatBytes(ledger.bytes)}`;
  return `${count(ledger.rows)} charged calls kept one by one, totals for ${count(ledger.days)} ${ledger.days === 1 ? 'day' : 'days'}${bytes} (store spend lists them)`;
}

export function formatStoreStats(stats: ResultStoreStats & { ledger?: LedgerSize | undefined }, now: number = Date.now(), service?: string): string {
  const pad = (text: string) => text.padEnd(14);
  const lines = [
    `${pad('Result store')}${stats.path}`,
    ...(service === undefined ? [] : [`${pad('Service')}${service} (its entries only; the size is the whole file's)`]),
    `${pad('Size')}${formatBytes(stats.sizeBytes)}`,
    `${pad('Entries')}${count(stats.entries)}`,
    ...(stats.earlierAnswers > 0 ? [`${pad('Earlier')}${count(stats.earlierAnswers)} answers replaced by a newer one (store show KEY lists them)`] : []),
    ...breakdown('By operation', stats.byOperation, pad),
    ...breakdown('By service', stats.byService, pad),
    `${pad('Oldest')}${formatWhen(stats.oldest, now)}`,
    `${pad('Newest')}${formatWhen(stats.newest, now)}`,
    ...(stats.ledger === undefined ? [] : [`${pad('Ledger')}${ledgerLine(stats.ledger)}`]),
  ];
  return `${lines.join('\n')}\n`;
}

/** The JSON form of `store stats`: times as ISO 8601 (null when empty), for scripts. */
function statsJson(stats: (ResultStoreStats & { ledger: LedgerSize }) | undefined, file: string, service: string | undefined) {
  return {
    path: file,
    ...(service === undefined ? {} : { service }),
    exists: stats !== undefined,
    sizeBytes: stats?.sizeBytes ?? 0,
    entries: stats?.entries ?? 0,
    earlierAnswers: stats?.earlierAnswers ?? 0,
    byOperation: stats?.byOperation ?? {},
    byService: stats?.byService ?? {},
    oldest: stats?.oldest === undefined ? null : new Date(stats.oldest).toISOString(),
    newest: stats?.newest === undefined ? null : new Date(stats.newest).toISOString(),
    // The whole file's, whatever --service says: the ledger's size is the store's.
    ledger: stats?.ledger ?? { rows: 0, days: 0, bytes: 0 },
  };
}

function noStoreLine(file: string, what: string): string {
  return `No result store yet at ${file}${what}. It is created by the first enrich run (or pass --store PATH).\n`;
}

function statsCommand(io: CliIo): CommandModule<object, StoreArgs> {
  return {
    command: 'stats',
    describe: 'Show the size, entries by operation and service, and the oldest and newest entry',
    builder: (yargs) =>
      storeOptions(yargs).epilogue(
        examplesText([
          ['$0 store stats', 'the default store'],
          ['$0 store stats --store ./results.sqlite', 'a given store file'],
          ['$0 store stats --service https://api.example.com/v2', "one API's answers"],
          ['$0 store stats --json | jq .entries', 'the entry count, for scripts'],
        ]),
      ) as never,
    handler: async (args) => {
      const service = serviceOption(args);
      const file = storePath(args);
      if (!storeExists(file)) {
        if (args.json) printJson(io, statsJson(undefined, file, service));
        else io.out(noStoreLine(file, ''));
        return;
      }
      // A service with no entries (never used, or a typo) is an answer too: 0 entries.
      const read = await withStore(file, true, (store) => ({ ...store.stats(service), ledger: store.spend().size() }));
      // Measured once the store is closed, as `store check` measures it: the write-ahead log this
      // command's own connection held open is not the store's size.
      const { storeFileBytes } = await import('../store/store-stats.js');
      const stats = { ...read, sizeBytes: storeFileBytes(file) };
      if (args.json) printJson(io, statsJson(stats, file, service));
      else io.out(formatStoreStats(stats, Date.now(), service));
    },
  };
}

function pruneCommand(io: CliIo): CommandModule<object, StoreArgs> {
  return {
    command: 'prune',
    describe: 'Delete the entries fetched longer ago than --older-than',
    builder: (yargs) =>
      tableOptions(storeOptions(yargs), COMMAND_FLAGS, ['olderThan']).epilogue(
        examplesText([
          ['$0 store prune --older-than 30d', 'forget answers older than 30 days'],
          ['$0 store prune --older-than 12h --store ./results.sqlite', 'the same for 12 hours, in a given store file'],
          ['$0 store prune --older-than 7d --service sandbox', "only the sandbox's answers"],
        ]),
      ) as never,
    handler: async (args) => {
      // The duration and the service are checked before the store is touched: a typo changes nothing.
      const olderThanMs = readFlag(COMMAND_FLAGS, 'olderThan', args)!;
      const service = serviceOption(args);
      const file = storePath(args);
      const scope = service === undefined ? {} : { service };
      if (!storeExists(file)) {
        if (args.json) printJson(io, { path: file, ...scope, exists: false, removed: 0, remaining: 0 });
        else io.out(noStoreLine(file, '; nothing to prune'));
        return;
      }
      // Earlier answers (history) fetched that long ago go too.
      const { removed, remaining, removedEarlier } = await withStore(file, false, (store) => {
        const earlier = store.stats(service).earlierAnswers;
        const removed = store.prune(olderThanMs, service);
        const after = store.stats(service);
        return { removed, remaining: after.entries, removedEarlier: earlier - after.earlierAnswers };
      });
      if (args.json) printJson(io, { path: file, ...scope, exists: true, removed, remaining, removedEarlier });
      else {
        const earlier = removedEarlier > 0 ? ` (and ${count(removedEarlier)} earlier ${removedEarlier === 1 ? 'answer' : 'answers'})` : '';
        io.out(
          `Removed ${count(removed)} ${removed === 1 ? 'entry' : 'entries'}${earlier}${ofService(service)} older than ${formatDuration(olderThanMs)} ` +
            `from ${file}; ${count(remaining)} left.\n`,
        );
      }
    },
  };
}

const entriesWord = (n: number) => `${count(n)} ${n === 1 ? 'entry' : 'entries'}`;

/** What `clear` would delete: the entries, and the ledger's credits and calls. */
interface Held {
  entries: number;
  credits: number;
  calls: number;
}

/**
 * Whether `clear` may go on: --yes, or "y" typed in a terminal. Without a terminal and without
 * --yes nothing is deleted: a script must say so (exit 1, one line on how to confirm).
 */
async function confirmClear(args: ClearArgs, ask: AskUser, file: string, held: Held, service: string | undefined): Promise<boolean> {
  if (args.yes) return true;
  const what = `${entriesWord(held.entries)}${ofService(service)}${held.credits > 0 ? ` and the ledger of ${count(held.credits)} credits charged` : ''}`;
  const after = held.credits > 0 ? ', and the day and month budgets no longer count those credits' : '';
  const answer = ask(`Delete ${what} from ${file}? Later runs pay again for these lookups${after}. [y/N] `);
  if (answer === undefined) {
    throw new ConfigError(`Not clearing ${file} (${what}): there is no terminal to confirm in; pass --yes to clear it`);
  }
  return saidYes(await answer);
}

function clearCommand(io: CliIo, ask: AskUser): CommandModule<object, ClearArgs> {
  return {
    command: 'clear',
    describe: 'Delete every entry and the ledger of what was charged (the next runs pay again for every lookup); asks first, or needs --yes',
    builder: (yargs) =>
      flagOptions(storeOptions(yargs), ['yes'], { yes: { describe: 'do not ask: needed where there is no terminal to ask in' } }).epilogue(
        examplesText([
          ['$0 store clear', 'empty the default store (asks first)'],
          ['$0 store clear --yes --store ./results.sqlite', 'empty a given store file, from a script'],
          ['$0 store clear --service sandbox --yes', "forget only the sandbox's answers"],
        ]),
      ) as never,
    handler: async (args) => {
      const service = serviceOption(args);
      const file = storePath(args);
      const scope = service === undefined ? {} : { service };
      if (!storeExists(file)) {
        if (args.json) printJson(io, { path: file, ...scope, exists: false, removed: 0 });
        else io.out(noStoreLine(file, '; nothing to clear'));
        return;
      }
      const held = await withStore(file, true, (store): Held => ({ entries: store.stats(service).entries, ...store.spend().ledger.total(service) }));
      const any = held.entries > 0 || held.calls > 0;
      if (any && !(await confirmClear(args, ask, file, held, service))) {
        noticeLines(io)(`not confirmed: nothing was deleted from ${file}`);
        io.setStatus(1);
        return;
      }
      // The ledger of what was charged goes with the answers (of that service only, with --service).
      const removed = any
        ? await withStore(file, false, (store) => ({ entries: store.clear(service), calls: store.spend().clear(service) }))
        : { entries: 0, calls: 0 };
      const ledger = { credits: removed.calls > 0 ? held.credits : 0, calls: removed.calls };
      if (args.json) printJson(io, { path: file, ...scope, exists: true, removed: removed.entries, ledger });
      else
        io.out(
          `Removed ${entriesWord(removed.entries)}${ofService(service)}${ledger.calls > 0 ? ` and the ledger of ${count(ledger.credits)} credits charged` : ''} from ${file}.\n`,
        );
    },
  };
}

/** `lead-enrich store <stats|prune|clear|check|export|show|spend>`. */
export function storeCommand(io: CliIo, ask: AskUser = askOnTerminal): CommandModule<object, any> {
  return {
    command: 'store',
    describe: 'Inspect, tidy, check or export the result store (stats, prune, clear, check, export, show, spend)',
    builder: (yargs) =>
      yargs
        .command(statsCommand(io))
        .command(pruneCommand(io))
        .command(clearCommand(io, ask))
        .command(checkCommand(io))
        .command(exportCommand(io))
        .command(showCommand(io))
        .command(spendCommand(io))
        .demandCommand(1, 'Name a store command: stats, prune, clear, check, export, show or spend')
        .epilogue(
          examplesText([
            ['$0 store stats', 'what the store holds'],
            ['$0 store prune --older-than 30d', 'forget answers older than 30 days'],
            ['$0 store clear --yes --store ./results.sqlite', 'empty a given store file'],
            ['$0 store check', 'verify the store file'],
            ['$0 store export > answers.jsonl', 'every answer paid for, one JSON object a line'],
            ['$0 store spend', 'credits charged per day and month'],
          ]),
        )
        .epilogue(
          'The store is --store PATH, else $LEAD_ENRICH_STORE, else results.sqlite in the per-user cache directory. ' +
            'Runs with --sandbox keep their answers in results.sandbox.sqlite beside it (--sandbox here), never in it.',
        ),
    // The subcommands do the work; yargs only gets here when none was named (demandCommand fails first).
    handler: () => undefined,
  };
}
