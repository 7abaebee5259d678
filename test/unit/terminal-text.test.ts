// core/terminal-text.ts: the one rule for text shown on a terminal (control characters escaped,
// printable Unicode kept), JSON with C1 escaped, and an echoed value cut.
import { describe, expect, it } from 'vitest';
import { jsonText, shownValue, terminalText } from '../../src/core/terminal-text.js';

describe('terminalText', () => {
  it('escapes every C0 control, DEL and every C1 control, and nothing else', () => {
    expect(terminalText('a\x1b]52;c;SGVsbG8=\x07b')).toBe('a\\x1b]52;c;SGVsbG8=\\x07b');
    expect(terminalText('\x1b[2J\u009b2J\u0085\u007f\x00')).toBe('\\x1b[2J\\u009b2J\\u0085\\u007f\\x00');
    expect(terminalText('tab\tcr\rlf\n')).toBe('tab\\tcr\\rlf\\n');
    for (let code = 0; code <= 0x9f; code += 1) {
      const shown = terminalText(String.fromCharCode(code));
      expect(shown.length === 1).toBe(code >= 0x20 && code < 0x7f);
    }
    // Printable Unicode stays: accents, CJK, emoji, the no-break space just past C1.
    expect(terminalText('Müller 東京 🙂 \u00a0é')).toBe('Müller 東京 🙂 \u00a0é');
  });

  it('escapes the bidi and invisible format controls (a header or API message shown in another order than it holds), and keeps the joiners', () => {
    // RLO, the isolates, the marks, ALM, ZWSP, word joiner, BOM, soft hyphen, line separator.
    expect(terminalText('\u202eliame')).toBe('\\u202eliame');
    expect(terminalText('a\u2066b\u2067c\u2068d\u2069e')).toBe('a\\u2066b\\u2067c\\u2068d\\u2069e');
    expect(terminalText('\u200e\u200f\u061c\u202a\u202b\u202c\u202d')).toBe('\\u200e\\u200f\\u061c\\u202a\\u202b\\u202c\\u202d');
    expect(terminalText('x\u200by\u2060z\ufeff\u00ad\u2028\u2029\u180e\ufff9', 'lines')).toBe('x\\u200by\\u2060z\\ufeff\\u00ad\\u2028\\u2029\\u180e\\ufff9');
    // Every character of the ranges named, and the neighbours that are printable text.
    for (const [from, to] of [
      [0x202a, 0x202e],
      [0x2060, 0x2064],
      [0x2066, 0x206f],
      [0xfff9, 0xfffb],
    ] as const) {
      for (let code = from; code <= to; code += 1) expect(terminalText(String.fromCharCode(code))).toBe(`\\u${code.toString(16)}`);
    }
    for (const kept of ['\u2027', '\u2030', '\u2065', '\u200c', '\u200d', '\u00ac', '\u00ae', '\u061b', '\u0627\u0644', '\ufffc'])
      expect(terminalText(kept)).toBe(kept);
    // Emoji joined by ZWJ and a flag of tag characters stay whole.
    expect(terminalText('👩\u200d💻 🏴\udb40\udc67\udb40\udc62\udb40\udc73\udb40\udc63\udb40\udc74\udb40\udc7f')).toBe(
      '👩\u200d💻 🏴\udb40\udc67\udb40\udc62\udb40\udc73\udb40\udc63\udb40\udc74\udb40\udc7f',
    );
  });

  it("keeps line feeds in a text of several lines ('lines'), and only them", () => {
    expect(terminalText('one\ntwo\r\n\x1b[31mthree', 'lines')).toBe('one\ntwo\\r\n\\x1b[31mthree');
  });

  it('is idempotent: escaped text holds no control character left to escape', () => {
    const once = terminalText('\x1b\u009b\n');
    expect(terminalText(once)).toBe(once);
  });
});

describe('jsonText', () => {
  it('escapes DEL and C1 as JSON escapes C0, and parses back to the same value', () => {
    const value = { name: 'a\x1b[2J\u009b2J\u007fz', list: ['\u0085'] };
    const text = jsonText(value, 2);
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(text).toContain('a\\u001b[2J\\u009b2J\\u007fz');
    expect(JSON.parse(text)).toEqual(value);
  });

  it('escapes the format controls too, and parses back to the same value', () => {
    const value = { header: '\u202eliame', message: 'a\u2066b\u2069\u200f' };
    const text = jsonText(value);
    expect(text).toBe('{"header":"\\u202eliame","message":"a\\u2066b\\u2069\\u200f"}');
    expect(JSON.parse(text)).toEqual(value);
  });

  it('passes through terminalText unchanged (a JSON output on stdout stays JSON)', () => {
    const text = jsonText({ a: '\u009b\x1b\n' }, 2);
    expect(terminalText(text, 'lines')).toBe(text);
  });
});

describe('shownValue', () => {
  it('quotes a short value, escaped', () => {
    expect(shownValue('jane\x1b@acme.com')).toBe("'jane\\x1b@acme.com'");
  });

  it('cuts a long value to 200 characters and says its length', () => {
    expect(shownValue('x'.repeat(130_000))).toBe(`'${'x'.repeat(200)}…' (130,000 characters)`);
  });

  it('never cuts a surrogate pair in half', () => {
    const shown = shownValue(`${'x'.repeat(199)}🙂${'y'.repeat(10)}`);
    expect(shown).toBe(`'${'x'.repeat(199)}…' (211 characters)`);
  });
});
