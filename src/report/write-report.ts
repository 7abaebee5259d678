// Writes the run report, HTML or JSON by the file's extension, as a whole: to a temporary file
// beside it, then renamed, so that no half-written report is ever left where the report goes.
import fs from 'node:fs';
import { htmlReport } from './html-report.js';
import type { RunReport } from './run-report.js';

export function reportText(file: string, report: RunReport): string {
  return /\.json$/i.test(file) ? `${JSON.stringify(report, null, 2)}\n` : htmlReport(report);
}

export function writeReport(file: string, report: RunReport): void {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temp, reportText(file, report), 'utf8');
    fs.renameSync(temp, file);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}
