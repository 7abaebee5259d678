#!/usr/bin/env node
// The command line's entry point and the only place that exits the process: every command
// reports a status through CliIo, and every error ends here as one line on stderr.
// Nothing else is imported before the Node.js version is checked: on an older Node the first
// module that needs a newer one would fail with a stack trace instead of one clear line.
// A fatal line and the text outputs are shown with their control characters escaped
// (core/terminal-text.ts): a message may carry a header name or the API's words.
import { environment } from '../api/environment.js';
import { LeadEnrichError } from '../api/errors.js';
import { terminalText } from '../core/terminal-text.js';
import type { CliIo } from './io.js';
import { unsupportedNode } from '../core/node-version.js';

async function main(): Promise<void> {
  let status = 0;
  const io: CliIo = {
    out: (text) => process.stdout.write(terminalText(text, 'lines')),
    err: (line) => process.stderr.write(`${line}\n`),
    setStatus: (s) => {
      status = s;
    },
    isTty: Boolean(process.stderr.isTTY),
  };
  // The contract promises ONE line on stderr for a fatal error: yargs' "Invalid values:\n  Argument: ..."
  // and multi-line server messages are folded into it.
  const oneLine = (text: string): string => terminalText(text.replace(/\s*[\r\n]+\s*/g, ' ').trim());
  const tooOld = unsupportedNode(process.versions.node);
  if (tooOld) {
    io.err(`lead-enrich: ${tooOld}`);
    process.exit(1);
  }
  const { runCli, UsageError } = await import('./commands.js');
  try {
    await runCli(process.argv.slice(2), io);
  } catch (error) {
    status = 1;
    if (error instanceof UsageError) {
      const message = oneLine(error.message);
      io.err(`lead-enrich: ${message}${message.endsWith('?') ? '' : '.'} Run 'lead-enrich --help' for usage.`);
    } else if (error instanceof LeadEnrichError) {
      // Stopped by a signal before anything could be written: the interrupted status all the same.
      if (error.code === 'interrupted') status = 130;
      io.err(`lead-enrich: ${oneLine(error.message)}`);
    } else {
      const message = error instanceof Error ? error.message : String(error);
      io.err(`lead-enrich: unexpected failure: ${oneLine(message)}. Set LEAD_ENRICH_DEBUG=1 for details and please report it.`);
      if (environment('LEAD_ENRICH_DEBUG')) io.err(terminalText(error instanceof Error ? (error.stack ?? message) : message, 'lines'));
    }
  }
  // Let stdout drain before exiting: a piped JSON summary must not be cut short.
  process.stdout.write('', () => process.exit(status));
}

await main();
