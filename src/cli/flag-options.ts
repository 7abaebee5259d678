// The yargs options of the registry's flags (options/registry.ts): type, alias and help as the rows say.
import type { Argv } from 'yargs';
import { helpOf, row as rowOf, type OptionName } from '../options/registry.js';

/** Adds the flags of `names`, in that order, to `yargs`. */
export function flagOptions<T>(yargs: Argv<T>, names: readonly OptionName[]): Argv<T> {
  let argv = yargs;
  for (const name of names) {
    const row = rowOf(name);
    if (row.flag === undefined) continue;
    argv = argv.option(row.flag, {
      type: row.type ?? 'string',
      ...(row.alias === undefined ? {} : { alias: row.alias }),
      ...(row.type === 'boolean' ? {} : { requiresArg: true }),
      describe: helpOf(name),
    }) as unknown as Argv<T>;
  }
  return argv;
}
