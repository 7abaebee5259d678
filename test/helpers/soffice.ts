// LibreOffice reads workbook outputs back in the tests: another program than the one that wrote
// them. It is optional for `npm test` (its tests skip with the reason) and `.ci/run` installs it.
import { run, runSync } from './processes.js';

let found: boolean | undefined;

/** Whether `soffice` runs here (asked once: it takes a while to start). */
export function hasSoffice(): boolean {
  found ??= runSync('soffice', ['--version']).status === 0;
  return found;
}

/** Runs `soffice ...args` (a conversion) to its end; throws with its output when it fails. */
export async function soffice(args: string[], timeoutMs: number): Promise<void> {
  const r = await run('soffice', args, { stdin: 'ignore', timeoutMs });
  if (r.code !== 0) throw new Error(`soffice ${args.join(' ')} ended with ${r.timedOut ? `no answer after ${timeoutMs} ms` : (r.code ?? r.signal)}:\n${r.stdout}${r.stderr}`);
}
