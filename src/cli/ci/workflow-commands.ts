// GitHub Actions' workflow commands, written as the runner reads them: `::name prop=value,…::message`
// on a line of its own. The runner undoes exactly these escapes (its ActionCommand.Unescape, as
// @actions/core's command.ts writes them): `%`, CR and LF in a message; in a property also `:` and
// `,`, which would otherwise end the property or the properties. A file name or a message that holds
// them then stays inside its own property or message, and cannot start a command of its own; the
// older form `##[`, which the runner reads anywhere in a line, is written escaped (core/log-lines.ts).
import { oldCommandsEscaped } from '../../core/log-lines.js';

/** A message: `%`, CR and LF escaped. */
export function escapeData(text: string): string {
  return oldCommandsEscaped(text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A'));
}

/** A property's value: the message's escapes, and `:` and `,`. */
export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

export type CommandProperties = Record<string, string | number | undefined>;

/** One workflow command's line: `::error file=a.csv,line=3,title=…::message` (properties left out when undefined). */
export function workflowCommand(name: string, properties: CommandProperties, message: string): string {
  const props = Object.entries(properties)
    .filter((entry): entry is [string, string | number] => entry[1] !== undefined)
    .map(([key, value]) => `${key}=${escapeProperty(String(value))}`)
    .join(',');
  return `::${name}${props ? ` ${props}` : ''}::${escapeData(message)}`;
}
