// An answer's body undone of its Content-Encoding within a size cap. A few kilobytes of brotli or
// zstd can stand for gigabytes: a cap on the bytes that arrive says nothing of what they become,
// so the decoded size is capped too, while it is decoded (zlib's maxOutputLength stops the
// decoder there; nothing larger is ever held). got's own decoding is off (transport.ts) because it
// counts nothing once a Content-Length is passed.
import zlib from 'node:zlib';

type Decoder = (input: Uint8Array, options: zlib.ZlibOptions & zlib.BrotliOptions, done: (error: Error | null, out: Buffer) => void) => void;

/** zstd from Node 22.15 and 23.8 on: asked for only where this Node decodes it. */
const zstd = (zlib as { zstdDecompress?: Decoder }).zstdDecompress;

const DECODERS: Record<string, Decoder | undefined> = {
  gzip: zlib.gunzip,
  'x-gzip': zlib.gunzip,
  // "deflate" is a zlib stream by the standard, but some servers send it raw: a zlib header (method
  // 8, its two bytes a multiple of 31) says which.
  deflate: (input, options, done) => {
    const zlibHeader = input.length >= 2 && (input[0]! & 0x0f) === 8 && ((input[0]! << 8) | input[1]!) % 31 === 0;
    (zlibHeader ? zlib.inflate : zlib.inflateRaw)(input, options, done);
  },
  br: zlib.brotliDecompress,
  zstd,
};

/** What the requests advertise: only what is decoded here, within the cap. */
export const ACCEPT_ENCODING = ['gzip', 'deflate', 'br', ...(zstd ? ['zstd'] : [])].join(', ');

/** A server may stack codings ("gzip, br"); more than this is no answer of an API's. */
const MAX_CODINGS = 2;

/** Why a body could not be had: over the cap once decoded, or not decodable as it says it is. */
export class BodyDecodeError extends Error {
  constructor(
    readonly kind: 'too_large' | 'undecodable',
    message: string,
  ) {
    super(message);
  }
}

/** `raw` decoded as `contentEncoding` says (last coding first), never more than `maxBytes` at any step. */
export async function decodeBody(raw: Uint8Array, contentEncoding: string | string[] | undefined, maxBytes: number): Promise<Uint8Array> {
  const codings = String(contentEncoding ?? '')
    .toLowerCase()
    .split(',')
    .map((coding) => coding.trim())
    .filter((coding) => coding !== '' && coding !== 'identity');
  if (codings.length === 0 || raw.length === 0) return raw;
  if (codings.length > MAX_CODINGS) throw new BodyDecodeError('undecodable', `${codings.length} stacked content codings (${codings.join(', ')})`);
  let body: Uint8Array = raw;
  for (const coding of [...codings].reverse()) {
    const decoder = DECODERS[coding];
    if (!decoder) throw new BodyDecodeError('undecodable', `content coding '${coding}', which was not asked for`);
    body = await new Promise<Buffer>((resolve, reject) => {
      decoder(body, { maxOutputLength: maxBytes }, (error, out) => {
        if (!error) return resolve(out);
        const tooLarge = (error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE';
        reject(new BodyDecodeError(tooLarge ? 'too_large' : 'undecodable', tooLarge ? coding : `${coding}: ${error.message}`));
      });
    });
  }
  return body;
}
