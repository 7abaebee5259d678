// `lead-enrich store stats|prune|clear`: look into and tidy the durable result store
// (src/store/result-store.ts) without running a lookup. Needs no token and no network.
import fs from 'node:fs';
import path from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { ConfigError } from '../api/errors.js';
import { defaultStorePath } from '../store/default-path.js';
import { formatDuration, parseDuration } from '../store/duration.js';
import type { ResultStore, ResultStoreStats } from '../store/result-store.js';
import { printJson, type CliIo } from './io.js';

interface StoreArgs {
  store?: string | undefined;
  json?: boolean | undefined;
}

interface PruneArgs extends StoreArgs {
  olderThan: string;
}

function storeOptions<T>(yargs: Argv<T>) {
  return yargs
    .option('store', {
      type: 'string',
      requiresArg: true,
      describe: 'the result store file',
      defaultDescription: '$LEAD_ENRICH_STORE, else results.sqlite in the per-user cache directory',
    })
    .option('json', { type: 'boolean', describe: 'print the outcome as one JSON object' });
}

/** `--store`, else LEAD_ENRICH_STORE, else the per-user default (read when the command runs). */
function storePath(args: StoreArgs): string {
  const given = args.store;
  if (given !== undefined && (typeof given !== 'string' || given.trim() === '')) {
    throw new ConfigError(`Invalid option --store: must be a file path, got '${String(given)}'`);
  }
  const chosen = given ?? defaultStorePath();
  // ':memory:' would be a fresh, empty store on every run: nothing to inspect or tidy.
  if (chosen === ':memory:') {
    throw new ConfigError("Invalid option --store: ':memory:' is never kept between runs; name a file");
  }
  return path.resolve(chosen);
}

/** True when there is something at `file`; "no store yet" is an answer, not an error. */
function storeExists(file: string): boolean {
  try {
    fs.statSync(file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    // ENOTDIR, EACCES...: let ResultStore.open explain it with its own clear message.
    return true;
  }
}

async function withStore<R>(file: string, readonly: boolean, fn: (store: ResultStore) => R): Promise<R> {
  // Imported here: better-sqlite3 is not needed to print --help.
  const { ResultStore } = await import('../store/result-store.js');
  const store = ResultStore.open({ path: file, readonly });
  try {
    return fn(store);
  } finally {
    store.close();
  }
}

const count = (n: number) => n.toLocaleString('en-US');

function formatBytes(bytes: number): string {
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  if (bytes < 1024) return `${bytes} B`;
  let value = bytes;
  let unit = 'B';
  for (const next of units) {
    if (value < 1024) break;
    value /= 1024;
    unit = next;
  }
  return `${value.toFixed(1)} ${unit}`;
}

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

export function formatStoreStats(stats: ResultStoreStats, now: number = Date.now()): string {
  const pad = (text: string) => text.padEnd(14);
  const lines = [
    `${pad('Result store')}${stats.path}`,
    `${pad('Size')}${formatBytes(stats.sizeBytes)}`,
    `${pad('Entries')}${count(stats.entries)}`,
    ...breakdown('By operation', stats.byOperation, pad),
    ...breakdown('By service', stats.byService, pad),
    `${pad('Oldest')}${formatWhen(stats.oldest, now)}`,
    `${pad('Newest')}${formatWhen(stats.newest, now)}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** The JSON form of `store stats`: times as ISO 8601 (null when empty), for scripts. */
function statsJson(stats: ResultStoreStats | undefined, file: string) {
  return {
    path: file,
    exists: stats !== undefined,
    sizeBytes: stats?.sizeBytes ?? 0,
    entries: stats?.entries ?? 0,
    byOperation: stats?.byOperation ?? {},
    byService: stats?.byService ?? {},
    oldest: stats?.oldest === undefined ? null : new Date(stats.oldest).toISOString(),
    newest: stats?.newest === undefined ? null : new Date(stats.newest).toISOString(),
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
      storeOptions(yargs)
        .example('$0 store stats', 'the default store')
        .example('$0 store stats --store ./results.sqlite', 'a given store file')
        .example('$0 store stats --json | jq .entries', 'the entry count, for scripts') as never,
    handler: async (args) => {
      const file = storePath(args);
      if (!storeExists(file)) {
        if (args.json) printJson(io, statsJson(undefined, file));
        else io.out(noStoreLine(file, ''));
        return;
      }
      const stats = await withStore(file, true, (store) => store.stats());
      if (args.json) printJson(io, statsJson(stats, file));
      else io.out(formatStoreStats(stats));
    },
  };
}

function pruneCommand(io: CliIo): CommandModule<object, PruneArgs> {
  return {
    command: 'prune',
    describe: 'Delete the entries fetched longer ago than --older-than',
    builder: (yargs) =>
      storeOptions(yargs)
        .option('older-than', {
          type: 'string',
          requiresArg: true,
          demandOption: true,
          describe: 'remove entries fetched longer ago than this: 30d, 12h, 1d12h... (units ms, s, m, h, d, w)',
        })
        .example('$0 store prune --older-than 30d', 'forget answers older than 30 days')
        .example('$0 store prune --older-than 12h --store ./results.sqlite', 'the same for 12 hours, in a given store file') as never,
    handler: async (args) => {
      // The duration is checked before the store is touched: a typo changes nothing.
      const olderThanMs = parseDuration(String(args.olderThan), '--older-than');
      const file = storePath(args);
      if (!storeExists(file)) {
        if (args.json) printJson(io, { path: file, exists: false, removed: 0, remaining: 0 });
        else io.out(noStoreLine(file, '; nothing to prune'));
        return;
      }
      const { removed, remaining } = await withStore(file, false, (store) => ({
        removed: store.prune(olderThanMs),
        remaining: store.stats().entries,
      }));
      if (args.json) printJson(io, { path: file, exists: true, removed, remaining });
      else {
        io.out(
          `Removed ${count(removed)} ${removed === 1 ? 'entry' : 'entries'} older than ${formatDuration(olderThanMs)} ` +
            `from ${file}; ${count(remaining)} left.\n`,
        );
      }
    },
  };
}

function clearCommand(io: CliIo): CommandModule<object, StoreArgs> {
  return {
    command: 'clear',
    describe: 'Delete every entry (the next runs pay again for every lookup)',
    builder: (yargs) =>
      storeOptions(yargs)
        .example('$0 store clear', 'empty the default store')
        .example('$0 store clear --store ./results.sqlite', 'empty a given store file') as never,
    handler: async (args) => {
      const file = storePath(args);
      if (!storeExists(file)) {
        if (args.json) printJson(io, { path: file, exists: false, removed: 0 });
        else io.out(noStoreLine(file, '; nothing to clear'));
        return;
      }
      const removed = await withStore(file, false, (store) => store.clear());
      if (args.json) printJson(io, { path: file, exists: true, removed });
      else io.out(`Removed ${count(removed)} ${removed === 1 ? 'entry' : 'entries'} from ${file}.\n`);
    },
  };
}

/** `lead-enrich store <stats|prune|clear>`. */
export function storeCommand(io: CliIo): CommandModule<object, any> {
  return {
    command: 'store',
    describe: 'Inspect or tidy the result store (stats, prune, clear)',
    builder: (yargs) =>
      yargs
        .command(statsCommand(io))
        .command(pruneCommand(io))
        .command(clearCommand(io))
        .demandCommand(1, 'Name a store command: stats, prune or clear')
        .example('$0 store stats', 'what the store holds')
        .example('$0 store prune --older-than 30d', 'forget answers older than 30 days')
        .example('$0 store clear --store ./results.sqlite', 'empty a given store file')
        .epilogue('The store is --store PATH, else $LEAD_ENRICH_STORE, else results.sqlite in the per-user cache directory.'),
    // The subcommands do the work; yargs only gets here when none was named (demandCommand fails first).
    handler: () => undefined,
  };
}
