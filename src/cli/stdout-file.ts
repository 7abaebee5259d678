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
  const into = stdoutFileAmong([store, `${store}-wal`, `${store}-shm`]);
  if (into) throw new ConfigError(`Refusing to write into the result store's own file: stdout is ${into}; send it to another file (lead-enrich store export > answers.jsonl)`);
}
