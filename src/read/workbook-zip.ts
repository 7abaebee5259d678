// A workbook's zip read from its central directory (yauzl: Zip64, each entry's inflated size held
// to what the directory says), so that its parts are read in the order we need them, wherever the
// writer put them: the sheet list, the styles and the shared strings before the worksheet, and
// nothing else. Reading the zip front to back (exceljs's streaming WorkbookReader) loses parts that
// come after some entries: a workbook written by xlsx-populate (a hyperlink's sheet1.xml.rels
// between the worksheets, the shared strings last) ended after the worksheets, silently, and every
// text cell read as empty. The workbook output copies the input's other parts through it too.
//
// The file is opened once and read through that one descriptor until the run ends: a workbook
// saved again meanwhile (Excel writes a new file and renames it over the old one) leaves what the
// run reads, and what the output copies, as it was when the run began. changes() tells when the
// path names another file since, or the file itself was written to.
//
// yauzl asks for the directory's records and each part's header in reads of a few dozen bytes:
// they are answered from one block of the file read at a time (a workbook of 66,000 parts took a
// minute of small reads), as are the bytes of a small part; a larger one is streamed.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { PassThrough, pipeline, Readable } from 'node:stream';
import type { Entry, RandomAccessReader, ZipFile } from 'yauzl';

/** A part as the zip's directory describes it, for a copy of its stored bytes as they are. */
export interface ZipPart {
  /** Its name as the zip spells it. */
  name: string;
  /** 0 stored, 8 deflated; any other method is one we cannot read. */
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  encrypted: boolean;
}

/** What a file was when it was opened: a changed one is told by these. */
interface Identity {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
}

/** Compression methods by number (APPNOTE.TXT §4.4.5), to name the one a part uses. */
const METHODS: Record<number, string> = { 1: 'Shrink', 6: 'Implode', 9: 'Deflate64', 12: 'BZIP2', 14: 'LZMA', 93: 'Zstandard', 95: 'XZ', 98: 'PPMd' };

export function methodName(method: number): string {
  return METHODS[method] ? `method ${method} (${METHODS[method]})` : `method ${method}`;
}

type Yauzl = typeof import('yauzl');
let loaded: Yauzl | undefined;

/** yauzl, loaded only by runs that read a workbook. */
function yauzl(): Yauzl {
  loaded ??= createRequire(import.meta.url)('yauzl') as Yauzl;
  return loaded;
}

/** The bytes read from the file at once, and the largest part read from them rather than streamed. */
const BLOCK = 1024 * 1024;

/** yauzl's reader, with the block's bytes at hand for the parts we copy as they are stored. */
interface BlockReader extends RandomAccessReader {
  bytes(position: number, length: number): Buffer;
  _readStreamForRange(start: number, end: number): Readable;
}

/** A reader of the file through its descriptor, a block at a time. */
function blockReader(fd: number): BlockReader {
  class Reader extends yauzl().RandomAccessReader implements BlockReader {
    #block = Buffer.alloc(0);
    #blockAt = 0;

    /** `length` bytes at `position` (fewer at the file's end). */
    bytes(position: number, length: number): Buffer {
      const from = position - this.#blockAt;
      if (from >= 0 && from + length <= this.#block.length) return this.#block.subarray(from, from + length);
      // A new buffer each time: the parts handed out before keep theirs.
      const block = Buffer.allocUnsafe(Math.max(length, BLOCK));
      const read = fs.readSync(fd, block, 0, block.length, position);
      this.#block = block.subarray(0, read);
      this.#blockAt = position;
      return this.#block.subarray(0, Math.min(length, read));
    }

    override read(buffer: Buffer, offset: number, length: number, position: number, callback: (err: Error | null, bytesRead?: number) => void): void {
      let bytes: Buffer;
      try {
        bytes = this.bytes(position, length);
      } catch (error) {
        queueMicrotask(() => callback(error as Error));
        return;
      }
      bytes.copy(buffer, offset);
      queueMicrotask(() => callback(null, bytes.length));
    }

    override _readStreamForRange(start: number, end: number): Readable {
      if (end - start > BLOCK) return rangeStream(fd, start, end);
      const bytes = this.bytes(start, end - start);
      return new Readable({
        read() {
          this.push(bytes);
          this.push(null);
        },
      });
    }

    override close(callback: (err: Error | null) => void): void {
      fs.close(fd, callback);
    }
  }
  return new Reader();
}

/**
 * The bytes from `start` to `end` of the file, read through its descriptor a chunk at a time. Not
 * fs.createReadStream: destroying one (a sheet read no further) closes the descriptor, which the
 * zip's other readers share.
 */
function rangeStream(fd: number, start: number, end: number): Readable {
  let at = start;
  return new Readable({
    read() {
      const length = Math.min(64 * 1024, end - at);
      if (length <= 0) {
        this.push(null);
        return;
      }
      fs.read(fd, Buffer.allocUnsafe(length), 0, length, at, (error, read, buffer) => {
        if (error) this.destroy(error);
        else if (read === 0) this.destroy(new Error('unexpected EOF'));
        else {
          at += read;
          this.push(buffer.subarray(0, read));
        }
      });
    },
  });
}

const identityOf = (stats: fs.Stats): Identity => ({ dev: stats.dev, ino: stats.ino, size: stats.size, mtimeMs: stats.mtimeMs });
const sameIdentity = (a: Identity, b: Identity): boolean => a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;

export class WorkbookZip {
  readonly file: string;
  readonly #zip: ZipFile;
  readonly #reader: BlockReader;
  readonly #fd: number;
  readonly #identity: Identity;
  readonly #parts: Map<string, Entry>;
  /** The reader and the workbook output share one zip: closed when the last lets it go. */
  #holders = 1;

  private constructor(file: string, zip: ZipFile, reader: BlockReader, fd: number, identity: Identity, parts: Map<string, Entry>) {
    this.file = file;
    this.#zip = zip;
    this.#reader = reader;
    this.#fd = fd;
    this.#identity = identity;
    this.#parts = parts;
  }

  /** Reads the zip's central directory (at its end); rejects when the file is no zip. */
  static async open(file: string): Promise<WorkbookZip> {
    const fd = fs.openSync(file, 'r');
    let zip: ZipFile | undefined;
    try {
      const identity = identityOf(fs.fstatSync(fd));
      const reader = blockReader(fd);
      zip = await yauzl().fromRandomAccessReaderPromise(reader, identity.size, { lazyEntries: true, autoClose: false, validateEntrySizes: true });
      const parts = new Map<string, Entry>();
      // Names are compared without case: some writers spell [Content_Types].xml or xl/ otherwise.
      for await (const entry of zip.eachEntry()) {
        if (!entry.fileName.endsWith('/')) parts.set(entry.fileName.replace(/^\/+/, '').toLowerCase(), entry);
      }
      return new WorkbookZip(file, zip, reader, fd, identity, parts);
    } catch (error) {
      if (zip) zip.close();
      else fs.closeSync(fd);
      throw error;
    }
  }

  /** Every part's path as the zip spells it, in the zip's order. */
  paths(): string[] {
    return [...this.#parts.values()].map((entry) => entry.fileName.replace(/^\/+/, ''));
  }

  has(path: string): boolean {
    return this.#parts.has(path.toLowerCase());
  }

  /** The part as the directory describes it, or undefined when the zip has no such part. */
  part(path: string): ZipPart | undefined {
    const entry = this.#parts.get(path.toLowerCase());
    if (!entry) return undefined;
    const { fileName, compressionMethod, crc32, compressedSize, uncompressedSize } = entry;
    return { name: fileName.replace(/^\/+/, ''), method: compressionMethod, crc32, compressedSize, size: uncompressedSize, encrypted: entry.isEncrypted() };
  }

  /** The part's bytes as they are inflated, or undefined when the zip has no such part. */
  stream(path: string): Readable | undefined {
    const entry = this.#parts.get(path.toLowerCase());
    if (!entry) return undefined;
    if (!entry.canDecodeFileData()) {
      const why = entry.isEncrypted() ? 'is encrypted' : `is compressed with ${methodName(entry.compressionMethod)}, which cannot be read`;
      return failing(new Error(`its part ${entry.fileName} ${why}`));
    }
    const out = new PassThrough();
    this.#zip.openReadStream(entry, (error, stream) => {
      if (error) out.destroy(error);
      else pipeline(stream, out, () => {});
    });
    return out;
  }

  /**
   * The part's bytes as the zip stores them (deflated or not), for a copy that does not inflate
   * them: read past its local header straight from the file (a workbook's many small parts would
   * each cost a chain of streams), within the file's bounds.
   */
  stored(path: string): Readable | undefined {
    const entry = this.#parts.get(path.toLowerCase());
    if (!entry) return undefined;
    const at = entry.relativeOffsetOfLocalHeader;
    const header = this.#reader.bytes(at, 30);
    if (header.length < 30 || header.readUInt32LE(0) !== 0x04034b50)
      return failing(new Error(`its part ${entry.fileName} has no local header where its directory says`));
    const start = at + 30 + header.readUInt16LE(26) + header.readUInt16LE(28);
    const end = start + entry.compressedSize;
    if (end > this.#identity.size) return failing(new Error(`the file ends before its part ${entry.fileName} does (cut short?)`));
    // yauzl's own: the file stays open while it is read, and it gives exactly these bytes.
    return this.#reader.createReadStream({ start, end });
  }

  /**
   * Whether the file is still what was opened: 'replaced' when its path now names another file or
   * none (saved again, moved: what is read here is still the file as it was), 'modified' when the
   * file itself was written to since (what is read here may no longer be what was read before).
   */
  changes(): 'replaced' | 'modified' | undefined {
    let now: fs.Stats;
    try {
      now = fs.fstatSync(this.#fd);
    } catch {
      // Closed: nothing is read through it any more.
      return undefined;
    }
    if (!sameIdentity(identityOf(now), this.#identity)) return 'modified';
    const there = fs.statSync(this.file, { throwIfNoEntry: false });
    return there && sameIdentity(identityOf(there), this.#identity) ? undefined : 'replaced';
  }

  /** One more user of the zip, who closes it too. */
  hold(): this {
    this.#holders += 1;
    return this;
  }

  /** Lets the zip go: the file is closed when its last user did, once its streams have ended (or were destroyed). */
  close(): void {
    this.#holders -= 1;
    if (this.#holders === 0) this.#zip.close();
  }
}

function failing(error: Error): Readable {
  const out = new PassThrough();
  process.nextTick(() => out.destroy(error));
  return out;
}

/**
 * The zip path of a part that xl/workbook.xml's relationships name: their targets are relative to
 * xl/ (`worksheets/sheet1.xml`) or absolute from the zip's root (`/xl/worksheets/sheet1.xml`).
 */
export function workbookPartPath(target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts: string[] = ['xl'];
  for (const segment of target.split('/')) {
    if (segment === '..') parts.pop();
    else if (segment !== '.' && segment !== '') parts.push(segment);
  }
  return parts.join('/');
}
