// What every `lead-enrich store` command shares: the options naming the store and a service,
// where the store is, and how sizes and counts are written.
import fs from 'node:fs';
import path from 'node:path';
import type { Argv } from 'yargs';
import { ConfigError } from '../api/errors.js';
import { COMMAND_FLAGS, SANDBOX_SERVICE } from '../options/command-flags.js';
import { defaultStorePath, sandboxStorePath } from '../store/default-path.js';
import { flagOptions, readFlag, tableOptions } from './flag-options.js';

export interface StoreArgs {
  store?: string | undefined;
  sandbox?: boolean | undefined;
  service?: string | undefined;
  json?: boolean | undefined;
}

/** --store, --sandbox and --json: which store file, and how to print the outcome. */
export function storeFileOptions<T>(yargs: Argv<T>) {
  return flagOptions(yargs, ['store', 'sandbox', 'json'], {
    store: { describe: 'the result store file', defaultDescription: '$LEAD_ENRICH_STORE, else results.sqlite in the per-user cache directory' },
    sandbox: { describe: "the embedded sandbox's own store (results.sandbox.sqlite beside the default one)" },
    json: { describe: 'print the outcome as one JSON object' },
  }) as Argv<T & StoreArgs>;
}

/** The store file's options and --service: one API's answers only. */
export function storeOptions<T>(yargs: Argv<T>) {
  return tableOptions(storeFileOptions(yargs), COMMAND_FLAGS, ['service']);
}

/** --service as the store names services: the normalized base URL, or 'sandbox' (cli/target.ts). */
export const serviceOption = (args: StoreArgs): string | undefined => readFlag(COMMAND_FLAGS, 'service', args);

export const ofService = (service: string | undefined) => (service === undefined ? '' : ` of ${service}`);

/** `--store`, else LEAD_ENRICH_STORE, else the per-user default or the sandbox's (read when the command runs). */
export function storePath(args: StoreArgs): string {
  const given = args.store;
  if (given !== undefined && (typeof given !== 'string' || given.trim() === '')) {
    throw new ConfigError(`Invalid option --store: must be a file path, got '${String(given)}'`);
  }
  // The sandbox's answers are kept in its own store, never in the default one (docs/cli-contract.md,
  // "Store housekeeping"): --service sandbox looks there, or it would only ever find nothing.
  const sandbox = args.sandbox || args.service === SANDBOX_SERVICE;
  const chosen = given ?? (sandbox ? sandboxStorePath() : defaultStorePath());
  // ':memory:' would be a fresh, empty store on every run: nothing to inspect or tidy.
  if (chosen === ':memory:') {
    throw new ConfigError("Invalid option --store: ':memory:' is never kept between runs; name a file");
  }
  return path.resolve(chosen);
}

/** True when there is something at `file`; "no store yet" is an answer, not an error. */
export function storeExists(file: string): boolean {
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

export const count = (n: number) => n.toLocaleString('en-US');

export function formatBytes(bytes: number): string {
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
