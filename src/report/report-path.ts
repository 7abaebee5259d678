// The report is written at the end of the run, so its path is tried at the start, like the
// outputs': a report that cannot be written stops the run before the first lookup (exit 1), rather
// than be found out after every credit is spent. Its folder is made when missing, as -o's is.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { UnwritableOutputError } from '../api/errors.js';
import { optionWord } from '../options/option-table.js';
import { whyNotWritable } from '../write/sinks.js';

/** A temporary name beside the report that no one can guess (created with 'wx': never through a link). */
export function reportTempPath(file: string): string {
  return `${file}.${process.pid}.${randomBytes(8).toString('hex')}.tmp`;
}

/** Makes the report's folder and writes, then removes, a temporary file in it; throws one line when it cannot. */
export function checkReportPath(file: string): void {
  const probe = reportTempPath(file);
  try {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    fs.closeSync(fs.openSync(probe, 'wx', 0o644));
    fs.rmSync(probe, { force: true });
  } catch (error) {
    throw new UnwritableOutputError(`Cannot write the report ${file}: ${whyNotWritable(error)}; choose another path with ${optionWord('report')}`);
  }
}
