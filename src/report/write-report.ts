// Writes the run report, HTML or JSON by the file's extension, as a whole: to a temporary file
// beside it, then renamed, so that no half-written report is ever left where the report goes.
import fs from 'node:fs';
import { jsonText } from '../core/terminal-text.js';
import { htmlReport } from './html-report.js';
import { reportTempPath } from './report-path.js';
import type { RunReport } from './run-report.js';

export function reportText(file: string, report: RunReport): string {
  return /\.json$/i.test(file) ? `${jsonText(report, 2)}\n` : htmlReport(report);
}

export function writeReport(file: string, report: RunReport): void {
  // A name no one can guess, created only if new ('wx' never follows a link planted under it).
  const temp = reportTempPath(file);
  try {
    fs.writeFileSync(temp, reportText(file, report), { encoding: 'utf8', flag: 'wx', mode: 0o644 });
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}
