// `lead-enrich mx <domain>` and `lead-enrich whois <domain>`: one domain helper call, JSON on stdout.
import type { CommandModule } from 'yargs';
import { InvalidInputError } from '../api/errors.js';
import { normalizeDomain } from '../plan/plan.js';
import { examplesText } from './help-examples.js';
import { asTyped } from './number-flags.js';
import { printJson, type CliIo } from './io.js';
import { noticeLines } from './stderr-lines.js';
import { callOptions, type ChargedCallArgs } from './budget-flags.js';
import { openTarget, targetOptions, type TargetArgs } from './target.js';

interface ResolveArgs extends TargetArgs, ChargedCallArgs {
  domain: string;
  timeout?: number | string;
}

/** A whole number for validateResolveTimeout; anything else as typed, so its message shows it. */
function timeoutFlag(raw: number | string | undefined): number | string | undefined {
  const typed = asTyped('timeout', raw);
  if (typed === undefined) return undefined;
  const text = String(typed).trim();
  return /^\d+$/.test(text) ? Number(text) : String(typed);
}

export function resolveCommand(io: CliIo, op: 'mx' | 'whois'): CommandModule<object, ResolveArgs> {
  const what = op === 'mx' ? 'MX records, sorted by priority' : 'the Whois record';
  return {
    command: `${op} <domain>`,
    describe: `Resolve ${what} of a domain; JSON on stdout`,
    builder: (yargs) =>
      callOptions(targetOptions(yargs))
        .positional('domain', { type: 'string', describe: 'the domain name', demandOption: true })
        // A number in --help; a bad value is still shown as typed ('abc'), not as yargs' NaN.
        .option('timeout', {
          type: 'number',
          describe: 'server-side timeout in ms (1 to 110000; server default 90000)',
          requiresArg: true,
        })
        .epilogue(
          examplesText([
            [`$0 ${op} acme.com`, `${what} of acme.com`],
            [`$0 ${op} acme.com --timeout 20000 --sandbox`, 'with a 20 s server-side timeout, against the sandbox'],
          ]),
        ) as never,
    handler: async (args) => {
      // Checked before anything else: a bad timeout must never cost a request (interface 4.4).
      const { validateResolveTimeout } = await import('../api/client.js');
      const timeout = validateResolveTimeout(timeoutFlag(args.timeout));
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
