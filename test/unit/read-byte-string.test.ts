// Byte strings (UTF-8 bytes, one character per byte) and the check the summary uses to count the
// cells whose bytes are not valid UTF-8 (cli-contract "Input files", Encoding).
import { describe, expect, it } from 'vitest';
import { fromBytes, hasInvalidUtf8, toBytes } from '../../src/read/index.js';

const bytes = (...values: number[]) => String.fromCharCode(...values);

describe('hasInvalidUtf8', () => {
  it.each([
    ['empty', ''],
    ['ASCII', 'jane.doe@example.com'],
    ['2-byte ë', toBytes('Zoë')],
    ['3-byte €', toBytes('1.234,50 €')],
    ['4-byte emoji', toBytes('👍 ok')],
    ['U+FFFD itself', toBytes('\ufffd')],
    ['the last code point', toBytes('\u{10ffff}')],
  ])('%s is valid', (_name, cell) => {
    expect(hasInvalidUtf8(cell)).toBe(false);
  });

  it.each([
    ['a windows-1252 ü', bytes(0x4d, 0xfc, 0x6c, 0x6c, 0x65, 0x72)],
    ['a lone continuation byte', bytes(0x61, 0x80)],
    ['a cut 2-byte sequence at the end', bytes(0x61, 0xc3)],
    ['a cut 3-byte sequence', bytes(0xe2, 0x82, 0x41)],
    ['an overlong /', bytes(0xc0, 0xaf)],
    ['an overlong 3-byte form', bytes(0xe0, 0x80, 0xaf)],
    ['a UTF-16 surrogate', bytes(0xed, 0xa0, 0x80)],
    ['above U+10FFFF', bytes(0xf4, 0x90, 0x80, 0x80)],
    ['F5 lead byte', bytes(0xf5, 0x80, 0x80, 0x80)],
    ['valid then invalid', toBytes('Zoë ') + bytes(0xff)],
  ])('%s is invalid', (_name, cell) => {
    expect(hasInvalidUtf8(cell)).toBe(true);
  });

  it('agrees with a strict decoder on every 2-byte sequence', () => {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    const disagreements: string[] = [];
    for (let a = 0x80; a <= 0xff; a += 1) {
      for (let b = 0; b <= 0xff; b += 1) {
        let valid = true;
        try {
          decoder.decode(Buffer.from([a, b]));
        } catch {
          valid = false;
        }
        // A valid lead byte of a longer sequence is cut here: the decoder rejects it too.
        if (hasInvalidUtf8(bytes(a, b)) === valid) disagreements.push(`${a.toString(16)} ${b.toString(16)}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});

describe('fromBytes and toBytes', () => {
  it('round-trip text through its UTF-8 bytes', () => {
    const text = 'Müller & Söhne – 1.234,50 € 👍';
    expect(toBytes(text)).toBe(Buffer.from(text).toString('latin1'));
    expect(fromBytes(toBytes(text))).toBe(text);
    expect(toBytes('plain')).toBe('plain');
  });
});
