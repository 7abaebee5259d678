// Bounds on what a workbook may make us hold, checked as its XML is read and before anything is
// allocated for it: a few-KB zip inflates to gigabytes, and a cell at column ZZZZ would pad its row
// with half a million empty cells. Over a bound the read stops with one line naming it; a CSV of
// the same sheet has none of these bounds, since it is streamed.
import { pipeline, Transform, type Readable, type TransformCallback } from 'node:stream';
import { UnreadableInputError } from '../api/errors.js';
import { sizeText } from './read-failure.js';
import type { WorkbookZip } from './workbook-zip.js';

export interface WorkbookLimits {
  /** Distinct texts of the shared-strings part, all held in memory while the sheet is read. */
  sharedStrings: number;
  /** Their characters, all together. */
  sharedStringChars: number;
  /** Characters of one text node (a cell's text, a shared string) before its tag closes. */
  textChars: number;
  /** Decoded bytes of each small part (the sheet list, relationships, styles), parsed whole. */
  partBytes: number;
}

/** The last column of Excel's sheets (XFD): a cell beyond it is no worksheet's. */
export const MAX_COLUMNS = 16_384;

export const WORKBOOK_LIMITS: WorkbookLimits = {
  sharedStrings: 5_000_000,
  sharedStringChars: 128 * 1024 * 1024,
  textChars: 32 * 1024 * 1024,
  partBytes: 64 * 1024 * 1024,
};

/** A count as people read it: 134,217,728. */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

const SAVE_AS_CSV = 'save the sheet as CSV (read with no such limit) and give that file';

/** The one line said when `input` goes past a bound: `what` names it and the bound. */
export function overLimit(input: string, what: string): UnreadableInputError {
  return new UnreadableInputError(`Cannot read the workbook ${input}: ${what}; ${SAVE_AS_CSV}`);
}

export function columnOverLimit(input: string, reference: string, column: number): UnreadableInputError {
  return overLimit(input, `cell ${reference || `#${column}`} lies beyond column XFD (${MAX_COLUMNS}), the last a worksheet has`);
}

export function textOverLimit(input: string, limits: WorkbookLimits): UnreadableInputError {
  return overLimit(input, `a text in it runs past ${count(limits.textChars)} characters without its tag closing (the limit of one text)`);
}

/**
 * Counts the characters the XML parser is given since its last tag: the parser holds a text node
 * whole until the tag after it, so this is what bounds that text before the parser allocates it.
 */
export class TextBound {
  readonly #limit: number;
  readonly #fail: () => Error;
  #sinceTag = 0;
  #tagSeen = false;
  #lastChunk = 0;

  constructor(limit: number, fail: () => Error) {
    this.#limit = limit;
    this.#fail = fail;
  }

  /** Call from the parser's tag events. */
  tag(): void {
    this.#tagSeen = true;
  }

  /** Call before a chunk of `length` characters goes to the parser; throws past the limit. */
  feed(length: number): void {
    // A tag in the last chunk: at most that chunk lies after it (counted high, never low).
    this.#sinceTag = (this.#tagSeen ? this.#lastChunk : this.#sinceTag) + length;
    this.#tagSeen = false;
    this.#lastChunk = length;
    if (this.#sinceTag > this.#limit) throw this.#fail();
  }
}

/** Passes a part's decoded bytes on, and fails once they pass `limit`. */
export function partBound(limit: number, fail: () => Error): Transform {
  let bytes = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
      bytes += chunk.length;
      callback(bytes > limit ? fail() : null, chunk);
    },
  });
}

export function partOverLimit(input: string, part: string, limits: WorkbookLimits): UnreadableInputError {
  return overLimit(input, `its part ${part} inflates past ${sizeText(limits.partBytes)} (the limit of that part)`);
}

/** A small part of `zip` (parsed whole), failing once it inflates past the bound of a part; undefined when the zip has none. */
export function boundedPart(zip: WorkbookZip, part: string, limits: WorkbookLimits = WORKBOOK_LIMITS): Readable | undefined {
  const stream = zip.stream(part);
  if (!stream) return undefined;
  return pipeline(
    stream,
    partBound(limits.partBytes, () => partOverLimit(zip.file, part, limits)),
    () => {},
  );
}
