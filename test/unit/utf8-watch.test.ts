// Utf8Watch: the chunk-by-chunk check that tells whether a file read as UTF-8 holds invalid bytes.
import { describe, expect, it } from 'vitest';
import { Utf8Watch } from '../../src/read/utf8-watch.js';

function watch(...chunks: Buffer[]): boolean {
  const w = new Utf8Watch();
  for (const chunk of chunks) w.feed(chunk);
  w.end();
  return w.invalid;
}

describe('Utf8Watch', () => {
  const text = Buffer.from('Zoë Müller 東京 😀 €', 'utf8');
  it('accepts valid UTF-8 cut at every byte between two chunks', () => {
    for (let cut = 0; cut <= text.length; cut += 1) expect(watch(text.subarray(0, cut), text.subarray(cut)), `cut at ${cut}`).toBe(false);
  });
  it('finds an invalid byte, a lone continuation byte and an overlong form', () => {
    expect(watch(Buffer.from([0x61, 0xff, 0x62]))).toBe(true);
    expect(watch(Buffer.from([0x61, 0x80]))).toBe(true);
    expect(watch(Buffer.from([0xc0, 0xaf]))).toBe(true);
  });
  it('finds a sequence cut short at the end of the input', () => {
    expect(watch(text, Buffer.from([0xe2, 0x82]))).toBe(true);
  });
});
