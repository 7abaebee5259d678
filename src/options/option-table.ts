// An option's value read by its rule (registry.ts), worded for the door it came in by (refusal.ts);
// and the doors of values the command line hands on raw.
import { caller, said } from '../api/caller-words.js';
import { OPTIONS, flagOf, type OptionName, type RuledName, type OptionValue } from './registry.js';
import { checked, type Door } from './refusal.js';
import type * as rules from './rules.js';

export type { OptionName, OptionValue } from './registry.js';

/** The value of option `name` as `door` gave it, by its rule; undefined when not given. ConfigError when it breaks the rule. */
export function readOption<K extends RuledName>(name: K, raw: unknown, door: Door): OptionValue<K> | undefined {
  if (raw === undefined) return undefined;
  return checked(raw, door, name, flagOf(name), OPTIONS[name].rule as rules.Rule<OptionValue<K>>);
}

/** The door of a value read outside a run's options (a command's argument, a public helper's): the reader's. */
export function readerDoor(): Door {
  return caller() === 'cli' ? 'flag' : 'library';
}

/** Option `name` as the reader gives it (api/caller-words.ts): `--column` on the command line, `column` in a program. */
export function optionWord(name: OptionName): string {
  return said({ cli: flagOf(name), library: name });
}

/**
 * Option `name` with what it takes, as the reader would give it: `--by email|url|domain` or
 * `by: 'email', 'url' or 'domain'`; `--column NAME` or `column`, when a program's words need no value.
 */
export function optionAsked(name: OptionName, cli: string, library?: string): string {
  return said({ cli: `${flagOf(name)} ${cli}`, library: library === undefined ? name : `${name}: ${library}` });
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

/**
 * The files the command line read its configuration from (the config file, its tokenFile): like
 * the input and the store, no output may replace them (run/settings.ts). A symbol, as DOORS.
 */
export const CONFIG_FILES: unique symbol = Symbol('lead-enrich.config-files');
export type ConfigFiles = ReadonlyArray<{ option: string; path: string }>;

export function withConfigFiles<T extends object>(options: T, files: ConfigFiles): T {
  return Object.assign(options, { [CONFIG_FILES]: files });
}

export function configFilesOf(options: object): ConfigFiles {
  return (options as { [CONFIG_FILES]?: ConfigFiles })[CONFIG_FILES] ?? [];
}
