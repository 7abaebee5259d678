// `lead-enrich store export` and `store show KEY`: the answers paid for, out of the store. Export
// writes every entry to stdout, one per line (JSON Lines, or CSV), read one at a time from the
// store (with --history, each followed by the key's earlier answers); show prints what is stored
// for one key, normalized as a run would normalize it: its answers, newest first, with their dates.
import { examplesText } from './help-examples.js';
import type { CommandModule } from 'yargs';
import { ConfigError } from '../api/errors.js';
import { printJson, type CliIo } from './io.js';
import { COMMAND_FLAGS } from '../options/command-flags.js';
import { readFlag, tableOptions } from './flag-options.js';
import { serviceOption, storeExists, storeOptions, storePath, type StoreArgs } from './store-args.js';
import type { StoreEntry } from '../store/store-entries.js';
import { openStoreFile } from './store-file.js';
import { parsedOrUndefined } from '../store/stored-result.js';
import { noticeLines } from './stderr-lines.js';
import { refuseStdoutInto } from './stdout-file.js';

interface ExportArgs extends StoreArgs {
  history?: boolean | undefined;
}

interface ShowArgs extends StoreArgs {
  key: string;
}

/** The columns of an export, in order (CSV header, JSON member names). */
export const EXPORT_COLUMNS = ['key', 'operation', 'status', 'stored_at', 'answer'] as const;
/** With --history (and in `store show`): when an earlier answer was replaced; null (empty) for the current one. */
const REPLACED_AT = 'replaced_at';

const iso = (ms: number | undefined) => (ms === undefined ? null : new Date(ms).toISOString());

/** An entry as exported; undefined when its answer is not JSON (left out and counted: `store check` names it, a run looks it up again). */
function exported(entry: StoreEntry, history = false) {
  const answer = entry.data === null ? null : parsedOrUndefined(entry.data);
  if (answer === undefined) return undefined;
  const row = { key: entry.key, operation: entry.op, status: entry.status, stored_at: iso(entry.fetchedAt)!, answer };
  return history ? { ...row, [REPLACED_AT]: iso(entry.replacedAt) } : row;
}

/** Lines handed to stdout a chunk at a time, waiting for it to drain before the next (store export's flat memory). */
class ChunkedOut {
  readonly #io: CliIo;
  #chunk = '';
  /** The reader of stdout went away (EPIPE). */
  closed = false;

  constructor(io: CliIo) {
    this.#io = io;
  }

  get full(): boolean {
    return this.#chunk.length >= CHUNK_CHARS;
  }

  write(text: string): void {
    this.#chunk += text;
  }

  async flush(): Promise<void> {
    if (this.#chunk === '' || this.closed) return;
    this.#io.out(this.#chunk);
    this.#chunk = '';
    try {
      await this.#io.drained?.();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EPIPE') throw error;
      this.closed = true;
    }
  }
}

/** About what a pipe holds: one write per chunk, not per line. */
const CHUNK_CHARS = 64 * 1024;

/** Said once after an export or a show that left out answers that are not JSON. */
function sayLeftOut(io: CliIo, file: string, leftOut: number): void {
  if (leftOut === 0) return;
  noticeLines(io)(
    `left out ${leftOut === 1 ? '1 stored answer that is' : `${leftOut} stored answers that are`} not JSON (lead-enrich store check --store '${file}' names them; a run looks them up again)`,
  );
}

export function exportCommand(io: CliIo): CommandModule<object, ExportArgs> {
  return {
    command: 'export',
    describe: 'Write every stored answer to stdout, one per line: key, operation, status, stored_at, answer',
    builder: (yargs) =>
      tableOptions(storeOptions(yargs), COMMAND_FLAGS, ['exportFormat', 'history']).epilogue(
        examplesText([
          ['$0 store export > answers.jsonl', 'every answer paid for, as JSON Lines'],
          ['$0 store export --history --format csv > history.csv', 'every answer each key was given, with when it was replaced'],
          ['$0 store export --format csv --sandbox > sandbox-answers.csv', "the sandbox's answers as CSV"],
        ]),
      ) as never,
    handler: async (args) => {
      const format = readFlag(COMMAND_FLAGS, 'exportFormat', args);
      const service = serviceOption(args);
      const file = storePath(args);
      if (!storeExists(file)) throw new ConfigError(`No result store at ${file}: nothing to export (a run creates it; or pass --store PATH)`);
      refuseStdoutInto(file);
      const { csvLines } = await import('../write/csv-lines.js');
      const store = await openStoreFile(file, true);
      const history = args.history ?? false;
      let leftOut = 0;
      const out = new ChunkedOut(io);
      try {
        if (format === 'csv') out.write(csvLines([[...EXPORT_COLUMNS, ...(history ? [REPLACED_AT] : [])]], '\n'));
        for (const entry of store.entries({ service, history })) {
          const row = exported(entry, history);
          if (row === undefined) leftOut += 1;
          else
            out.write(
              format === 'jsonl'
                ? `${JSON.stringify(row)}\n`
                : csvLines([[row.key, row.operation, row.status, row.stored_at, entry.data ?? '', ...(history ? [iso(entry.replacedAt) ?? ''] : [])]], '\n'),
            );
          // Whatever stdout is (a pipe read slowly too): what waits to be written stays bounded.
          if (out.full) await out.flush();
          // Its reader is gone (`| head`): nothing more can be read, as a pipe's writer stops then.
          if (out.closed) break;
        }
        await out.flush();
      } finally {
        store.close();
      }
      sayLeftOut(io, file, leftOut);
    },
  };
}

/** The forms a key may be stored under: an email, a profile URL or a domain, each normalized as a run would. */
async function storedForms(raw: string): Promise<string[]> {
  const { normalizeKey } = await import('../plan/normalize.js');
  const kinds = raw.includes('@') ? (['email'] as const) : (['url', 'domain'] as const);
  const forms = kinds.map((kind) => normalizeKey(kind, raw)).flatMap((result) => (result.ok ? [result.key] : []));
  return [...new Set([raw.trim(), ...forms])];
}

export function showCommand(io: CliIo): CommandModule<object, ShowArgs> {
  return {
    command: 'show <key>',
    describe:
      'Print what is stored for one key (an email, profile URL or domain, normalized as a run would): its answers, newest first, with their dates; exit 1 when nothing is',
    builder: (yargs) =>
      storeOptions(yargs)
        .positional('key', { type: 'string', demandOption: true, describe: 'an email address, a profile URL or a domain' })
        .epilogue(
          examplesText([['$0 store show Person.0@Company0.com', 'what the store holds for person.0@company0.com (the key as a run normalizes it)']]),
        ) as never,
    handler: async (args) => {
      const service = serviceOption(args);
      const file = storePath(args);
      const key = String(args.key);
      if (!storeExists(file)) throw new ConfigError(`Nothing stored for ${key}: there is no result store at ${file} (a run creates it; or pass --store PATH)`);
      const store = await openStoreFile(file, true);
      const found: Array<{ service: string } & NonNullable<ReturnType<typeof exported>>> = [];
      let leftOut = 0;
      try {
        for (const form of await storedForms(key)) {
          for (const entry of store.entries({ service, key: form, history: true })) {
            const row = exported(entry, true);
            if (row === undefined) leftOut += 1;
            else found.push({ service: entry.service, ...row, ...(entry.change ? { change: entry.change } : {}) });
          }
        }
      } finally {
        store.close();
      }
      sayLeftOut(io, file, leftOut);
      if (found.length === 0)
        throw new ConfigError(
          `Nothing stored for ${key} in ${file}${service === undefined ? '' : ` for ${service}`}: a run stores the answer when it looks the key up`,
        );
      printJson(io, found);
    },
  };
}
