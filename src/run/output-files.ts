// Before anything is opened for writing or any request is made (docs/cli-contract.md, "Never
// overwritten"): no output over the input, over another output, over the configuration the command
// line read (the token is in it, or beside it), or over any file of the store's: its main file, and
// the write-ahead log, shared-memory index and rollback journal SQLite keeps beside it. An output
// renamed over the log of a store another run is writing loses that run's answers (the log holds
// them until they are copied into the main file), and SQLite deletes the log when the store closes,
// taking the output with it. Nor two outputs into one standard output.
import { ConfigError } from '../api/errors.js';
import { realPathOf } from '../core/real-path.js';
import { configFilesOf, optionWord } from '../options/option-table.js';
import { assertDistinctFiles, type NamedFile } from '../read/index.js';
import { isStandardOutput, standardOutputIsDevice } from '../write/output-place.js';

export interface RunFiles {
  input: unknown;
  output: unknown;
  errors: unknown;
  /** The store's path; ':memory:' is no file. */
  store: string;
  report: string | undefined;
  changes: string | undefined;
}

/** The files SQLite keeps beside a store, by what they hold. */
const STORE_FAMILY: ReadonlyArray<[string, string]> = [
  ['-wal', "the store's write-ahead log"],
  ['-shm', "the store's shared-memory index"],
  ['-journal', "the store's rollback journal"],
];

export function refuseSharedFiles(options: object, files: RunFiles): void {
  const named = (file: unknown) => (typeof file === 'string' ? file : undefined);
  const outputs = [
    { option: optionWord('output'), path: named(files.output) },
    { option: optionWord('errors'), path: named(files.errors) },
    { option: optionWord('report'), path: files.report },
    { option: optionWord('changes'), path: files.changes },
  ];
  const written = [...outputs.slice(0, 2), { option: optionWord('store'), path: files.store }, ...outputs.slice(2)];
  assertDistinctFiles([{ option: '<input>', path: named(files.input) }, ...written]);
  assertDistinctFiles([...configFilesOf(options), ...written]);
  assertDistinctFiles([...storeFamily(files.store), ...outputs]);
  refuseTwoOnStdout(outputs);
}

/** The store's own files, as SQLite names them: beside the store's real path (SQLite follows a link to the database). */
function storeFamily(store: string): NamedFile[] {
  if (store === ':memory:') return [];
  const base = realPathOf(store);
  return STORE_FAMILY.map(([suffix, option]) => ({ option, path: `${base}${suffix}` }));
}

/**
 * Two outputs into one standard output would be interleaved into one stream no one can take apart,
 * unless it is a device (a terminal, the /dev/null of a cron line), which takes any number.
 */
function refuseTwoOnStdout(outputs: ReadonlyArray<{ option: string; path: string | undefined }>): void {
  if (standardOutputIsDevice()) return;
  const onStdout = outputs.filter((file) => isStandardOutput(file.path));
  if (onStdout.length < 2) return;
  throw new ConfigError(`${onStdout[1]!.option} would write into standard output, where ${onStdout[0]!.option} writes: give one of them a file`);
}
