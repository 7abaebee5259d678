// How the command line says a failure it ends with (cli-process.ts exits): one line on stderr that names
// its stable code, `lead-enrich: <message> (code: <code>)`, and with --json one JSON object,
// `{ exitCode, version, error: { code, message } }` (docs/cli-contract.md, "Every night,
// unattended"). Imports nothing that needs a recent Node.js: the version check uses it too.
import { LeadEnrichError, type ErrorCode } from '../api/errors.js';
import { isUnknownHost } from '../api/network-errors.js';
import { terminalText } from '../core/terminal-text.js';
import { writeOutcome, type CliIo } from './io.js';

/** A failure as the command line ends with it: its exit status, stable code and one-line message. */
export interface Fatal {
  status: number;
  code: ErrorCode;
  message: string;
  /** The line's text before its code: the message, with what to do when the message does not say it. */
  line: string;
}

// The contract promises ONE line on stderr for a fatal error: yargs' "Invalid values:\n  Argument: ..."
// and multi-line server messages are folded into it; its control characters shown escaped (a
// message may carry a header name or the API's words: core/terminal-text.ts).
const oneLine = (text: string): string => terminalText(text.replace(/\s*[\r\n]+\s*/g, ' ').trim());

/** `usage`: whether the error is a usage mistake yargs found (code `usage`, and the --help hint). */
export function fatalOf(error: unknown, usage: (error: unknown) => boolean): Fatal {
  if (usage(error)) {
    const message = oneLine((error as Error).message);
    return { status: 1, code: 'usage', message, line: `${message}${message.endsWith('?') ? '' : '.'} Run 'lead-enrich --help' for usage.` };
  }
  if (error instanceof LeadEnrichError) {
    const message = oneLine(error.message);
    // Each class says what a command ending with it exits with (api/errors.ts): an API that is down
    // (a command's one call, a dry run's account read) is 2, never 1: waiting may mend it, as it
    // may a run's; but a host that does not exist is an address to fix.
    const status = error.policy.outage && isUnknownHost(error) ? 1 : error.policy.exit;
    return { status, code: error.code, message, line: message };
  }
  const message = oneLine(error instanceof Error ? error.message : String(error));
  return { status: 1, code: 'unexpected', message, line: `unexpected failure: ${message}. Set LEAD_ENRICH_DEBUG=1 for details and please report it.` };
}

/** Says a fatal failure: its one line, and with --json its JSON object. */
export async function tellFatal(io: CliIo, fatal: Fatal): Promise<void> {
  io.err(`lead-enrich: ${fatal.line} (code: ${fatal.code})`);
  if (io.json) writeOutcome(io, fatal.status, { error: { code: fatal.code, message: fatal.message } });
  await io.onFatal?.(fatal);
}

/** --json anywhere before `--`: a failure before the command says where its JSON goes writes it to stdout. */
export function asksJson(argv: readonly string[]): 'out' | undefined {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((arg) => arg === '--json' || arg === '--json=true') ? 'out' : undefined;
}
