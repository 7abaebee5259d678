// `lead-enrich sandbox`: runs the local server that implements the interface, until Ctrl-C.
import { once } from 'node:events';
import type { Argv, CommandModule } from 'yargs';
import { ConfigError, LeadEnrichError } from '../api/errors.js';
import { SANDBOX_FLAGS } from '../sandbox/flags.js';
import type { OutageOptions, SandboxOptions } from '../sandbox/server.js';
import type { NotFoundShape } from '../sandbox/service-shapes.js';
import { readFlags, tableOptions } from './flag-options.js';
import { examplesText } from './help-examples.js';
import type { CliIo } from './io.js';
import { noticeLines } from './stderr-lines.js';

/** The command line's flags as the sandbox's options. */
function sandboxOptionsOf(args: object): SandboxOptions {
  const { outageAfter, outageFor, outageKind, notFoundShape, variedPrices, ...options } = readFlags(SANDBOX_FLAGS, args);
  if (options.token !== undefined && options.tokenFile !== undefined)
    throw new ConfigError('Invalid option --token-file: contradicts --token; give one of them');
  const outage: OutageOptions | undefined =
    outageAfter === undefined && outageFor === undefined && outageKind === undefined
      ? undefined
      : { afterMs: outageAfter ?? 0, ...(outageFor === undefined ? {} : { forMs: outageFor }), ...(outageKind === undefined ? {} : { kind: outageKind }) };
  return {
    ...options,
    ...(notFoundShape === undefined ? {} : { notFoundShape: notFoundShape as NotFoundShape }),
    ...(variedPrices ? { variedPrices } : {}),
    ...(outage ? { outage } : {}),
  };
}

/** A path as one shell word: quoted unless it needs no quotes. */
function shellWord(text: string): string {
  return /^[\w./~-]+$/.test(text) && !text.startsWith('~') ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The sandbox's flags, each with its default and its help. */
function sandboxFlags(yargs: Argv) {
  return tableOptions(yargs, SANDBOX_FLAGS).epilogue(
    examplesText([
      ['$0 sandbox --port 8080', 'serve on http://127.0.0.1:8080/v2'],
      ['$0 sandbox --port 8080 --token-file ~/.config/lead-enrich/token', 'the same token at every restart, where a cron line reads it: a rehearsal'],
      ['$0 sandbox --rpm 60 --latency 50-150 --fault error503=0.05', 'a slow, flaky, tightly limited server'],
      ['$0 sandbox --outage-after 20s --outage-for 1m', 'lookups answer 503 for a minute, 20 s after the start: watch a run wait, then go on'],
      [
        '$0 sandbox --not-found-shape code1027 --companies 3 --daily-limit 500',
        'answer as the production service may: misses as code 1027, three companies per domain, a daily limit',
      ],
      ['$0 sandbox --outage-after 0s --outage-kind hang', 'lookups never answer: a run gives up after --patience'],
      ['$0 sandbox --drift 0.3 --epoch 1', 'a day after the start, 30 % of the people found have a new job: try --max-age or --refresh with --changes'],
    ]),
  );
}

export function sandboxCommand(io: CliIo): CommandModule {
  return {
    command: 'sandbox',
    describe: 'Run the local sandbox server that implements the Lead Lookup interface',
    builder: (yargs) => sandboxFlags(yargs) as never,
    handler: async (args) => {
      const options = sandboxOptionsOf(args);
      let sandbox: Awaited<ReturnType<typeof import('../sandbox/server.js').startSandbox>>;
      try {
        const { startSandbox } = await import('../sandbox/server.js');
        sandbox = await startSandbox(options);
      } catch (error) {
        if (error instanceof LeadEnrichError) throw error;
        throw new ConfigError(`Cannot start the sandbox: ${(error as Error).message}`);
      }
      // Listening for the stop before saying where it serves: a Ctrl-C right after the line stops it cleanly.
      const stopped = Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
      // Kept in a file, the token is named by its file: the line to copy stays the same at every restart.
      const token = options.tokenFile === undefined ? sandbox.token : `"$(cat ${shellWord(options.tokenFile)})"`;
      io.out(
        `Sandbox listening on ${sandbox.baseUrl}\n` +
          `Use it from another shell:\n` +
          `  export LEAD_API_BASE_URL=${sandbox.baseUrl}\n` +
          `  export LEAD_API_TOKEN=${token}\n` +
          `Press Ctrl-C to stop.\n`,
      );
      await stopped;
      await sandbox.close();
      noticeLines(io)(`the sandbox stopped after ${sandbox.stats.requests} ${sandbox.stats.requests === 1 ? 'request' : 'requests'}`);
    },
  };
}
