// The one order in which an option's value is looked for (docs/reference.md, "Precedence"): the
// flag as typed, else its environment variable, else the config file's key. A value comes back
// with the door it came in by, so that the rule reading it names it as the user gave it; an
// environment variable stands in for its flag and is named as the flag.
import { processEnv } from '../api/environment.js';
import { readOption } from './option-table.js';
import { row as rowOf, type OptionName, type OptionValue, type RuledName } from './registry.js';
import type { Door } from './refusal.js';

/** Where an option's value may come from. */
export interface ValueSources {
  /** The flag's value as typed; undefined when it was not given (or the option has no flag). */
  flag?: unknown;
  /** The config file's values (keys are option names), and how a message names that file. */
  file: Readonly<Record<string, unknown>>;
  fileDoor: Door;
  /** The environment read for the option's variable (default: this process's). An empty value is unset. */
  env?: NodeJS.ProcessEnv;
}

/** Option `name`'s raw value from the first source that has one, with its door; undefined when none has. */
export function givenValue(name: OptionName, sources: ValueSources): readonly [unknown, Door] | undefined {
  if (sources.flag !== undefined) return [sources.flag, 'flag'];
  const row = rowOf(name);
  const fromEnv = row.env === undefined ? undefined : (sources.env ?? processEnv())[row.env];
  if (fromEnv !== undefined && fromEnv !== '') return [fromEnv, 'flag'];
  const inFile = row.config ? sources.file[name] : undefined;
  return inFile === undefined ? undefined : [inFile, sources.fileDoor];
}

/** Option `name`'s value from the first source that has one, read by its rule; undefined when none has. */
export function readGiven<K extends RuledName>(name: K, sources: ValueSources): OptionValue<K> | undefined {
  const given = givenValue(name, sources);
  return given === undefined ? undefined : readOption(name, given[0], given[1]);
}
