// One rule per option, for every door a value comes through (so that a value is judged, and
// refused, in the same words whichever way it came): the command line's flags,
// the --config file and the library's options all read a run option through this table, so a bad
// value gets the same rule text whichever door it came in by. Only the framing is the door's:
//
//   flag     Invalid option --rpm: must be a positive integer, got 'abc'
//   config   Invalid config file cfg.json: "rpm" must be a positive integer, got "abc"
//   library  Invalid option rpm: must be a positive integer, got 'abc'
//
// Every run option the command line has is also a config-file key and a library option, under the
// table's name (the library's `tuning.windowMs` is the one exception, spelt as it always was).
import { ConfigError } from '../api/errors.js';
import { durationMs } from '../core/duration.js';
import { RuleBroken } from '../core/rule.js';
import * as rules from './rules.js';

interface OptionRule<T> {
  /** The command line's flag. */
  flag: string;
  read: rules.Rule<T>;
}

const option = <T>(flag: string, read: rules.Rule<T>): OptionRule<T> => ({ flag, read });

export const OPTIONS = {
  by: option('--by', rules.kinds),
  column: option('--column', rules.columns),
  with: option('--with', rules.extras),
  delimiter: option('--delimiter', rules.delimiter),
  encoding: option('--encoding', rules.encoding),
  header: option('--header', rules.yesOrNo),
  sheet: option('--sheet', rules.sheet),
  format: option('--format', rules.oneOf(['csv', 'jsonl', 'xlsx'] as const)),
  prefix: option('--prefix', rules.prefix),
  fields: option('--fields', rules.fields),
  fill: option('--fill', rules.fill),
  overwrite: option('--overwrite', rules.yesOrNo),
  onlyMissing: option('--only-missing', rules.columnNames),
  report: option('--report', rules.reportFile),
  skipLines: option('--skip-lines', rules.nonNegativeInteger),
  limit: option('--limit', rules.positiveInteger),
  confirmAbove: option('(none: config file only)', rules.nonNegativeInteger),
  rpm: option('--rpm', rules.positiveInteger),
  concurrency: option('--concurrency', rules.positiveInteger),
  minCredits: option('--min-credits', rules.nonNegativeInteger),
  budget: option('--budget', rules.nonNegativeInteger),
  retries: option('--retries', rules.nonNegativeInteger),
  maxErrors: option('--max-errors', rules.maxErrors),
  maxAge: option('--max-age', durationMs),
  patience: option('--patience', durationMs),
  refresh: option('--refresh', rules.yesOrNo),
  store: option('--store', rules.nonEmptyString),
  redis: option('--redis', rules.nonEmptyString),
  shard: option('--shard', rules.shard),
  windowMs: option('--rate-window', rules.positiveInteger),
  timeoutMs: option('--request-timeout', rules.timerMs),
  baseUrl: option('--base-url', rules.nonEmptyString),
  token: option('(none: LEAD_API_TOKEN)', rules.nonEmptyString),
  tokenFile: option('(none)', rules.nonEmptyString),
  proxy: option('(none: HTTPS_PROXY)', rules.proxyUrl),
} as const;

export type OptionName = keyof typeof OPTIONS;
export type OptionValue<K extends OptionName> = ReturnType<(typeof OPTIONS)[K]['read']>;

/** Where a value came in: it decides how the option is named in a message, never the rule. */
export type Door = 'flag' | 'library' | { configFile: string };

/** The value of option `name` as `door` gave it, by its rule; undefined when not given. ConfigError when it breaks the rule. */
export function readOption<K extends OptionName>(name: K, raw: unknown, door: Door): OptionValue<K> | undefined {
  if (raw === undefined) return undefined;
  return checked(raw, door, name, OPTIONS[name].flag, OPTIONS[name].read as rules.Rule<OptionValue<K>>);
}

/** A value read by `rule` outside the table (a LeadClient's option, a tuning knob), worded for `door`. */
export function checked<T>(raw: unknown, door: Door, name: string, flag: string, rule: rules.Rule<T>): T {
  try {
    return rule(raw);
  } catch (error) {
    if (!(error instanceof RuleBroken)) throw error;
    throw brokenAt(door, name, flag, error);
  }
}

function brokenAt(door: Door, name: string, flag: string, error: RuleBroken): ConfigError {
  const got = error.whole ? '' : `, got ${typeof door === 'object' ? JSON.stringify(error.got) ?? String(error.got) : rules.shown(error.got)}`;
  const said = `${error.rule}${got}${error.hint}`;
  if (typeof door === 'object') return new ConfigError(`Invalid config file ${door.configFile}: "${name}" ${said}`);
  return new ConfigError(`Invalid option ${door === 'flag' ? flag : name}: ${said}`);
}

/** The library door's word for a value no rule of the table covers (the input, the output, ...). */
export function invalid(name: string, rule: string, got: unknown): ConfigError {
  return new ConfigError(`Invalid option ${name}: ${rule}, got ${rules.shown(got)}`);
}
