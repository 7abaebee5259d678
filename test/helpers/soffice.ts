// LibreOffice reads workbook outputs back in the tests: another program than the one that wrote
// them. It is optional for `npm test` (its tests skip with the reason) and `.ci/run` installs it.
import { execFileSync } from 'node:child_process';

let found: boolean | undefined;

/** Whether `soffice` runs here (asked once: it takes a while to start). */
export function hasSoffice(): boolean {
  if (found === undefined) {
    try {
      execFileSync('soffice', ['--version'], { stdio: 'ignore', timeout: 30_000 });
      found = true;
    } catch {
      found = false;
    }
  }
  return found;
}
