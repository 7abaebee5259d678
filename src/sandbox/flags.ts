// The `sandbox` command's flags, one row each, of the same shape as the run's options
// (options/option-row.ts), in the order --help lists them, under the names of the SandboxOptions
// they set; --outage-after, --outage-for and --outage-kind make one, `outage`. A number is read as
// typed and must be one; which numbers each option takes, the sandbox's options say (options.ts),
// to the command line as to a program.
import { ConfigError } from '../api/errors.js';
import type { Operation } from '../api/types.js';
import type { OptionRows } from '../options/option-row.js';
import * as rules from '../options/rules.js';
import { FAULT_KINDS, type FaultKind } from './faults.js';
import { latencyWords, SANDBOX_DEFAULTS as D } from './options.js';
import { outageKindOf } from './outage.js';

/** `--fault KIND=P ...`: the fault rates asked for. */
function faultRates(raw: unknown): Partial<Record<FaultKind, number>> {
  const faults: Partial<Record<FaultKind, number>> = {};
  for (const item of raw as string[]) {
    const [kind, rate] = item.split('=');
    const p = Number(rate);
    if (!FAULT_KINDS.includes(kind as FaultKind) || rate === undefined || !(p >= 0 && p <= 1)) {
      throw new ConfigError(`Invalid --fault: must be KIND=P with KIND one of ${FAULT_KINDS.join(', ')} and P from 0 to 1, got '${item}'`);
    }
    faults[kind as FaultKind] = p;
  }
  return faults;
}

/** `--forbid lookup_email,mx`: the operations named; which exist, the sandbox's options say. */
const operations = (raw: unknown): Operation[] =>
  String(raw)
    .split(',')
    .map((op) => op.trim()) as Operation[];
/** A number, read as typed; which it may be, the sandbox's options say. */
const numeric = { type: 'number', rule: rules.finiteNumber } as const;

export const SANDBOX_FLAGS = {
  port: { flag: 'port', ...numeric, bare: true, default: D.port, preset: true, help: 'port to listen on (0 picks a free one)' },
  host: { flag: 'host', type: 'string', bare: true, default: D.host, preset: true, help: 'address to listen on' },
  rpm: { flag: 'rpm', ...numeric, default: D.rpm, help: 'requests allowed per window (default {default})' },
  windowMs: { flag: 'window-ms', ...numeric, default: D.windowMs, help: 'rate window length in ms (default {default})' },
  credits: { flag: 'credits', ...numeric, default: D.credits, help: 'starting credit balance (default {default})' },
  threshold: { flag: 'threshold', ...numeric, default: D.threshold, help: 'low_credit_balance_min_threshold (default {default})' },
  token: { flag: 'token', type: 'string', help: 'the token it accepts (default: a new one at each start)' },
  tokenFile: {
    flag: 'token-file',
    type: 'string',
    help: 'keep the token in this file: read when it exists, else a new one is written there; every restart then has the same token',
  },
  latencyMs: { flag: 'latency', type: 'string', bare: true, rule: latencyWords, help: 'latency per request in ms: MS or MIN-MAX (default 0)' },
  faults: { flag: 'fault', type: 'string', array: true, bare: true, rule: faultRates, help: `inject faults: KIND=P, KIND one of ${FAULT_KINDS.join(', ')}` },
  notFoundRate: { flag: 'not-found-rate', ...numeric, default: D.notFoundRate, help: 'share of ordinary keys never found (default {default})' },
  seed: { flag: 'seed', ...numeric, help: 'seed for latency and faults, so runs repeat' },
  outageAfter: {
    flag: 'outage-after',
    type: 'string',
    rule: rules.duration,
    help: 'an outage of the lookups begins this long after the start, e.g. 30s (default: none)',
  },
  outageFor: { flag: 'outage-for', type: 'string', rule: rules.duration, help: 'how long the outage lasts, e.g. 2m (default: for good)' },
  outageKind: {
    flag: 'outage-kind',
    type: 'string',
    rule: rules.ruleOf('must be 503, reset or hang', outageKindOf),
    help: 'how lookups fail while down: 503, reset or hang (default 503)',
  },
  // Read by the sandbox's options, as a program's value is.
  notFoundShape: {
    flag: 'not-found-shape',
    type: 'string',
    help: 'how a lookup that finds nothing answers: empty (lead: {}), null, absent (data: {}), code1027 or http404 (default empty)',
  },
  companiesPerDomain: {
    flag: 'companies',
    ...numeric,
    default: D.companiesPerDomain,
    help: 'companies a found domain matches; more than 1 answers an array (default {default})',
  },
  forbidden: { flag: 'forbid', type: 'string', rule: operations, help: 'operations answered 403 / code 1008, e.g. lookup_email,mx (default none)' },
  dailyLimit: { flag: 'daily-limit', ...numeric, help: 'keyed requests answered per day, then code 1017 (default: no limit)' },
  variedPrices: { flag: 'varied-prices', type: 'boolean', help: 'person leads carry phones (+2 credits each); role addresses (info@, sales@, ...) cost 2' },
  drift: {
    flag: 'drift',
    ...numeric,
    help: 'people change jobs: at each new epoch this share of found people answer a new title and company, a tenth as many not found (default 0)',
  },
  epoch: {
    flag: 'epoch',
    ...numeric,
    help: 'start at this epoch, as after N days of --drift: restart with --epoch 1, 2, ... to see answers change (default 0)',
  },
} as const satisfies OptionRows;
