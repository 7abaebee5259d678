// The sandbox's token kept in a file, so that a rehearsal keeps one token across restarts
// (README, "Rehearse with the sandbox server"): the file's token when it exists, else a fresh one
// written there (0600, its folder made 0700), which the next start reads back. A cron line that
// reads the token from that file then runs against every restart of the sandbox unchanged.
import fs from 'node:fs';
import path from 'node:path';

/** The token in `file` (its first line), or `fresh()` written there when there is no such file. */
export function tokenInFile(file: string, fresh: () => string): string {
  try {
    return fs.readFileSync(file, 'utf8').split(/\r?\n/)[0]!.trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const token = fresh();
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true, mode: 0o700 });
  fs.writeFileSync(file, `${token}\n`, { mode: 0o600, flag: 'wx' });
  return token;
}
