// The Examples section of every command's --help, laid out so that a command is never broken to
// fit: each command on a line of its own (copied as it is into a shell), its description on the
// next line, indented. yargs' own two-column examples wrap long commands in the middle.

/** An example: the command (`$0` for lead-enrich), and what it does. */
export type HelpExample = readonly [command: string, description: string];

export function examplesText(examples: readonly HelpExample[]): string {
  const lines = examples.flatMap(([command, description]) => [`  ${command.replace(/\$0/g, 'lead-enrich')}`, `      ${description}`]);
  // A blank line after it: the next section (exit statuses) is not read as one more example.
  return ['Examples:', ...lines, ''].join('\n');
}
