// Text that reaches a CI log. A runner reads every line a step writes to stdout or stderr, and
// obeys two forms of workflow command in it: a line that starts with `::` (after white space:
// `::error file=…::`, `::add-mask::`, `::stop-commands::`) and the older `##[command]`, which it
// finds anywhere in a line (GitHub's 2020 advisory on `set-env` tells what a command smuggled in
// with data can do). A header name, a file name, a cell or the API's
// message holding either would be obeyed, so every line lead-enrich writes for a person or a
// program passes through logText where it is written (cli/cli-process.ts, store/exit-flush.ts, the
// progress line on a terminal): its own commands alone are written as they are (CliIo.command).
// The escapes are JSON's own (`\u003a`, `\u0023`), as terminal-text.ts writes DEL and C1: a JSON
// text passing through stays JSON, the same value once parsed.

/** A line that starts with `::` after white space (a line feed ends a line; .NET's TrimStart, which the runner uses, passes over the rest). */
const COMMAND_START = /^([^\S\n]*):(?=:)/gm;
/** The older form, anywhere in a line. */
const OLD_COMMAND = /(?<=#)#(?=\[)/g;

/**
 * `text` (one line or several) as a CI log may be given it: a line that would begin a workflow
 * command has its first colon written `\u003a`, and `##[` is written `#\u0023[`. Text holding
 * neither (nearly all of it) is returned as it is.
 */
export function logText(text: string): string {
  if (!text.includes('::') && !text.includes('##[')) return text;
  return oldCommandsEscaped(text.replace(COMMAND_START, '$1\\u003a'));
}

/** `##[` written `#\u0023[`, wherever it is: also inside a workflow command lead-enrich writes (its message and properties). */
export function oldCommandsEscaped(text: string): string {
  return text.replace(OLD_COMMAND, '\\u0023');
}
