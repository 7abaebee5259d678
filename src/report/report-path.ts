// The report is written at the end of the run, so its path is tried at the start, like the
// outputs': a report that cannot be written stops the run before the first lookup (exit 1), rather
// than be found out after every credit is spent. Its folder is made when missing, as -o's is.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { UnwritableOutputError } from '../api/errors.js';
import { optionWord } from '../options/option-table.js';
import { outputPlace, whyNotWritable, type OutputPlace } from '../write/output-place.js';

/** A temporary name beside the report's file that no one can guess (created with 'wx': never through a link). */
export function reportTempPath(target: string): string {
  return `${target}.${process.pid}.${randomBytes(8).toString('hex')}.tmp`;
}

/** Where the report goes (output-place.ts); UnwritableOutputError in one line where it cannot go. */
export function reportPlace(file: string): OutputPlace {
  return outputPlace(file, (why, cause) => refused(file, why, cause));
}

/**
 * Makes the report's folder and writes, then removes, a temporary file in it; throws one line when
 * it cannot. A FIFO or a device is asked whether it may be written, never opened: a FIFO's reader
 * would take an open and close for the end of the report.
 */
export function checkReportPath(file: string): void {
  const place = reportPlace(file);
  try {
    if (place.how === 'fifo' || place.how === 'device') fs.accessSync(place.name, fs.constants.W_OK);
    if (place.how !== 'file') return;
    const probe = reportTempPath(place.target);
    fs.mkdirSync(path.dirname(place.target), { recursive: true });
    fs.closeSync(fs.openSync(probe, 'wx', 0o644));
    fs.rmSync(probe, { force: true });
  } catch (error) {
    throw refused(file, whyNotWritable(error), error);
  }
}

function refused(file: string, why: string, cause: unknown): UnwritableOutputError {
  return new UnwritableOutputError(`Cannot write the report ${file}: ${why}; choose another path with ${optionWord('report')}`, { cause });
}
