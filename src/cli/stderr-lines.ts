// How `enrich` writes to stderr: in a terminal as it is; otherwise (cron, CI logs) every line
// begins with an ISO 8601 timestamp (docs/cli-contract.md, after the exit-status table), so a log
// says when each thing happened. A multi-line text is stamped line by line.
import type { CliIo } from './io.js';

export type LineWriter = (text: string) => void;

export function stderrLines(io: CliIo, now: () => Date = () => new Date()): LineWriter {
  if (io.isTty) return (text) => io.err(text);
  return (text) => {
    const stamp = now().toISOString();
    for (const line of text.split('\n')) io.err(line === '' ? line : `${stamp} ${line}`);
  };
}
