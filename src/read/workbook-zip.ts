// A workbook's zip read from its central directory (unzipper's Open.file), so that its parts are
// read in the order we need them, wherever the writer put them: the sheet list, the styles and the
// shared strings before the worksheet, and nothing else. Reading the zip front to back (exceljs's
// streaming WorkbookReader, over unzipper's Parse) loses parts that come after some entries: a
// workbook written by xlsx-populate (a hyperlink's sheet1.xml.rels between the worksheets, the
// shared strings last) ended after the worksheets, silently, and every text cell read as empty.
// The workbook output reads the input's other parts through it too, to copy them.
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';

/** One part of the zip (unzipper 0.12's directory entry, as this module uses it). */
interface ZipEntry {
  path: string;
  type: 'File' | 'Directory';
  stream(): Readable;
}

interface Unzipper {
  Open: { file(path: string): PromiseLike<{ files: ZipEntry[] }> };
}

let loaded: Unzipper | undefined;

/** unzipper, loaded only by runs that read a workbook. */
function unzipper(): Unzipper {
  loaded ??= createRequire(import.meta.url)('unzipper') as Unzipper;
  return loaded;
}

export class WorkbookZip {
  readonly #parts: Map<string, ZipEntry>;

  private constructor(parts: Map<string, ZipEntry>) {
    this.#parts = parts;
  }

  /** Reads the zip's central directory (a few KiB at its end); rejects when the file is no zip. */
  static async open(file: string): Promise<WorkbookZip> {
    const directory = await unzipper().Open.file(file);
    const parts = new Map<string, ZipEntry>();
    // Names are compared without case: some writers spell [Content_Types].xml or xl/ otherwise.
    for (const entry of directory.files) if (entry.type === 'File') parts.set(entry.path.replace(/^\/+/, '').toLowerCase(), entry);
    return new WorkbookZip(parts);
  }

  /** Every part's path as the zip spells it, in the zip's order. */
  paths(): string[] {
    return [...this.#parts.values()].map((entry) => entry.path.replace(/^\/+/, ''));
  }

  has(path: string): boolean {
    return this.#parts.has(path.toLowerCase());
  }

  /** The part's bytes as they are inflated, or undefined when the zip has no such part. */
  stream(path: string): Readable | undefined {
    return this.#parts.get(path.toLowerCase())?.stream();
  }
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
