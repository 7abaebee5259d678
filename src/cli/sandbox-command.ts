// `lead-enrich sandbox`: runs the local server that implements the interface, until Ctrl-C.
import { once } from 'node:events';
import type { Argv, CommandModule } from 'yargs';
import { ConfigError, LeadEnrichError } from '../api/errors.js';
import { parseDuration } from '../core/duration.js';
import type { FaultKind, OutageKind, OutageOptions, SandboxOptions } from '../sandbox/server.js';
import { examplesText } from './help-examples.js';
import type { CliIo } from './io.js';
import type { Operation } from '../api/types.js';
import type { NotFoundShape } from '../sandbox/service-shapes.js';
import { latencyRange, SANDBOX_DEFAULTS as D } from '../sandbox/options.js';
import { outageKindOf } from '../sandbox/outage.js';
import { asTyped } from './number-flags.js';
import { noticeLines } from './stderr-lines.js';

// Numbers are read as strings and checked here: yargs' number type turns "abc" into NaN, and the
// message must show what was typed.
interface SandboxArgs {
  host: string;
  port: string;
  rpm?: string;
  windowMs?: string;
  credits?: string;
  threshold?: string;
  latency?: string;
  token?: string;
  tokenFile?: string;
  fault?: string[];
  seed?: string;
  notFoundRate?: string;
  outageAfter?: string;
  outageFor?: string;
  outageKind?: string;
  notFoundShape?: string;
  companies?: number | string;
  forbid?: string;
  dailyLimit?: number | string;
  variedPrices?: boolean;
  drift?: string;
  epoch?: string;
}

function numberOption(option: string, raw: unknown): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(String(raw).trim());
  if (String(raw).trim() === '' || !Number.isFinite(value)) {
    throw new ConfigError(`Invalid option --${option}: must be a number, got '${String(raw)}'`);
  }
  return value;
}

const FAULTS: FaultKind[] = ['error500', 'error503', 'reset', 'truncated', 'failed200', 'hang'];

function parseLatency(text: string): [number, number] {
  const range = latencyRange(text);
  if (!range) throw new ConfigError(`Invalid option --latency: must be MS or MIN-MAX in ms with MIN <= MAX, such as 50-150, got '${text}'`);
  return range;
}

function parseFaults(items: string[]): Partial<Record<FaultKind, number>> {
  const faults: Partial<Record<FaultKind, number>> = {};
  for (const item of items) {
    const [kind, rate] = item.split('=');
    const p = Number(rate);
    if (!FAULTS.includes(kind as FaultKind) || rate === undefined || !(p >= 0 && p <= 1)) {
      throw new ConfigError(`Invalid --fault: must be KIND=P with KIND one of ${FAULTS.join(', ')} and P from 0 to 1, got '${item}'`);
    }
    faults[kind as FaultKind] = p;
  }
  return faults;
}

/** --outage-after, --outage-for, --outage-kind as the sandbox's outage; undefined when none is asked for. */
function outageOf(args: SandboxArgs): OutageOptions | undefined {
  if (args.outageAfter === undefined && args.outageFor === undefined && args.outageKind === undefined) return undefined;
  const kind: OutageKind | undefined = args.outageKind === undefined ? undefined : outageKindOf(args.outageKind);
  if (args.outageKind !== undefined && kind === undefined)
    throw new ConfigError(`Invalid option --outage-kind: must be 503, reset or hang, got '${args.outageKind}'`);
  return {
    afterMs: args.outageAfter === undefined ? 0 : parseDuration(args.outageAfter, '--outage-after'),
    ...(args.outageFor === undefined ? {} : { forMs: parseDuration(args.outageFor, '--outage-for') }),
    ...(kind === undefined ? {} : { kind }),
  };
}

/** The command line's flags as the sandbox's options. */
function sandboxOptionsOf(args: SandboxArgs): SandboxOptions {
  const options: SandboxOptions = { host: args.host, port: numberOption('port', asTyped('port', args.port)) ?? 0 };
  const numbers = {
    rpm: args.rpm,
    windowMs: args.windowMs,
    credits: args.credits,
    threshold: args.threshold,
    seed: args.seed,
    notFoundRate: args.notFoundRate,
    companiesPerDomain: args.companies,
    dailyLimit: args.dailyLimit,
    drift: args.drift,
    epoch: args.epoch,
  };
  const flags = {
    rpm: 'rpm',
    windowMs: 'window-ms',
    credits: 'credits',
    threshold: 'threshold',
    seed: 'seed',
    notFoundRate: 'not-found-rate',
    companiesPerDomain: 'companies',
    dailyLimit: 'daily-limit',
    drift: 'drift',
    epoch: 'epoch',
  };
  for (const [key, raw] of Object.entries(numbers) as Array<[keyof typeof numbers, string | undefined]>) {
    const value = numberOption(flags[key], asTyped(flags[key], raw));
    if (value !== undefined) options[key] = value;
  }
  if (args.token !== undefined && args.tokenFile !== undefined) throw new ConfigError('Invalid option --token-file: contradicts --token; give one of them');
  if (args.token !== undefined) options.token = args.token;
  if (args.tokenFile !== undefined) options.tokenFile = args.tokenFile;
  if (args.latency !== undefined) options.latencyMs = parseLatency(args.latency);
  if (args.fault !== undefined) options.faults = parseFaults(args.fault);
  if (args.notFoundShape !== undefined) options.notFoundShape = args.notFoundShape as NotFoundShape;
  if (args.forbid !== undefined) options.forbidden = args.forbid.split(',').map((op) => op.trim()) as Operation[];
  if (args.variedPrices) options.variedPrices = true;
  const outage = outageOf(args);
  if (outage) options.outage = outage;
  return options;
}

/** A path as one shell word: quoted unless it needs no quotes. */
function shellWord(text: string): string {
  return /^[\w./~-]+$/.test(text) && !text.startsWith('~') ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The sandbox's flags, each with its default and its help. */
function sandboxFlags(yargs: Argv) {
  return yargs
    .option('port', { type: 'number', default: D.port, describe: 'port to listen on (0 picks a free one)' })
    .option('host', { type: 'string', default: D.host, describe: 'address to listen on' })
    .option('rpm', { type: 'number', requiresArg: true, describe: `requests allowed per window (default ${D.rpm})` })
    .option('window-ms', { type: 'number', requiresArg: true, describe: `rate window length in ms (default ${D.windowMs})` })
    .option('credits', { type: 'number', requiresArg: true, describe: `starting credit balance (default ${D.credits})` })
    .option('threshold', { type: 'number', requiresArg: true, describe: `low_credit_balance_min_threshold (default ${D.threshold})` })
    .option('token', { type: 'string', requiresArg: true, describe: 'the token it accepts (default: a new one at each start)' })
    .option('token-file', {
      type: 'string',
      requiresArg: true,
      describe: 'keep the token in this file: read when it exists, else a new one is written there; every restart then has the same token',
    })
    .option('latency', { type: 'string', describe: 'latency per request in ms: MS or MIN-MAX (default 0)' })
    .option('fault', { type: 'string', array: true, describe: `inject faults: KIND=P, KIND one of ${FAULTS.join(', ')}` })
    .option('not-found-rate', { type: 'number', requiresArg: true, describe: `share of ordinary keys never found (default ${D.notFoundRate})` })
    .option('seed', { type: 'number', requiresArg: true, describe: 'seed for latency and faults, so runs repeat' })
    .option('outage-after', {
      type: 'string',
      requiresArg: true,
      describe: 'an outage of the lookups begins this long after the start, e.g. 30s (default: none)',
    })
    .option('outage-for', { type: 'string', requiresArg: true, describe: 'how long the outage lasts, e.g. 2m (default: for good)' })
    .option('outage-kind', { type: 'string', requiresArg: true, describe: 'how lookups fail while down: 503, reset or hang (default 503)' })
    .option('not-found-shape', {
      type: 'string',
      requiresArg: true,
      describe: 'how a lookup that finds nothing answers: empty (lead: {}), null, absent (data: {}), code1027 or http404 (default empty)',
    })
    .option('companies', {
      type: 'number',
      requiresArg: true,
      describe: `companies a found domain matches; more than 1 answers an array (default ${D.companiesPerDomain})`,
    })
    .option('forbid', { type: 'string', requiresArg: true, describe: 'operations answered 403 / code 1008, e.g. lookup_email,mx (default none)' })
    .option('daily-limit', { type: 'number', requiresArg: true, describe: 'keyed requests answered per day, then code 1017 (default: no limit)' })
    .option('varied-prices', { type: 'boolean', describe: 'person leads carry phones (+2 credits each); role addresses (info@, sales@, ...) cost 2' })
    .option('drift', {
      type: 'number',
      requiresArg: true,
      describe: 'people change jobs: at each new epoch this share of found people answer a new title and company, a tenth as many not found (default 0)',
    })
    .option('epoch', {
      type: 'number',
      requiresArg: true,
      describe: 'start at this epoch, as after N days of --drift: restart with --epoch 1, 2, ... to see answers change (default 0)',
    })
    .epilogue(
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

export function sandboxCommand(io: CliIo): CommandModule<object, SandboxArgs> {
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
      const token = args.tokenFile === undefined ? sandbox.token : `"$(cat ${shellWord(args.tokenFile)})"`;
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
