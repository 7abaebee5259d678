// The yargs options of the registry's flags (options/registry.ts): type, alias and help as the rows
// say. A command that gives a flag another meaning in its own context (`--json` of `account` prints
// the account's data, not a run's summary) says so in its own words; the flag itself, its type and
// alias, is the row's: one definition of `--store`, `--json`, `--yes` and `--sandbox` for every command.
import type { Argv } from 'yargs';
import { helpOf, row as rowOf, type OptionName } from '../options/registry.js';

/** A command's own words for a flag: its help there, and how its default is shown. */
export interface FlagWords {
  describe: string;
  defaultDescription?: string;
}

/** Adds the flags of `names`, in that order, to `yargs`; `words` says what they mean in this command, where it differs. */
export function flagOptions<T>(yargs: Argv<T>, names: readonly OptionName[], words: Partial<Record<OptionName, FlagWords>> = {}): Argv<T> {
  let argv = yargs;
  for (const name of names) {
    const row = rowOf(name);
    if (row.flag === undefined) continue;
    argv = argv.option(row.flag, {
      type: row.type ?? 'string',
      ...(row.alias === undefined ? {} : { alias: row.alias }),
      ...(row.type === 'boolean' ? {} : { requiresArg: true }),
      describe: helpOf(name),
      ...words[name],
    }) as unknown as Argv<T>;
  }
  return argv;
}
