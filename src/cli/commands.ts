// The command line's commands and usage handling (yargs), run by cli-process.ts, which checks the
// Node.js version before this file (and everything it imports) is loaded.
import path from 'node:path';
import { speakingTo } from '../api/caller-words.js';
import { environment, setEnvironment } from '../api/environment.js';
import yargs from 'yargs';
import { accountCommand } from './account-command.js';
import { completeValues } from './completion.js';
import { enrichCommand } from './enrich-command.js';
import { examplesText } from './help-examples.js';
import type { CliIo } from './io.js';
import { lookupCommand } from './lookup-command.js';
import { resolveCommand } from './resolve-command.js';
import { sandboxCommand } from './sandbox-command.js';
import { protectStdin } from './stdin-argument.js';
import { storeCommand } from './store-command.js';
import { usageMessage, type UsageContext } from './usage-messages.js';
import { VERSION } from './version.js';

/** A usage mistake yargs found (an unknown option, a missing argument): cli-process.ts adds the --help hint. */
export class UsageError extends Error {}

/** The shells `lead-enrich completion` writes a script for. */
const SHELLS = ['bash', 'zsh'];

/**
 * `lead-enrich completion [bash|zsh]`: yargs' own completion script. yargs picks the script by
 * $SHELL when it starts, so a shell named on the command line is put there first.
 */
function completionShell(argv: string[]): string[] {
  if (argv[0] !== 'completion') return argv;
  if (argv[1] === undefined || argv[1].startsWith('-')) {
    // yargs would write the bash script for any other $SHELL (fish, sh): one it cannot use.
    const shell = path.basename(environment('SHELL') ?? '');
    if (shell !== '' && !SHELLS.includes(shell)) {
      throw new UsageError(`No completion script for ${shell} (your $SHELL): lead-enrich writes one for bash or zsh; name it: lead-enrich completion bash`);
    }
    return argv;
  }
  if (!SHELLS.includes(argv[1])) throw new UsageError(`Unknown shell '${argv[1]}' for completion: give bash or zsh`);
  setEnvironment('SHELL', `/bin/${argv[1]}`);
  return [argv[0], ...argv.slice(2)];
}

/** `completion --help`: yargs' completion command would print the script, not say what it does. */
const COMPLETION_HELP = `lead-enrich completion [bash|zsh]

Print a shell completion script for commands, options and their values (--by, --with,
--format, a workbook's --sheet); default shell: $SHELL (bash or zsh; another is refused).

  lead-enrich completion >> ~/.bashrc          bash
  lead-enrich completion zsh >> ~/.zshrc       zsh
`;

/** cli-process.ts speaks its fatal line to the command line's user with it. */
export { speakingTo };

/** Runs one command line: every message it makes names what to change as the command line's user gives it. */
export function runCli(argv: string[], io: CliIo): Promise<void> {
  return speakingTo('cli', () => runCommand(argv, io));
}

/**
 * yargs renders the whole help of the command it runs as it starts the handler, in case the handler
 * asks for it (showHelp). Nothing here does: fail() writes lead-enrich's own line, and --help renders
 * the help afresh. That rendering (cliui, wrap-ansi and string-width over every option and example)
 * cost an `enrich` of ten rows a tenth of its CPU. It is yargs 18's internal: where it is missing,
 * the help is rendered as before (test/unit/help-not-rendered.test.ts says when).
 */
export function skipHelpRendering(parser: object): void {
  type Internal = { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: () => void } } };
  const usage = (parser as Internal).getInternalMethods?.().getUsageInstance?.();
  if (usage?.cacheHelpMessage) usage.cacheHelpMessage = () => undefined;
}

async function runCommand(argv: string[], io: CliIo): Promise<void> {
  if (argv[0] === 'completion' && argv.some((arg) => arg === '--help' || arg === '-h')) return io.out(COMPLETION_HELP);
  const parser = yargs(protectStdin(completionShell(argv)));
  skipHelpRendering(parser);
  await parser
    .scriptName('lead-enrich')
    .usage('$0 <command> [options]\n\nEnrich contact CSV files through the Lead Lookup API.')
    .command(enrichCommand(io))
    .command(lookupCommand(io))
    .command(resolveCommand(io, 'mx'))
    .command(resolveCommand(io, 'whois'))
    .command(accountCommand(io))
    .command(storeCommand(io))
    .command(sandboxCommand(io))
    .completion(
      'completion',
      'Print a shell completion script (bash or zsh; default: $SHELL): lead-enrich completion >> ~/.bashrc',
      (await completeValues(argv)) as never,
    )
    .demandCommand(1, 'Name a command: enrich, lookup, mx, whois, account, store, sandbox or completion')
    .strict()
    .epilogue(
      examplesText([
        ['$0 enrich contacts.csv --sandbox', 'enrich a file against the embedded sandbox'],
        ['$0 enrich contacts.csv -o out.csv --json', 'enrich with the real API (LEAD_API_TOKEN, LEAD_API_BASE_URL)'],
        ['$0 account', 'plan, credits and rate limit'],
        ['$0 completion >> ~/.bashrc', 'complete commands, options and their values in bash'],
        ['$0 completion zsh >> ~/.zshrc', 'the same in zsh'],
      ]),
    )
    .epilogue('Token: LEAD_API_TOKEN or "token"/"tokenFile" in --config. Base URL: --base-url, LEAD_API_BASE_URL or "baseUrl".')
    .wrap(Math.min(110, process.stdout.columns || 100))
    .exitProcess(false)
    .fail((message, error, usage) => {
      // yargs' own messages are usage errors; errors from handlers pass through unchanged.
      // Some of yargs' checks (requiresArg: "Not enough arguments following: base-url") arrive
      // as a YError, not as a message: those are usage errors too, not "unexpected failures".
      if (error && error.name !== 'YError') throw error;
      throw new UsageError(usageMessage(message || error?.message || 'invalid usage', argv, usage as unknown as UsageContext));
    })
    .help()
    .alias('h', 'help')
    .version(VERSION)
    .parseAsync();
}
