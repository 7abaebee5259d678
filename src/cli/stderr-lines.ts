// How `enrich` writes to stderr: in a terminal as it is; otherwise (cron, CI logs) every line
// begins with an ISO 8601 timestamp (docs/cli-contract.md, after the exit-status table), so a log
// says when each thing happened. A multi-line text is stamped line by line.
// A notice's words are shown with their control characters escaped (core/terminal-text.ts): a
// warning may carry a header name, a footer line or the API's message.
import { terminalText } from '../core/terminal-text.js';
import type { CliIo } from './io.js';

export type LineWriter = (text: string) => void;

/**
 * What a command tells its user besides its output (a warning, a notice): `lead-enrich: ` first,
 * stamped as every stderr line is without a terminal, so that every command's lines read alike.
 */
export function noticeLines(io: CliIo, now: () => Date = () => new Date()): LineWriter {
  const say = stderrLines(io, now);
  return (text) => say(noticeText(text));
}

/** A notice as one line: `lead-enrich: ` and its words, every control character in them escaped (a line feed too). */
export function noticeText(text: string): string {
  return `lead-enrich: ${terminalText(text)}`;
}

export function stderrLines(io: CliIo, now: () => Date = () => new Date()): LineWriter {
  if (io.isTty) return (text) => io.err(text);
  return (text) => {
    const stamp = now().toISOString();
    for (const line of text.split('\n')) io.err(line === '' ? line : `${stamp} ${line}`);
  };
}
