// The yargs options of the command line's flags, built from rows (options/option-row.ts): the
// run's options (options/registry.ts), the other commands' (options/command-flags.ts) and the
// sandbox's (sandbox/flags.ts); and their values read back by the rows' rules. Type, alias and help
// are the rows'. A command that gives a flag another meaning in its own context (`--json` of
// `account` prints the account's data, not a run's summary) says so in its own words; the flag
// itself, its type and alias, is the row's: one definition of `--store`, `--json`, `--yes` and
// `--sandbox` for every command.
import type { Argv } from 'yargs';
import { argName, helpIn, shownDefault, type OptionRow, type OptionRows } from '../options/option-row.js';
import { checked } from '../options/refusal.js';
import { OPTIONS, type OptionName } from '../options/registry.js';
import type { Rule } from '../options/rules.js';
import { asTyped } from './number-flags.js';

/** A command's own words for a flag: its help there, and how its default is shown. */
export interface FlagWords {
  describe: string;
  defaultDescription?: string;
}

/** Adds the flags of `table` named in `names` (all of them by default), in that order, to `yargs`; `words` says what they mean in this command, where it differs. */
export function tableOptions<T, N extends string>(
  yargs: Argv<T>,
  table: Readonly<Record<N, OptionRow>>,
  names: readonly N[] = Object.keys(table) as N[],
  words: Partial<Record<N, FlagWords>> = {},
): Argv<T> {
  let argv = yargs;
  for (const name of names) {
    const row: OptionRow = table[name];
    if (row.flag === undefined) continue;
    argv = argv.option(row.flag, {
      type: row.type ?? 'string',
      ...(row.alias === undefined ? {} : { alias: row.alias }),
      ...(row.array ? { array: true } : {}),
      ...(row.type === 'boolean' || row.bare ? {} : { requiresArg: true }),
      ...(row.required ? { demandOption: true } : {}),
      ...(row.preset ? { default: row.default, ...(row.show ? { defaultDescription: shownDefault(row) } : {}) } : {}),
      describe: helpIn(table, name),
      ...words[name],
    }) as unknown as Argv<T>;
  }
  return argv;
}

/** The registry's flags of `names` (tableOptions of the run's options). */
export function flagOptions<T>(yargs: Argv<T>, names: readonly OptionName[], words: Partial<Record<OptionName, FlagWords>> = {}): Argv<T> {
  return tableOptions(yargs, OPTIONS, names, words);
}

/** A flag's value as its row's rule reads it; without a rule, as yargs parsed it. */
type ValueOf<R> = R extends { rule: Rule<infer V> } ? V : R extends { type: 'boolean' } ? boolean : string;
type Values<R extends OptionRows> = { [N in keyof R]?: ValueOf<R[N]> };

/**
 * Flag `name` of `table` as `args` (yargs') hold it, read as typed (number-flags.ts) by its row's
 * rule and refused as the flag; undefined when not given. A flag of one value given twice is read
 * as its values joined with commas, as typed.
 */
export function readFlag<R extends OptionRows, N extends keyof R & string>(table: R, name: N, args: object): ValueOf<R[N]> | undefined {
  const { flag = name, rule, array } = table[name]!;
  const raw = asTyped(flag, (args as Record<string, unknown>)[argName(flag)]);
  if (raw === undefined) return undefined;
  const typed = Array.isArray(raw) && !array ? String(raw) : raw;
  return (rule === undefined ? typed : checked(typed, 'flag', name, `--${flag}`, rule)) as ValueOf<R[N]>;
}

/** Every flag of `table` that `args` hold, each read by readFlag, under its row's name. */
export function readFlags<R extends OptionRows>(table: R, args: object): Values<R> {
  const values: Record<string, unknown> = {};
  for (const name of Object.keys(table)) {
    const value = readFlag(table, name, args);
    if (value !== undefined) values[name] = value;
  }
  return values as Values<R>;
}
