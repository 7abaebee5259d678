// `lead-enrich store check`: is the store sound? SQLite's integrity check over the whole file
// (store/store-check.ts), in a worker thread so that a big store shows how long it has been read.
// Exit 0 when sound (or when there is no store yet), 1 when damaged or not a store.
import { Worker } from 'node:worker_threads';
import type { CommandModule } from 'yargs';
import { formatDuration } from '../core/duration.js';
import { terminalText } from '../core/terminal-text.js';
import type { StoreCheck } from '../store/store-check.js';
import { storeFileBytes } from '../store/store-stats.js';
import { examplesText } from './help-examples.js';
import { printJson, type CliIo } from './io.js';
import { noticeLines } from './stderr-lines.js';
import { count, formatBytes, storeExists, storeFileOptions, storePath, type StoreArgs } from './store-args.js';

/** Stores above this size get a line saying the check reads the whole file (and, in a terminal, a clock). */
const BIG_BYTES = 64 * 1024 * 1024;

export function checkCommand(io: CliIo): CommandModule<object, StoreArgs> {
  return {
    command: 'check',
    describe: 'Verify the store file (integrity, that it is a lead-enrich store, that every answer is JSON); exit 1 when damaged or not a store',
    builder: (yargs) =>
      storeFileOptions(yargs).epilogue(
        examplesText([
          ['$0 store check', 'the default store'],
          ['$0 store check --store ./results.sqlite --json', 'a given store file, for scripts'],
        ]),
      ) as never,
    handler: async (args) => {
      const file = storePath(args);
      if (!storeExists(file)) {
        if (args.json) printJson(io, { path: file, exists: false, ok: true, problems: [] });
        else io.out(`No result store yet at ${file}: nothing to check.\n`);
        return;
      }
      const size = storeFileBytes(file);
      const result = await withClock(io, file, size, () => checkInWorker(file));
      if (!result.ok) io.setStatus(1);
      if (args.json) printJson(io, { path: file, exists: true, sizeBytes: size, ...result });
      else io.out(report(file, size, result));
    },
  };
}

function report(file: string, size: number, result: StoreCheck): string {
  if (result.ok) {
    const entries = result.entries === undefined ? '' : `, ${count(result.entries)} ${result.entries === 1 ? 'entry' : 'entries'}`;
    return `The result store at ${file} is sound (${formatBytes(size)}${entries})${notJsonText(result.notJson)}.\n`;
  }
  if (result.cannotCheck) return `Cannot check the result store at ${file}: ${result.cannotCheck.why}; ${result.cannotCheck.advice}.\n`;
  if (result.foreign) {
    return `The file at ${file} is not a lead-enrich result store: it is a SQLite database of another program (its application id is not ours). It was left untouched; pass --store PATH or set LEAD_ENRICH_STORE to use another file.\n`;
  }
  const shown = result.problems.slice(0, 5).map((problem) => `  ${problem}`);
  return [
    `The result store at ${file} is damaged:`,
    ...shown,
    ...(result.problems.length > shown.length ? [`  ... (${result.problems.length - shown.length} more)`] : []),
    `Move it aside (mv '${file}' '${file}.damaged') and run again: the answers it held are bought again only when needed.`,
    '',
  ].join('\n');
}

/** The stored answers that are not JSON, said after "sound": a run looks each up again, the store is kept. */
function notJsonText(notJson: StoreCheck['notJson']): string {
  if (!notJson) return '';
  const more = notJson.count > notJson.examples.length ? `, ... (${count(notJson.count - notJson.examples.length)} more)` : '';
  const what = notJson.count === 1 ? '1 stored answer is' : `${count(notJson.count)} stored answers are`;
  return `, but ${what} not JSON (${notJson.examples.join(', ')}${more}): a run looks ${notJson.count === 1 ? 'it' : 'them'} up again`;
}

/** For a big store: a line saying it takes a while, and in a terminal how long it has been. */
async function withClock<T>(io: CliIo, file: string, size: number, work: () => Promise<T>): Promise<T> {
  if (size < BIG_BYTES) return work();
  const started = Date.now();
  const line = () => terminalText(`Checking ${file} (${formatBytes(size)}): reading every page, ${formatDuration(Date.now() - started)} so far`);
  if (!io.isTty) {
    noticeLines(io)(`checking ${file} (${formatBytes(size)}): reading every page; this takes about a minute per few GiB`);
    return work();
  }
  process.stderr.write(line());
  const timer = setInterval(() => process.stderr.write(`\r\x1b[K${line()}`), 1000);
  try {
    return await work();
  } finally {
    clearInterval(timer);
    process.stderr.write('\r\x1b[K');
  }
}

// The single executable has no file beside it to start a worker from: its build puts the worker's
// own bundle here as source text (.ci/build-exe.mjs), run with `eval`.
declare const STORE_CHECK_WORKER_SOURCE: string | undefined;

function startWorker(file: string): Worker {
  const workerData = { file };
  if (typeof STORE_CHECK_WORKER_SOURCE === 'string') return new Worker(STORE_CHECK_WORKER_SOURCE, { eval: true, workerData });
  return new Worker(new URL('./store-check-worker.js', import.meta.url), { workerData });
}

function checkInWorker(file: string): Promise<StoreCheck> {
  return new Promise((resolve, reject) => {
    const worker = startWorker(file);
    worker.once('message', (result: StoreCheck) => resolve(result));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the check stopped (exit ${code})`));
    });
  });
}
