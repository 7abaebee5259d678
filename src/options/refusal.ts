// How a value that breaks a rule is refused: the rule's words (rules.ts) are the same whichever
// door the value came in by; only the way the option is named is the door's:
//
//   flag     Invalid option --rpm: must be a positive integer, got 'abc'
//   config   Invalid config file cfg.json: "rpm" must be a positive integer, got "abc"
//   library  Invalid option rpm: must be a positive integer, got 'abc'
//   sandbox  Invalid sandbox option rpm: must be an integer >= 1, got 0
import { inspect } from 'node:util';
import { ConfigError } from '../api/errors.js';
import { RuleBroken } from '../core/rule.js';
import * as rules from './rules.js';

/**
 * Where a value came in: it decides how the option is named in a message, never the rule. The
 * sandbox's options are a door of their own: a test server's, shown as Node shows a value.
 */
export type Door = 'flag' | 'library' | 'sandbox' | { configFile: string };

/** The value of option `name` as `door` gave it, by its rule; undefined when not given. ConfigError when it breaks the rule. */
/** A value read by `rule` outside the registry (a LeadClient's option, a tuning knob), worded for `door`. */
export function checked<T>(raw: unknown, door: Door, name: string, flag: string, rule: rules.Rule<T>): T {
  try {
    return rule(raw);
  } catch (error) {
    if (!(error instanceof RuleBroken)) throw error;
    throw brokenAt(door, name, flag, error);
  }
}

function brokenAt(door: Door, name: string, flag: string, error: RuleBroken): ConfigError {
  if (door === 'sandbox')
    return new ConfigError(`Invalid sandbox option ${name}: ${error.rule}${error.whole ? '' : `, got ${inspect(error.got)}`}${error.hint}`);
  const got = error.whole ? '' : `, got ${typeof door === 'object' ? (JSON.stringify(error.got) ?? String(error.got)) : rules.shown(error.got)}`;
  const said = `${error.rule}${got}${error.hint}`;
  if (typeof door === 'object') return new ConfigError(`Invalid config file ${door.configFile}: "${name}" ${said}`);
  return new ConfigError(`Invalid option ${door === 'flag' ? flag : name}: ${said}`);
}

/** A value refused by a check of its own (no rule of rules.ts covers it), worded for `door`. */
export function refused(door: Door, name: string, rule: string, got: unknown): ConfigError {
  return brokenAt(door, name, name, new RuleBroken(rule, got));
}

/** The library door's word for a value no rule of the registry covers (the input, the output, ...). */
export function invalid(name: string, rule: string, got: unknown): ConfigError {
  return new ConfigError(`Invalid option ${name}: ${rule}, got ${rules.shown(got)}`);
}
