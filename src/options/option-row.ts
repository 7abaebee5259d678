// The shape of an option's row: the run's options (registry.ts), the other commands' flags
// (command-flags.ts) and the sandbox's (sandbox/flags.ts) are tables of such rows, and the
// command line's yargs options are built from them (cli/flag-options.ts).
import type { Rule } from './rules.js';

export interface OptionRow {
  /** The command line's flag, without its dashes; none: not a flag. */
  readonly flag?: string;
  readonly alias?: string;
  /** How yargs parses the flag (`number` only so that --help says `[number]`: the rule reads the text as typed). */
  readonly type?: 'string' | 'number' | 'boolean';
  /** The flag takes every value after it, up to the next flag (`--fault a=0.1 b=0.2`), as a list. */
  readonly array?: true;
  /** The flag may stand without a value (read as ''); else yargs refuses it bare. */
  readonly bare?: true;
  /** The command refuses to run without the flag. */
  readonly required?: true;
  /** Stands in for the flag when the flag is not given. */
  readonly env?: string;
  /** Also a key of the config file. */
  readonly config?: true;
  /** Also an option of enrich(). */
  readonly library?: true;
  readonly rule?: Rule<unknown>;
  readonly default?: unknown;
  /** yargs fills the default in when the flag is not given, and --help shows it as `[default: …]`. */
  readonly preset?: true;
  /** How --help shows the default (as typed on the command line). */
  readonly show?: (value: never) => string;
  /** `{env}` and `{default}` (or `{default of NAME}`) are filled from the rows. */
  readonly help?: string;
}

/** A table of rows, by name. */
export type OptionRows = Readonly<Record<string, OptionRow>>;

/** The help text of row `name` of `table`, its environment variable and defaults filled in from the rows. */
export function helpIn(table: OptionRows, name: string): string {
  const { help = '', env = '' } = table[name]!;
  return help.replace('{env}', env).replace(/\{default(?: of (\w+))?\}/, (_, other: string | undefined) => shownDefault(table[other ?? name]!));
}

/** The default as --help shows it. */
export function shownDefault({ default: value, show }: OptionRow): string {
  return show ? (show as (value: unknown) => string)(value) : String(value);
}

/** `only-missing` as yargs hands it on: `onlyMissing`. */
export const argName = (flag: string): string => flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
