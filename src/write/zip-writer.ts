// A zip archive written front to back into any stream (a file, stdout), one entry at a time, each
// deflated as its bytes arrive: the sizes and checksum follow each entry's data (a data descriptor,
// flag bit 3), so nothing is held back to seek and patch. Node's zlib does the deflate and the
// CRC-32; the rest is the format's few fixed-size records (APPNOTE.TXT §4.3). A part of another zip
// is copied as that zip stores it (deflated or not), with the sizes and checksum its directory
// gives. Past 65,535 entries, or with the directory beyond 4 GiB, the directory's end is written
// in Zip64 records (§4.3.14-16) as well; an entry itself past 4 GiB is refused in words rather
// than written corrupt.
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { crc32, createDeflateRaw, type DeflateRaw } from 'node:zlib';
import { UnwritableOutputError } from '../api/errors.js';
import { CSV_INSTEAD } from './output-words.js';

const LOCAL_HEADER = 0x04034b50;
const DATA_DESCRIPTOR = 0x08074b50;
const CENTRAL_HEADER = 0x02014b50;
const END_OF_DIRECTORY = 0x06054b50;
const ZIP64_END_OF_DIRECTORY = 0x06064b50;
const ZIP64_LOCATOR = 0x07064b50;
/** Bit 11: names are UTF-8; bit 3: sizes and CRC in a data descriptor after the data. */
const UTF8_NAMES = 0x0800;
const DESCRIPTOR_FLAGS = UTF8_NAMES | 0x0008;
const DEFLATE = 8;
const VERSION = 20;
const ZIP64_VERSION = 45;
const LIMIT = 0xffff_ffff;
const MAX_ENTRIES = 0xffff;
/** The largest entry a zip without Zip64 entries holds, compressed or not. */
export const ENTRY_LIMIT = LIMIT;
const TOO_LARGE = (): string => `Cannot write the workbook: its sheet would be larger than 4 GiB, more than a zip entry holds; ${CSV_INSTEAD()}`;

interface Written {
  name: Buffer;
  flags: number;
  method: number;
  crc: number;
  compressed: number;
  size: number;
  offset: number;
}

/** A part of another zip, as its directory describes it, to be copied as it is stored. */
export interface StoredEntry {
  name: string;
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
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
    if (this.#size > LIMIT) throw new UnwritableOutputError(TOO_LARGE());
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
    this.#emit(localHeader({ name: nameBytes, flags: DESCRIPTOR_FLAGS, method: DEFLATE, crc: 0, compressed: 0, size: 0, offset }, this.#time));
    const entry = new ZipEntry(
      createDeflateRaw(),
      (chunk) => this.#emit(chunk),
      () => this.drained(),
    );
    this.#open = entry;
    const close = async (): Promise<void> => {
      const { crc, size, compressed } = await entry.close();
      this.#open = undefined;
      if (compressed > LIMIT) throw new UnwritableOutputError(TOO_LARGE());
      this.#emit(dataDescriptor(crc, compressed, size));
      this.#written.push({ name: nameBytes, flags: DESCRIPTOR_FLAGS, method: DEFLATE, crc, compressed, size, offset });
    };
    return { entry, close };
  }

  /**
   * Copies a part of another zip as it is stored there (`stored`: its bytes, deflated or not), its
   * sizes and checksum in the local header: nothing is inflated or deflated again.
   */
  async copy(part: StoredEntry, stored: Readable): Promise<void> {
    if (this.#open) throw new Error(`zip entry ${part.name} copied while another is open`);
    const written: Written = {
      name: Buffer.from(part.name, 'utf8'),
      flags: UTF8_NAMES,
      method: part.method,
      crc: part.crc32,
      compressed: part.compressedSize,
      size: part.size,
      offset: this.#offset,
    };
    this.#emit(localHeader(written, this.#time));
    let bytes = 0;
    for await (const chunk of stored) {
      bytes += (chunk as Buffer).length;
      if (!this.#emit(chunk as Buffer)) await this.drained();
    }
    if (bytes !== part.compressedSize) throw new Error(`its part ${part.name} holds ${bytes} bytes where its zip's directory says ${part.compressedSize}`);
    this.#written.push(written);
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
    const count = this.#written.length;
    // Zip64's records first when a count or an offset does not fit the classic end record, whose
    // fields are then -1 (APPNOTE.TXT §4.4.1.4): readers find the Zip64 locator just before it.
    if (count > MAX_ENTRIES || size > LIMIT || start > LIMIT) this.#emit(zip64End(count, size, start, this.#offset));
    const end = Buffer.alloc(22);
    end.writeUInt32LE(END_OF_DIRECTORY, 0);
    end.writeUInt16LE(Math.min(count, MAX_ENTRIES), 8);
    end.writeUInt16LE(Math.min(count, MAX_ENTRIES), 10);
    end.writeUInt32LE(Math.min(size, LIMIT), 12);
    end.writeUInt32LE(Math.min(start, LIMIT), 16);
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

function localHeader(entry: Written, time: { time: number; date: number }): Buffer {
  const header = Buffer.alloc(30);
  header.writeUInt32LE(LOCAL_HEADER, 0);
  header.writeUInt16LE(VERSION, 4);
  header.writeUInt16LE(entry.flags, 6);
  header.writeUInt16LE(entry.method, 8);
  header.writeUInt16LE(time.time, 10);
  header.writeUInt16LE(time.date, 12);
  // With a data descriptor, CRC and sizes stay 0 here: the descriptor carries them.
  header.writeUInt32LE(entry.crc, 14);
  header.writeUInt32LE(entry.compressed, 18);
  header.writeUInt32LE(entry.size, 22);
  header.writeUInt16LE(entry.name.length, 26);
  return Buffer.concat([header, entry.name]);
}

function dataDescriptor(crc: number, compressed: number, size: number): Buffer {
  const record = Buffer.alloc(16);
  record.writeUInt32LE(DATA_DESCRIPTOR, 0);
  record.writeUInt32LE(crc, 4);
  record.writeUInt32LE(compressed, 8);
  record.writeUInt32LE(size, 12);
  return record;
}

/** An entry's directory record; one whose data begins past 4 GiB has its offset in a Zip64 extra field (§4.5.3). */
function centralHeader(entry: Written, time: { time: number; date: number }): Buffer {
  const far = entry.offset > LIMIT;
  const header = Buffer.alloc(46);
  header.writeUInt32LE(CENTRAL_HEADER, 0);
  header.writeUInt16LE(far ? ZIP64_VERSION : VERSION, 4);
  header.writeUInt16LE(far ? ZIP64_VERSION : VERSION, 6);
  header.writeUInt16LE(entry.flags, 8);
  header.writeUInt16LE(entry.method, 10);
  header.writeUInt16LE(time.time, 12);
  header.writeUInt16LE(time.date, 14);
  header.writeUInt32LE(entry.crc, 16);
  header.writeUInt32LE(entry.compressed, 20);
  header.writeUInt32LE(entry.size, 24);
  header.writeUInt16LE(entry.name.length, 28);
  if (!far) {
    header.writeUInt32LE(entry.offset, 42);
    return Buffer.concat([header, entry.name]);
  }
  const extra = Buffer.alloc(12);
  extra.writeUInt16LE(0x0001, 0);
  extra.writeUInt16LE(8, 2);
  extra.writeBigUInt64LE(BigInt(entry.offset), 4);
  header.writeUInt16LE(extra.length, 30);
  header.writeUInt32LE(LIMIT, 42);
  return Buffer.concat([header, entry.name, extra]);
}

/** The Zip64 end of central directory record (at `at`) and its locator. */
function zip64End(count: number, size: number, start: number, at: number): Buffer {
  const record = Buffer.alloc(56 + 20);
  record.writeUInt32LE(ZIP64_END_OF_DIRECTORY, 0);
  record.writeBigUInt64LE(44n, 4);
  record.writeUInt16LE(ZIP64_VERSION, 12);
  record.writeUInt16LE(ZIP64_VERSION, 14);
  record.writeBigUInt64LE(BigInt(count), 24);
  record.writeBigUInt64LE(BigInt(count), 32);
  record.writeBigUInt64LE(BigInt(size), 40);
  record.writeBigUInt64LE(BigInt(start), 48);
  record.writeUInt32LE(ZIP64_LOCATOR, 56);
  record.writeBigUInt64LE(BigInt(at), 64);
  record.writeUInt32LE(1, 72);
  return record;
}

/** MS-DOS date and time (local time, two-second steps), as zip records them. */
function dosTime(now: Date): { time: number; date: number } {
  const year = Math.max(1980, now.getFullYear());
  return {
    time: (now.getHours() << 11) | (now.getMinutes() << 5) | Math.floor(now.getSeconds() / 2),
    date: ((year - 1980) << 9) | ((now.getMonth() + 1) << 5) | now.getDate(),
  };
}
