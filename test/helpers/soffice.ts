// LibreOffice reads workbook outputs back in the tests: another program than the one that wrote
// them. It is optional for `npm test` (its tests skip with the reason) and `.ci/run` installs it.
// Each conversion has a profile of its own (a fresh folder): soffice started with the profile of
// one already running (HOME's, shared by every test file and every run on the machine) hands it the
// job and waits on it, and such waits outlasted a minute on a loaded machine. A fresh profile costs
// half a second of CPU.
import path from 'node:path';
import { run, runSync } from './processes.js';
import { makeTempDir } from './temp-dirs.js';

let found: boolean | undefined;

/** Whether `soffice` runs here (asked once: it takes a while to start). */
export function hasSoffice(): boolean {
  found ??= runSync('soffice', ['--version']).status === 0;
  return found;
}

/** Runs `soffice ...args` (a conversion, in a profile of its own) to its end; throws with its output when it fails. */
export async function soffice(args: string[], timeoutMs: number): Promise<void> {
  const profile = args.some((arg) => arg.startsWith('-env:UserInstallation='))
    ? []
    : [`-env:UserInstallation=file://${path.join(makeTempDir('lead-enrich-soffice-'), 'profile')}`];
  const r = await run('soffice', [...profile, ...args], { stdin: 'ignore', timeoutMs });
  if (r.code !== 0)
    throw new Error(`soffice ${args.join(' ')} ended with ${r.timedOut ? `no answer after ${timeoutMs} ms` : (r.code ?? r.signal)}:\n${r.stdout}${r.stderr}`);
}
