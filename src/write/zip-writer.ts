// A zip archive written front to back into any stream (a file, stdout), one entry at a time, each
// deflated as its bytes arrive: the sizes and checksum follow each entry's data (a data descriptor,
// flag bit 3), so nothing is held back to seek and patch. Node's zlib does the deflate and the
// CRC-32; the rest is the format's few fixed-size records (APPNOTE.TXT §4.3). No Zip64: an entry
// or an archive past 4 GiB is refused in words rather than written corrupt.
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { crc32, createDeflateRaw, type DeflateRaw } from 'node:zlib';
import { UnwritableOutputError } from '../api/errors.js';

const LOCAL_HEADER = 0x04034b50;
const DATA_DESCRIPTOR = 0x08074b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_DIRECTORY = 0x06054b50;
/** Bit 3: sizes and CRC in a data descriptor after the data; bit 11: names are UTF-8. */
const FLAGS = 0x0808;
const DEFLATE = 8;
const VERSION = 20;
const LIMIT = 0xffff_ffff;
const TOO_LARGE = 'Cannot write the workbook: it would be larger than 4 GiB, more than a zip without Zip64 holds; write CSV instead (-o FILE.csv)';

interface Written {
  name: Buffer;
  crc: number;
  compressed: number;
  size: number;
  offset: number;
}

/** An entry being written: text or bytes in, deflated into the archive. */
export class ZipEntry {
  readonly #deflate: DeflateRaw;
  readonly #done: Promise<void>;
  #crc = 0;
  #size = 0;
  compressed = 0;

  constructor(deflate: DeflateRaw, out: (chunk: Buffer) => boolean, outDrained: () => Promise<void>) {
    this.#deflate = deflate;
    deflate.on('data', (chunk: Buffer) => {
      this.compressed += chunk.length;
      // The archive's stream is full: stop deflating until it drains (flat memory).
      if (!out(chunk)) {
        deflate.pause();
        void outDrained().then(() => deflate.resume());
      }
    });
    this.#done = once(deflate, 'end').then(() => undefined);
    this.#done.catch(() => {});
  }

  /** False when the caller should wait for drained() before writing more. */
  write(data: string | Buffer): boolean {
    // A discarded workbook: what still arrives is dropped.
    if (this.#deflate.destroyed) return true;
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    if (bytes.length === 0) return true;
    this.#crc = crc32(bytes, this.#crc);
    this.#size += bytes.length;
    if (this.#size > LIMIT) throw new UnwritableOutputError(TOO_LARGE);
    return this.#deflate.write(bytes);
  }

  get needsDrain(): boolean {
    return this.#deflate.writableNeedDrain;
  }

  drained(): Promise<void> {
    return this.#deflate.writableNeedDrain ? once(this.#deflate, 'drain').then(() => undefined) : Promise.resolve();
  }

  async close(): Promise<{ crc: number; size: number; compressed: number }> {
    this.#deflate.end();
    await this.#done;
    return { crc: this.#crc, size: this.#size, compressed: this.compressed };
  }

  destroy(): void {
    this.#deflate.destroy();
  }
}

export class ZipWriter {
  readonly #target: Writable;
  readonly #written: Written[] = [];
  readonly #time: { time: number; date: number };
  #offset = 0;
  #open: ZipEntry | undefined;
  #destroyed = false;

  constructor(target: Writable, now = new Date()) {
    this.#target = target;
    this.#time = dosTime(now);
  }

  /** Starts an entry; the one before must be closed. */
  open(name: string): { entry: ZipEntry; close: () => Promise<void> } {
    if (this.#open) throw new Error(`zip entry ${name} opened while another is open`);
    const nameBytes = Buffer.from(name, 'utf8');
    const offset = this.#offset;
    this.#emit(localHeader(nameBytes, this.#time));
    const entry = new ZipEntry(
      createDeflateRaw(),
      (chunk) => this.#emit(chunk),
      () => this.drained(),
    );
    this.#open = entry;
    const close = async (): Promise<void> => {
      const { crc, size, compressed } = await entry.close();
      this.#open = undefined;
      if (this.#offset > LIMIT) throw new UnwritableOutputError(TOO_LARGE);
      this.#emit(dataDescriptor(crc, compressed, size));
      this.#written.push({ name: nameBytes, crc, compressed, size, offset });
    };
    return { entry, close };
  }

  /** A whole entry at once (the small parts: content types, relationships, styles). */
  async add(name: string, data: string | Buffer): Promise<void> {
    const { entry, close } = this.open(name);
    entry.write(data);
    await close();
  }

  /** Resolves when the target can take more. */
  drained(): Promise<void> {
    return this.#target.writableNeedDrain ? once(this.#target, 'drain').then(() => undefined) : Promise.resolve();
  }

  get needsDrain(): boolean {
    return this.#target.writableNeedDrain || (this.#open?.needsDrain ?? false);
  }

  /** Writes the central directory: the archive is complete (the target is not ended). */
  finish(): void {
    const start = this.#offset;
    for (const entry of this.#written) this.#emit(centralHeader(entry, this.#time));
    const size = this.#offset - start;
    const end = Buffer.alloc(22);
    end.writeUInt32LE(END_OF_DIRECTORY, 0);
    end.writeUInt16LE(this.#written.length, 8);
    end.writeUInt16LE(this.#written.length, 10);
    end.writeUInt32LE(size, 12);
    end.writeUInt32LE(start, 16);
    this.#emit(end);
  }

  destroy(): void {
    this.#destroyed = true;
    this.#open?.destroy();
    // Writes still in flight to a target that failed (stdout into a closed pipe) fail once more
    // after the run has reported the first failure and stopped listening: of no interest now.
    if (this.#target.writableLength > 0 || this.#target.errored) this.#target.on('error', () => {});
  }

  #emit(chunk: Buffer): boolean {
    // A target that failed (a closed pipe) has told the run once; what follows is dropped.
    if (this.#destroyed || this.#target.destroyed || this.#target.errored) return true;
    // Checked where entries close, not here: this runs inside zlib's 'data' events.
    this.#offset += chunk.length;
    return this.#target.write(chunk);
  }
}

function localHeader(name: Buffer, time: { time: number; date: number }): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(LOCAL_HEADER, 0);
  header.writeUInt16LE(VERSION, 4);
  header.writeUInt16LE(FLAGS, 6);
  header.writeUInt16LE(DEFLATE, 8);
  header.writeUInt16LE(time.time, 10);
  header.writeUInt16LE(time.date, 12);
  // CRC and sizes stay 0 here: the data descriptor carries them.
  header.writeUInt16LE(name.length, 26);
  return Buffer.concat([header, name]);
}

function dataDescriptor(crc: number, compressed: number, size: number): Buffer {
  const record = Buffer.alloc(16);
  record.writeUInt32LE(DATA_DESCRIPTOR, 0);
  record.writeUInt32LE(crc, 4);
  record.writeUInt32LE(compressed, 8);
  record.writeUInt32LE(size, 12);
  return record;
}

function centralHeader(entry: Written, time: { time: number; date: number }): Buffer {
  const header = Buffer.alloc(46);
  header.writeUInt32LE(CENTRAL_HEADER, 0);
  header.writeUInt16LE(VERSION, 4);
  header.writeUInt16LE(VERSION, 6);
  header.writeUInt16LE(FLAGS, 8);
  header.writeUInt16LE(DEFLATE, 10);
  header.writeUInt16LE(time.time, 12);
  header.writeUInt16LE(time.date, 14);
  header.writeUInt32LE(entry.crc, 16);
  header.writeUInt32LE(entry.compressed, 20);
  header.writeUInt32LE(entry.size, 24);
  header.writeUInt16LE(entry.name.length, 28);
  header.writeUInt32LE(entry.offset, 42);
  return Buffer.concat([header, entry.name]);
}

/** MS-DOS date and time (local time, two-second steps), as zip records them. */
function dosTime(now: Date): { time: number; date: number } {
  const year = Math.max(1980, now.getFullYear());
  return {
    time: (now.getHours() << 11) | (now.getMinutes() << 5) | Math.floor(now.getSeconds() / 2),
    date: ((year - 1980) << 9) | ((now.getMonth() + 1) << 5) | now.getDate(),
  };
}
