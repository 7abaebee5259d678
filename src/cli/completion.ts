// What `lead-enrich completion` offers besides commands and option names (yargs' own): the values
// an option takes where they are few and known (--by, --with, --format), the sheets of the
// workbook being enriched for --sheet, and nothing for an option that takes a path or free text,
// so that the shell's own file completion applies. yargs offers a one-letter alias with two dashes
// too (`--o`), an option that does not exist: those are left out.
import path from 'node:path';
import { EXPORT_FORMATS } from '../options/command-flags.js';

type Done = (completions: string[]) => void;
type Fallback = (onCompleted: (error: unknown, completions?: string[]) => void) => void;
export type CompletionFunction = (current: string, argv: unknown, fallback: Fallback, done: Done) => void;

/** The values of an option, as typed after it. */
const VALUES: Record<string, readonly string[]> = {
  by: ['email', 'url', 'domain'],
  with: ['mx', 'whois', 'company'],
  format: ['csv', 'jsonl', 'xlsx'],
};

/** Where `store export` differs: it writes no workbook. */
const STORE_EXPORT_VALUES: Record<string, readonly string[]> = { format: [...EXPORT_FORMATS].sort() };

/** The values offered for `option` on this command line. */
function choicesOf(option: string, words: readonly string[]): readonly string[] {
  const exporting = words.includes('store') && words.includes('export');
  return (exporting ? STORE_EXPORT_VALUES[option] : undefined) ?? VALUES[option]!;
}

/** Options whose value is a comma list (a waterfall, several operations): each value once. */
const LISTS = new Set(['by', 'with']);

/** `--o`, `--d`: yargs' long spelling of a one-letter alias, which no parser accepts as typed. */
const BOGUS = /^--[^-](?:[:\t]|$)/;

/** "email,u" → "email,url", "email,domain" (not "email,email"). */
function valuesOf(option: string, current: string, words: readonly string[]): string[] {
  const values = choicesOf(option, words);
  if (!LISTS.has(option)) return values.filter((v) => v.startsWith(current));
  const comma = current.lastIndexOf(',');
  const given = current.slice(0, comma + 1);
  const taken = new Set(given.split(',').filter(Boolean));
  const last = current.slice(comma + 1);
  return values.filter((v) => !taken.has(v) && v.startsWith(last)).map((v) => `${given}${v}`);
}

/** The enrich command's input on the line (the first word after `enrich` that is no option), if a workbook. */
function workbookOn(words: readonly string[]): string | undefined {
  const at = words.indexOf('enrich');
  const input = at < 0 ? undefined : words.slice(at + 1, -1).find((word, i, all) => !word.startsWith('-') && !(all[i - 1] ?? '').startsWith('-'));
  return input && /\.xlsx$/i.test(input) ? path.resolve(input) : undefined;
}

async function sheetsOf(words: readonly string[]): Promise<string[]> {
  const input = workbookOn(words);
  if (!input) return [];
  const { sheetNamesOf } = await import('../read/open-workbook.js');
  return sheetNamesOf(input).catch(() => []);
}

/** Whether `word` is an option that was given a value (not a flag): what yargs parsed for it is no boolean. */
function takesValue(word: string, parsed: unknown): boolean {
  const name = /^--?([^-=][^=]*)$/.exec(word)?.[1];
  if (name === undefined) return false;
  const key = name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
  const value = (parsed as Record<string, unknown> | undefined)?.[key];
  return value !== undefined && typeof value !== 'boolean';
}

/**
 * The completion function for yargs, given the command line (`--get-yargs-completions` and the
 * words being completed). The sheets of a workbook are read before: yargs goes on with its checks
 * unless the function answers at once.
 */
export async function completeValues(argv: readonly string[]): Promise<CompletionFunction> {
  const at = argv.indexOf('--get-yargs-completions');
  const words = at < 0 ? [] : argv.slice(at + 1);
  const sheets = words.at(-2) === '--sheet' ? await sheetsOf(words) : [];
  return (current, parsed, fallback, done) => {
    const previous = words.at(-2) ?? '';
    const option = previous.startsWith('--') ? previous.slice(2) : undefined;
    if (option !== undefined && Object.hasOwn(VALUES, option)) return done(valuesOf(option, current, words));
    if (option === 'sheet') return done(sheets.filter((name) => name.startsWith(current)));
    // The value of another option (a path, a column): nothing offered, the shell completes file names.
    if (takesValue(previous, parsed) && !current.startsWith('-')) return done([]);
    fallback((_error, completions = []) => done(completions.filter((c) => !BOGUS.test(c))));
  };
}
