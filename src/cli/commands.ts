// The command line's commands and usage handling (yargs), run by main.ts, which checks the
// Node.js version before this file (and everything it imports) is loaded.
import { createRequire } from 'node:module';
import yargs from 'yargs';
import { accountCommand } from './account-command.js';
import { enrichCommand } from './enrich-command.js';
import type { CliIo } from './io.js';
import { lookupCommand } from './lookup-command.js';
import { resolveCommand } from './resolve-command.js';
import { sandboxCommand } from './sandbox-command.js';
import { protectStdin } from './stdin-argument.js';
import { storeCommand } from './store-command.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** A usage mistake yargs found (an unknown option, a missing argument): main.ts adds the --help hint. */
export class UsageError extends Error {}

/**
 * yargs' usage messages, cleaned: "Unknown arguments: foo-bar, fooBar" names each unknown option
 * once, as the user typed it (yargs adds the camel-case alias it made); no trailing stop, since
 * main() adds the next sentence ("Did you mean enrich?." read badly).
 */
function usageMessage(text: string): string {
  const unknown = /^Unknown arguments?: (.*)$/s.exec(text);
  if (unknown) {
    const all = unknown[1]!.split(', ');
    const names = all.filter((name) => !(/[A-Z]/.test(name) && all.includes(name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))));
    text = `Unknown ${names.length === 1 ? 'argument' : 'arguments'}: ${names.join(', ')}`;
  }
  return text.trim().replace(/\.$/, '');
}

export async function runCli(argv: string[], io: CliIo): Promise<void> {
  await yargs(protectStdin(argv))
    .scriptName('lead-enrich')
    .usage('$0 <command> [options]\n\nEnrich contact CSV files through the Lead Lookup API.')
    .command(enrichCommand(io))
    .command(lookupCommand(io))
    .command(resolveCommand(io, 'mx'))
    .command(resolveCommand(io, 'whois'))
    .command(accountCommand(io))
    .command(storeCommand(io))
    .command(sandboxCommand(io))
    .demandCommand(1, 'Name a command: enrich, lookup, mx, whois, account, store or sandbox')
    .recommendCommands()
    .strict()
    .example('$0 enrich contacts.csv --sandbox', 'enrich a file against the embedded sandbox')
    .example('$0 enrich contacts.csv -o out.csv --json', 'enrich with the real API (LEAD_API_TOKEN, LEAD_API_BASE_URL)')
    .example('$0 account', 'plan, credits and rate limit')
    .epilogue('Token: LEAD_API_TOKEN or "token"/"tokenFile" in --config. Base URL: --base-url, LEAD_API_BASE_URL or "baseUrl".')
    .wrap(Math.min(110, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((message, error) => {
      // yargs' own messages are usage errors; errors from handlers pass through unchanged.
      // Some of yargs' checks (requiresArg: "Not enough arguments following: base-url") arrive
      // as a YError, not as a message: those are usage errors too, not "unexpected failures".
      if (error && error.name !== 'YError') throw error;
      throw new UsageError(usageMessage(message || error?.message || 'invalid usage'));
    })
    .help()
    .alias('h', 'help')
    .version(version)
    .parseAsync();
}

