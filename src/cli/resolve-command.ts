// `lead-enrich mx <domain>` and `lead-enrich whois <domain>`: one domain helper call, JSON on stdout.
import type { CommandModule } from 'yargs';
import { InvalidInputError } from '../api/errors.js';
import { normalizeDomain } from '../plan/plan.js';
import { examplesText } from './help-examples.js';
import { COMMAND_FLAGS } from '../options/command-flags.js';
import { readFlag, tableOptions } from './flag-options.js';
import { printJson, type CliIo } from './io.js';
import { noticeLines } from './stderr-lines.js';
import { callOptions, type ChargedCallArgs } from './budget-flags.js';
import { openTarget, targetOptions, type TargetArgs } from './target.js';

interface ResolveArgs extends TargetArgs, ChargedCallArgs {
  domain: string;
}

export function resolveCommand(io: CliIo, op: 'mx' | 'whois'): CommandModule<object, ResolveArgs> {
  const what = op === 'mx' ? 'MX records, sorted by priority' : 'the Whois record';
  return {
    command: `${op} <domain>`,
    describe: `Resolve ${what} of a domain; JSON on stdout`,
    builder: (yargs) =>
      tableOptions(callOptions(targetOptions(yargs)), COMMAND_FLAGS, ['timeout'])
        .positional('domain', { type: 'string', describe: 'the domain name', demandOption: true })
        .epilogue(
          examplesText([
            [`$0 ${op} acme.com`, `${what} of acme.com`],
            [`$0 ${op} acme.com --timeout 20000 --sandbox`, 'with a 20 s server-side timeout, against the sandbox'],
          ]),
        ) as never,
    handler: async (args) => {
      // Checked before anything else: a bad timeout must never cost a request (interface 4.4).
      const timeout = readFlag(COMMAND_FLAGS, 'timeout', args);
      const domain = normalizeDomain(String(args.domain));
      if (!domain.ok) throw new InvalidInputError(`Invalid domain '${args.domain}': ${domain.reason}; no request was made`);
      const target = await openTarget(args, noticeLines(io));
      try {
        const options = timeout === undefined ? {} : { timeout };
        const { chargedCall } = await import('./charged-call.js');
        const data = await chargedCall<unknown>(target, args, op, () =>
          op === 'mx' ? target.client.findMx(domain.key, options) : target.client.findWhois(domain.key, options),
        );
        printJson(io, data);
      } finally {
        await target.close();
      }
    },
  };
}
