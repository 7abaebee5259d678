// How a value that breaks its option's rule is refused: the rule (registry.ts) is the same whichever
// door the value came in by; only the way the option is named is the door's:
//
//   flag     Invalid option --rpm: must be a positive integer, got 'abc'
//   config   Invalid config file cfg.json: "rpm" must be a positive integer, got "abc"
//   library  Invalid option rpm: must be a positive integer, got 'abc'
import { inspect } from 'node:util';
import { ConfigError } from '../api/errors.js';
import { RuleBroken } from '../core/rule.js';
import { OPTIONS, flagOf, type RuledName, type OptionValue } from './registry.js';
import * as rules from './rules.js';

export type { OptionName, OptionValue } from './registry.js';

/**
 * Where a value came in: it decides how the option is named in a message, never the rule. The
 * sandbox's options are a door of their own: a test server's, shown as Node shows a value.
 */
export type Door = 'flag' | 'library' | 'sandbox' | { configFile: string };

/** The value of option `name` as `door` gave it, by its rule; undefined when not given. ConfigError when it breaks the rule. */
export function readOption<K extends RuledName>(name: K, raw: unknown, door: Door): OptionValue<K> | undefined {
  if (raw === undefined) return undefined;
  return checked(raw, door, name, flagOf(name), OPTIONS[name].rule as rules.Rule<OptionValue<K>>);
}

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
  if (door === 'sandbox') return new ConfigError(`Invalid sandbox option ${name}: ${error.rule}${error.whole ? '' : `, got ${inspect(error.got)}`}${error.hint}`);
  const got = error.whole ? '' : `, got ${typeof door === 'object' ? JSON.stringify(error.got) ?? String(error.got) : rules.shown(error.got)}`;
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

/**
 * The doors the values of an options object came in by, where not the library's: the command line
 * hands enrich() its values as typed, and they are read once, in settings, named as the user gave
 * them (a flag, a key of the config file). A symbol: no caller's option can clash with it, and a
 * spread of the options keeps it.
 */
export const DOORS: unique symbol = Symbol('lead-enrich.doors');
export type Doors = { [name: string]: Door };

export function withDoors<T extends object>(options: T, doors: Doors): T {
  return Object.assign(options, { [DOORS]: doors });
}

/** The door the value of `name` in `options` came in by. */
export function doorOf(options: object, name: string): Door {
  return (options as { [DOORS]?: Doors })[DOORS]?.[name] ?? 'library';
}
