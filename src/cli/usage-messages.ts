// yargs' usage messages, said the way a person needs them: what was typed, and what to type
// instead. "Unknown argument: colum" becomes "Unknown option --colum: did you mean --column?";
// "Did you mean enrich?" becomes "Unknown command 'enrch': did you mean enrich?"; "Not enough
// non-option arguments: got 0, need at least 1" becomes a sentence naming what is missing.
import { didYouMean } from '../options/did-you-mean.js';

/** What yargs' fail() hands over as its third argument: the usage of the command being parsed. */
export interface UsageContext {
  /** Options of the command (and its parents), by name. */
  getDescriptions(): Record<string, unknown>;
  /** The command's own subcommands ([usage, description, ...]); empty for a leaf command. */
  getCommands(): ReadonlyArray<readonly unknown[]>;
}

/** What each command needs when its arguments are missing. */
const MISSING: Record<string, string> = {
  enrich: 'Give the CSV file to enrich, or - to read it from standard input: lead-enrich enrich contacts.csv',
  lookup: 'Give the kind of lookup and the key: lead-enrich lookup email jane.doe@acme.com (or url, domain)',
  mx: 'Give the domain: lead-enrich mx acme.com',
  whois: 'Give the domain: lead-enrich whois acme.com',
};

/** What a required option is for, with an example, when yargs says it is missing. */
const REQUIRED_OPTION: Record<string, string> = {
  'older-than': 'say how old the answers to delete are: lead-enrich store prune --older-than 90d',
};

/** Whether `name` was typed as an option (`--name`, `--name=x`, `--no-name`, `-n`, `-xn`). */
function typedAsOption(name: string, argv: readonly string[]): boolean {
  return argv.some(
    (t) => t === `--${name}` || t.startsWith(`--${name}=`) || t === `--no-${name}` || (name.length === 1 && /^-[^-]/.test(t) && t.slice(1).includes(name)),
  );
}

function flag(name: string): string {
  return name.length === 1 ? `-${name}` : `--${name}`;
}

/** The options a command knows, as typed (kebab-case: yargs lists each also in camelCase). */
function knownOptions(context: UsageContext | undefined): string[] {
  const names = Object.keys(context?.getDescriptions() ?? {});
  return names.filter((name) => !/[A-Z]/.test(name) && name.length > 1);
}

function commandNames(context: UsageContext | undefined): string[] {
  return (context?.getCommands() ?? []).map((entry) => String(entry[0]).split(' ')[0]!);
}

type Unknown = { kind: 'option' | 'command' | 'argument'; name: string; near: string | undefined };

/** One unknown name: an option, a command (where the command expects one) or an argument too many. */
function classify(name: string, argv: readonly string[], context: UsageContext | undefined): Unknown {
  // A one-letter option has no near miss worth naming.
  if (typedAsOption(name, argv)) return { kind: 'option', name, near: name.length > 1 ? didYouMean(name, knownOptions(context)) : undefined };
  const commands = commandNames(context);
  if (commands.length > 0) return { kind: 'command', name, near: didYouMean(name, commands) };
  return { kind: 'argument', name, near: undefined };
}

function unknownSaid(names: readonly string[], argv: readonly string[], context: UsageContext | undefined): string {
  const all = names.map((name) => classify(name, argv, context));
  // A command that is not one comes first: the options typed after it belong to no command yet.
  const command = all.find((u) => u.kind === 'command');
  if (command) {
    const commands = commandNames(context);
    return `Unknown command '${command.name}': ${command.near ? `did you mean ${command.near}?` : `the commands are ${commands.join(', ')}`}`;
  }
  const options = all.filter((u) => u.kind === 'option');
  if (options.length === 1) return `Unknown option ${flag(options[0]!.name)}${options[0]!.near ? `: did you mean --${options[0]!.near}?` : ''}`;
  if (options.length > 1) return `Unknown options: ${options.map((u) => `${flag(u.name)}${u.near ? ` (did you mean --${u.near}?)` : ''}`).join(', ')}`;
  return `Unexpected argument${all.length > 1 ? 's' : ''} ${all.map((u) => `'${u.name}'`).join(', ')}`;
}

/** "Unknown arguments: colum, wiht": each name once, as typed (yargs adds the camel-case alias it made). */
function unknownNames(list: string): string[] {
  const all = list.split(', ');
  return all.filter((name) => !(/[A-Z]/.test(name) && all.includes(name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`))));
}

/** The first word of the command line that names a command needing arguments. */
function commandTyped(argv: readonly string[]): string | undefined {
  return argv.find((token) => Object.hasOwn(MISSING, token));
}

/** "a, b or c". */
function either(words: readonly string[]): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

/** yargs' "Invalid values: Argument: kind, Given: "phone", Choices: ..." as the rule and what was given. */
function invalidChoice(text: string, argv: readonly string[]): string | undefined {
  const match = /^Invalid values:\s*Argument: ([^,]+), Given: (.*?), Choices: (.*)$/s.exec(text.trim());
  if (!match) return undefined;
  const [, name, given, choices] = match as unknown as [string, string, string, string];
  const words = [...choices.matchAll(/"([^"]*)"/g)].map((m) => m[1]!);
  const got = given.replace(/^"|"$/g, '');
  return `Invalid ${typedAsOption(name, argv) ? `option ${flag(name)}` : `<${name}>`}: must be ${either(words)}, got '${got}'`;
}

/** yargs' "Missing required argument: older-than": the option named as typed, and what it is for. */
function missingOption(text: string): string | undefined {
  const match = /^Missing required arguments?: (.*)$/s.exec(text.trim());
  if (!match) return undefined;
  const names = match[1]!.split(', ').map((name) => name.trim());
  return names.map((name) => `Missing option ${flag(name)}${REQUIRED_OPTION[name] ? `: ${REQUIRED_OPTION[name]}` : ''}`).join('; ');
}

/** yargs' message as the line lead-enrich prints (cli-process.ts adds the --help hint unless it ends in '?'). */
export function usageMessage(text: string, argv: readonly string[], context?: UsageContext): string {
  const unknown = /^Unknown arguments?: (.*)$/s.exec(text.trim());
  if (unknown) return unknownSaid(unknownNames(unknown[1]!), argv, context);
  const reworded = invalidChoice(text, argv) ?? missingOption(text);
  if (reworded) return reworded;
  if (/^Not enough non-option arguments/.test(text)) {
    const command = commandTyped(argv);
    if (command) return MISSING[command]!;
  }
  return text.trim().replace(/\.$/, '');
}
