// `lead-enrich lookup email|url|domain <value>`: one reverse lookup, JSON on stdout.
import type { CommandModule } from 'yargs';
import { InvalidInputError } from '../api/errors.js';
import { shownValue } from '../core/terminal-text.js';
import { normalizeKey, type LookupKind } from '../plan/plan.js';
import { examplesText } from './help-examples.js';
import { printJson, type CliIo } from './io.js';
import { callOptions, type ChargedCallArgs } from './budget-flags.js';
import { STDIN_ARGUMENT } from './stdin-argument.js';
import { noticeLines } from './stderr-lines.js';
import { openTarget, targetOptions, type TargetArgs } from './target.js';

interface LookupArgs extends TargetArgs, ChargedCallArgs {
  kind: LookupKind;
  value: string;
}

export function lookupCommand(io: CliIo): CommandModule<object, LookupArgs> {
  return {
    command: 'lookup <kind> <value>',
    describe: 'One reverse lookup (email, profile url or company domain); JSON on stdout',
    builder: (yargs) =>
      callOptions(targetOptions(yargs))
        .positional('kind', { choices: ['email', 'url', 'domain'] as const, describe: 'what the value is', demandOption: true })
        .positional('value', { type: 'string', describe: 'the email address, profile URL or domain; - reads it from stdin', demandOption: true })
        .epilogue(
          examplesText([
            ['$0 lookup email jane.doe@acme.com', 'person by email'],
            ['$0 lookup url https://www.linkedin.com/in/jane-doe', 'person by profile URL'],
            ['$0 lookup domain acme.com --sandbox', 'company by domain, against the sandbox'],
            ['echo jane.doe@acme.com | $0 lookup email -', 'the value from stdin (kept out of shell history)'],
            ['$0 lookup email jane.doe@acme.com --budget 500/day', 'not sent if it could pass the day budget the nightly runs share'],
          ]),
        ) as never,
    handler: async (args) => {
      const value = args.value === STDIN_ARGUMENT ? await firstLineOfStdin(args.kind) : String(args.value);
      const normalized = normalizeKey(args.kind, value);
      if (!normalized.ok) throw new InvalidInputError(`Invalid ${args.kind} ${shownValue(value)}: ${normalized.reason}; no request was made`);
      const target = await openTarget(args, noticeLines(io));
      try {
        const key = normalized.key;
        // Loaded when a call is made: the store and the ledger are not needed to print --help.
        const { chargedCall } = await import('./charged-call.js');
        const op = args.kind === 'email' ? 'lookup_email' : args.kind === 'url' ? 'lookup_url' : 'lookup_domain';
        const data = await chargedCall<{ lead?: unknown }>(target, args, op, () =>
          args.kind === 'email' ? target.client.lookupEmail(key) : args.kind === 'url' ? target.client.lookupUrl(key) : target.client.lookupDomain(key),
        );
        printJson(io, data);
        const { isLeadFound } = await import('../api/client.js');
        if (!isLeadFound(data)) noticeLines(io)('no lead found for this input (nothing was charged)');
      } finally {
        await target.close();
      }
    },
  };
}

/** Stdin is read this far for the value: no email, profile URL or domain is longer. */
const STDIN_READ = 64 * 1024;

/** `lookup email -`: the value is the first non-blank line of stdin. */
async function firstLineOfStdin(kind: LookupKind): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin.setEncoding('utf8')) {
    text += String(chunk);
    if (text.length > STDIN_READ) break;
  }
  const lines = text.split(/\r?\n|\r/);
  const at = lines.findIndex((l) => l.trim() !== '');
  if (at === -1) throw new InvalidInputError(`No ${kind} on standard input: give one, or write it after 'lookup ${kind}' instead of -`);
  // A line still going on where the reading stopped: said as such, not as the value it would be cut to.
  if (text.length > STDIN_READ && at === lines.length - 1) {
    throw new InvalidInputError(
      `Invalid ${kind} on standard input: its first line is longer than ${STDIN_READ / 1024} KiB, beginning ${shownValue(lines[at]!.trim().slice(0, 40))}...; no request was made`,
    );
  }
  return lines[at]!.trim();
}
