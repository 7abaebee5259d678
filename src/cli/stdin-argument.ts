// yargs turns a lone `-` positional into `true` when it re-parses a command's arguments, so the
// stdin input (`enrich -`) is carried past it under another name and restored by the command.
// A `-` that is the value of -o / --output / --errors / --changes is left alone: yargs keeps those.
export const STDIN_ARGUMENT = '\u0000stdin';

const VALUE_OPTIONS = new Set(['-o', '--output', '--errors', '--changes']);

export function protectStdin(argv: string[]): string[] {
  return argv.map((arg, i) => (arg === '-' && !VALUE_OPTIONS.has(argv[i - 1] ?? '') ? STDIN_ARGUMENT : arg));
}
