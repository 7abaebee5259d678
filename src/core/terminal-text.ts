// Text that reaches a terminal: a header cell, a report's footer, the API's message, an account's
// plan name, a value typed on stdin. A control character in it would be obeyed by the terminal
// (ESC ]52 sets the clipboard, ESC [2J clears the screen, the C1 CSI U+009B does what ESC [ does),
// so it is shown escaped, as less and git (core.quotePath) show one; printable Unicode is kept.
// The invisible format controls are escaped too: a bidi override (U+202E) or isolate (U+2066-U+2069)
// makes a terminal show text in another order than it holds ("Trojan Source", CVE-2021-42574: a
// header `\u202eliame` reads as `email`), and the zero-width ones hide characters; the joiners
// that emoji and scripts need (U+200C, U+200D) and the tag characters of flags are kept.
// Every line the command line writes for a person passes through terminalText (the CLI's fatal
// line, its notices, the summary, the text outputs); JSON outputs through jsonText.

/**
 * The format controls that reorder or hide text: the soft hyphen, the Arabic letter mark, the
 * Mongolian vowel separator, the zero-width space, the LTR/RTL marks, the line and paragraph
 * separators, the bidi embeddings and overrides (U+202A-U+202E), the word joiner and invisible
 * operators (U+2060-U+2064), the bidi isolates and the deprecated format controls (U+2066-U+206F),
 * the zero-width no-break space (BOM) and the interlinear annotation marks.
 */
const FORMAT = '\u00ad\u061c\u180e\u200b\u200e\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb';
/** C0 controls, DEL, C1 controls and the format controls above. */
const CONTROLS = new RegExp(`[\\u0000-\\u001f\\u007f-\\u009f${FORMAT}]`, 'g');
const CONTROLS_BUT_LF = new RegExp(`[\\u0000-\\u0009\\u000b-\\u001f\\u007f-\\u009f${FORMAT}]`, 'g');
/** What JSON.stringify leaves as it is and a terminal would obey: DEL, C1 and the format controls. */
const JSON_CONTROLS = new RegExp(`[\\u007f-\\u009f${FORMAT}]`, 'g');
const NAMED: Record<string, string> = { '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/**
 * One control character as it is written: TAB, LF and CR by name, the other C0 controls as `\xHH`,
 * DEL, C1 and the format controls as `\uHHHH` (JSON's own escape, so that a JSON text passing
 * through stays JSON).
 */
function escaped(c: string): string {
  const code = c.charCodeAt(0);
  return NAMED[c] ?? (code < 0x20 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
}

/**
 * `text` as a terminal may be given it: every C0 control, DEL, C1 control and format control
 * escaped (`\x1b`, `\u009b`, `\t`, `\u202e`). `lines`: the text is several lines, and its line
 * feeds are kept (a summary, a table); otherwise it is one line, and a line feed in it is shown as
 * `\n` too.
 */
export function terminalText(text: string, lines: 'lines' | 'line' = 'line'): string {
  return text.replace(lines === 'lines' ? CONTROLS_BUT_LF : CONTROLS, escaped);
}

/** JSON.stringify, with DEL, the C1 and the format controls escaped as well as C0 (a JSON output read on a terminal is text too). */
export function jsonText(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(JSON_CONTROLS, escaped);
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
