// Writes the run report, HTML or JSON by the file's extension, as a whole: to a temporary file
// beside it, then renamed, so that no half-written report is ever left where the report goes. A
// FIFO, a device or a standard stream (output-place.ts) is written as it is, never replaced.
import fs from 'node:fs';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { FifoStream } from '../write/fifo-stream.js';
import { jsonText } from '../core/terminal-text.js';
import { htmlReport } from './html-report.js';
import { reportPlace, reportTempPath } from './report-path.js';
import type { RunReport } from './run-report.js';

export function reportText(file: string, report: RunReport): string {
  return /\.json$/i.test(file) ? `${jsonText(report, 2)}\n` : htmlReport(report);
}

export async function writeReport(file: string, report: RunReport): Promise<void> {
  const text = reportText(file, report);
  const place = reportPlace(file);
  if (place.how === 'stdout' || place.how === 'stderr') {
    const stream = place.how === 'stdout' ? process.stdout : process.stderr;
    if (!stream.write(text)) await once(stream, 'drain');
    return;
  }
  if (place.how === 'fifo') {
    // Its reader may come later: waited for in the event loop (fifo-stream.ts), a signal still heard.
    const fifo = new FifoStream(place.name);
    fifo.end(text);
    await finished(fifo);
    return;
  }
  if (place.how === 'device') {
    const handle = await fs.promises.open(place.name, fs.constants.O_WRONLY);
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    return;
  }
  // A name no one can guess, created only if new ('wx' never follows a link planted under it).
  const temp = reportTempPath(place.target);
  try {
    fs.writeFileSync(temp, text, { encoding: 'utf8', flag: 'wx', mode: 0o644 });
    fs.renameSync(temp, place.target);
  } catch (error) {
    fs.rmSync(temp, { force: true });
    throw error;
  }
}
