// Byte strings: the form every cell takes between the read and the write phases. The parser reads
// UTF-8 bytes as latin1, one character per byte, so a cell is written back byte for byte even when
// its bytes are not valid UTF-8 (docs/cli-contract.md "Input files": such bytes are copied through
// unchanged). These helpers turn byte strings into text where text is needed (keys, JSON) and
// find the cells that hold invalid UTF-8, which the summary counts.

const NON_ASCII = /[^\x00-\x7f]/;

/** Byte string → text (UTF-8 decoding; invalid sequences become U+FFFD). */
export function fromBytes(bytes: string): string {
  return NON_ASCII.test(bytes) ? Buffer.from(bytes, 'latin1').toString('utf8') : bytes;
}

/** Text → byte string of its UTF-8 encoding. */
export function toBytes(text: string): string {
  return NON_ASCII.test(text) ? Buffer.from(text, 'utf8').toString('latin1') : text;
}

/**
 * Whether a byte string holds bytes that are not well-formed UTF-8 (Unicode 15, table 3-7: no
 * overlong forms, no surrogates, nothing above U+10FFFF). Called on every cell of a file, so ASCII
 * is the first test of the loop and no Buffer is made: on cells of the benchmark file this loop is
 * faster than a regular expression's ASCII check alone.
 */
export function hasInvalidUtf8(cell: string): boolean {
  const length = cell.length;
  let i = 0;
  while (i < length) {
    const byte = cell.charCodeAt(i);
    if (byte < 0x80) {
      i += 1;
      continue;
    }
    const size = sequenceLength(byte, cell.charCodeAt(i + 1));
    if (size === 0 || i + size > length) return true;
    for (let k = 2; k < size; k += 1) if ((cell.charCodeAt(i + k) & 0xc0) !== 0x80) return true;
    i += size;
  }
  return false;
}

/**
 * The length of the UTF-8 sequence that starts with `lead`, judged with its second byte (whose
 * allowed range depends on the lead byte), or 0 when the two cannot begin a well-formed sequence.
 * A missing second byte is NaN and fails every range.
 */
export function sequenceLength(lead: number, second: number): number {
  if (lead >= 0xc2 && lead <= 0xdf) return second >= 0x80 && second <= 0xbf ? 2 : 0;
  if (lead === 0xe0) return second >= 0xa0 && second <= 0xbf ? 3 : 0;
  if (lead === 0xed) return second >= 0x80 && second <= 0x9f ? 3 : 0;
  if (lead >= 0xe1 && lead <= 0xef) return second >= 0x80 && second <= 0xbf ? 3 : 0;
  if (lead === 0xf0) return second >= 0x90 && second <= 0xbf ? 4 : 0;
  if (lead === 0xf4) return second >= 0x80 && second <= 0x8f ? 4 : 0;
  if (lead >= 0xf1 && lead <= 0xf3) return second >= 0x80 && second <= 0xbf ? 4 : 0;
  return 0;
}
