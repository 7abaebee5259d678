// Where stdout writes, when the shell sent it into a file: never into a file the command reads or
// keeps (`store export >> results.sqlite` would append JSON into the database), as cat refuses
// "input file is output file". Told by the device and inode of stdout against each file's.
import fs from 'node:fs';
import { ConfigError } from '../api/errors.js';

/** The one of `files` stdout is, when it is one of them (a file redirected with > or >>). */
export function stdoutFileAmong(files: readonly string[]): string | undefined {
  let out: fs.Stats;
  try {
    out = fs.fstatSync(1);
  } catch {
    return undefined;
  }
  if (!out.isFile()) return undefined;
  return files.find((file) => {
    try {
      const stat = fs.statSync(file);
      return stat.dev === out.dev && stat.ino === out.ino;
    } catch {
      return false;
    }
  });
}

/** `store export` (and any command writing the store's contents to stdout): not into the store's own files. */
export function refuseStdoutInto(store: string): void {
  const into = stdoutFileAmong(storeFiles(store));
  if (into)
    throw new ConfigError(
      `Refusing to write into the result store's own file: stdout is ${into}; send it to another file (lead-enrich store export > answers.jsonl)`,
    );
}

/**
 * `enrich ... -o -` (or `--changes -`): the rows (the changes) not into a file the run reads
 * (`enrich in.csv -o - >> in.csv` would read its own rows for ever), nor into the store or the
 * configuration.
 */
export function refuseRowsInto(files: ReadonlyArray<{ option: string; path: string }>, what = 'the rows'): void {
  const all = files.flatMap((file) => (file.option === 'the store' ? storeFiles(file.path) : [file.path]).map((path) => ({ option: file.option, path })));
  const into = stdoutFileAmong(all.map((file) => file.path));
  const which = all.find((file) => file.path === into);
  if (which) throw new ConfigError(`Refusing to write ${what} into ${which.option} (${which.path}): stdout is that file; send them to another file`);
}

function storeFiles(store: string): string[] {
  return [store, `${store}-wal`, `${store}-shm`, `${store}-journal`];
}
