// Text that reaches a terminal: a header cell, a report's footer, the API's message, an account's
// plan name, a value typed on stdin. A control character in it would be obeyed by the terminal
// (ESC ]52 sets the clipboard, ESC [2J clears the screen, the C1 CSI U+009B does what ESC [ does),
// so it is shown escaped, as less and git (core.quotePath) show one; printable Unicode is kept.
// Every line the command line writes for a person passes through terminalText (the CLI's fatal
// line, its notices, the summary, the text outputs); JSON outputs through jsonText.

/** C0 controls, DEL and C1 controls: U+0000-U+001F, U+007F-U+009F. */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;
const CONTROLS_BUT_LF = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g;
const NAMED: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * One control character as it is written: TAB, LF and CR by name, the other C0 controls as `\xHH`,
 * DEL and C1 as `\u00HH` (JSON's own escape, so that a JSON text passing through stays JSON).
 */
function escaped(c: string): string {
  const code = c.charCodeAt(0);
  const hex = code.toString(16).padStart(2, '0');
  return NAMED[c] ?? (code < 0x20 ? `\\x${hex}` : `\\u00${hex}`);
}

/**
 * `text` as a terminal may be given it: every C0 control, DEL and C1 control escaped (`\x1b`,
 * `\u009b`, `\t`). `lines`: the text is several lines, and its line feeds are kept (a summary, a
 * table); otherwise it is one line, and a line feed in it is shown as `\n` too.
 */
export function terminalText(text: string, lines: 'lines' | 'line' = 'line'): string {
  return text.replace(lines === 'lines' ? CONTROLS_BUT_LF : CONTROLS, escaped);
}

/** JSON.stringify, with DEL and the C1 controls escaped as well as C0 (a JSON output read on a terminal is text too). */
export function jsonText(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(/[\u007f-\u009f]/g, escaped);
}

/** How much of a value a message echoes: a key, a flag's value. */
export const SHOWN_LENGTH = 200;

/**
 * A value the user gave, echoed in a message: quoted, escaped, and cut to SHOWN_LENGTH characters
 * with its whole length said (a 300 MB stdin is not echoed whole).
 */
export function shownValue(value: string, max = SHOWN_LENGTH): string {
  if (value.length <= max) return `'${terminalText(value)}'`;
  // Never half of a surrogate pair.
  const end = /[\ud800-\udbff]/.test(value[max - 1]!) ? max - 1 : max;
  return `'${terminalText(value.slice(0, end))}…' (${value.length.toLocaleString('en-US')} characters)`;
}
