// Peeks at the first bytes of a stream without losing them: the read phase must know what the file
// is (gzip, a workbook, its encoding, its delimiter) before it chooses how to parse it.
import { Readable } from 'node:stream';

export interface Head {
  /** At least the size asked for, or the whole stream when it is shorter. */
  bytes: Buffer;
  /** The stream has no more bytes than these. */
  complete: boolean;
  /**
   * The stream again from byte `skip` of the head (skip a byte-order mark the parser must not
   * see): the original stream with the head put back, or a new one when the original has ended,
   * since nothing can be put back after the end.
   */
  resume(skip?: number): Readable;
}

/** Reads until `size` bytes or the end of `stream`, and puts them back. */
export function readHead(stream: Readable, size: number): Promise<Head> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let length = 0;
    const cleanup = () => {
      stream.off('readable', onReadable);
      stream.off('end', onEnd);
      stream.off('error', onError);
    };
    const settle = (complete: boolean) => {
      cleanup();
      const bytes = Buffer.concat(chunks, length);
      // Put back at once: a stream whose buffer is empty after its last chunk emits 'end' soon.
      if (!complete) stream.unshift(bytes);
      const resume = (skip = 0): Readable => {
        if (complete) return Readable.from(length > skip ? [bytes.subarray(skip)] : []);
        if (skip > 0) {
          // The head is first in the buffer, whole (one object in object mode): take it back, cut.
          const again = stream.read() as Buffer;
          stream.unshift(again.subarray(skip));
        }
        return stream;
      };
      resolve({ bytes, complete, resume });
    };
    function onReadable() {
      let chunk: Buffer | string | null;
      while ((chunk = stream.read() as Buffer | string | null) !== null) {
        // A stream in object mode (Readable.from(['a,b\n'])) may hand strings.
        if (typeof chunk === 'string') chunk = Buffer.from(chunk);
        chunks.push(chunk);
        length += chunk.length;
        if (length >= size) return settle(false);
      }
    }
    function onEnd() {
      settle(true);
    }
    function onError(error: unknown) {
      cleanup();
      reject(error);
    }
    stream.on('readable', onReadable);
    stream.once('end', onEnd);
    stream.once('error', onError);
  });
}
