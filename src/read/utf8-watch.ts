// Watches the bytes of a file read as UTF-8 for any that are not valid UTF-8, chunk by chunk with
// the platform's own check (buffer.isUtf8, gigabytes a second), so that the cells holding such
// bytes are searched for only in the files that have them: the summary counts them
// (docs/cli-contract.md, "Input files"), and a clean file pays nothing per cell.
import { isUtf8 } from 'node:buffer';

export class Utf8Watch {
  #invalid = false;
  /** The start of a multi-byte sequence cut at a chunk's end, judged with the next chunk. */
  #carry: Buffer | undefined;

  get invalid(): boolean {
    return this.#invalid;
  }

  /** A chunk of the input; a stream of strings (a caller's Readable of text) is valid text already. */
  feed(chunk: Buffer | string): void {
    if (this.#invalid || typeof chunk === 'string') return;
    const data = this.#carry ? Buffer.concat([this.#carry, chunk]) : chunk;
    const end = completeEnd(data);
    if (!isUtf8(data.subarray(0, end))) this.#invalid = true;
    this.#carry = end < data.length ? Buffer.from(data.subarray(end)) : undefined;
  }

  /** The input ended: a sequence still cut short is invalid. */
  end(): void {
    if (this.#carry) this.#invalid = true;
    this.#carry = undefined;
  }
}

/** Where the last complete UTF-8 sequence of `data` ends (before a lead byte whose sequence is cut). */
function completeEnd(data: Buffer): number {
  for (let i = data.length - 1; i >= Math.max(0, data.length - 3); i -= 1) {
    const byte = data[i]!;
    if (byte < 0x80) return data.length;
    if (byte >= 0xc0) {
      const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
      return data.length - i < length ? i : data.length;
    }
  }
  return data.length;
}
