// An input that is a stream (standard input, a named pipe, a caller's iterable) may wait for its
// writer without end, where a file always ends. A stop (Ctrl-C, SIGTERM) must not wait with it: the
// rows already read are written (the rest of those read as skipped), and reading ends once nothing
// more has arrived for IDLE_MS, every line that arrived whole read; before the header has arrived
// there is nothing to write at all.
import fs from 'node:fs';
import { InterruptedError } from '../api/errors.js';
import type { CsvSource } from '../read/index.js';

/** After a stop, how long a stream may be silent before reading it ends. */
export const IDLE_MS = 1000;

/** The input is a stream rather than a regular file (a FIFO, a socket, a device, stdin, a Readable). */
export function isStreamInput(input: unknown): boolean {
  if (typeof input !== 'string' || input === '-') return true;
  return fs.statSync(input, { throwIfNoEntry: false })?.isFile() === false;
}

/** How messages name the input. */
export function inputName(input: unknown): string {
  if (typeof input !== 'string') return 'the input stream';
  return input === '-' ? 'standard input' : input;
}

/** `opening` (the input's header), unless `signal` aborts first: then an InterruptedError (exit 130), in `words` when given. */
export function unlessInterrupted<T>(opening: Promise<T>, signal: AbortSignal | undefined, name: string, words?: string): Promise<T> {
  if (!signal) return opening;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () =>
      reject(
        new InterruptedError(
          words ??
            `Interrupted while waiting for the first 64 KiB or the end of ${name} (the run starts once it knows the input's encoding and layout): nothing was looked up or written`,
        ),
      );
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    opening.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Resolves `undefined` after `ms`, or the value of `next` if it comes first. */
function within<T>(next: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  return Promise.race([next, timeout]).finally(() => clearTimeout(timer));
}

/** Waits for `next`, or for `halt` and then IDLE_MS of silence: undefined then. */
async function nextOrIdle<T>(next: Promise<T>, halt: AbortSignal): Promise<T | undefined> {
  if (!halt.aborted) {
    let onAbort: (() => void) | undefined;
    const halted = new Promise<'halted'>((resolve) => {
      onAbort = () => resolve('halted');
      halt.addEventListener('abort', onAbort, { once: true });
    });
    const first = await Promise.race([next, halted]).finally(() => halt.removeEventListener('abort', onAbort!));
    if (first !== 'halted') return first as T;
  }
  return within(next, IDLE_MS);
}

/**
 * The batches of a stream input, ended early when the run has halted and the stream stays silent:
 * `onCut` is told, and the source is let go of (its pending read settles as the end).
 */
export async function* batchesUntilIdle(source: CsvSource, halt: AbortSignal, onCut: () => void): AsyncGenerator<string[][]> {
  const iterator = source.batches[Symbol.asyncIterator]();
  for (;;) {
    const pending = iterator.next();
    const next = await nextOrIdle(pending, halt);
    if (next === undefined) {
      if (source.endAtLineEnd?.()) yield* heldBack(pending, iterator);
      else pending.catch(() => {});
      source.destroy();
      onCut();
      return;
    }
    if (next.done) return;
    yield next.value;
  }
}

/**
 * The records a stream's parser held back when it was ended at a line end: every line that arrived
 * whole is read. A quoted cell still open at that end is no record: reading stops before it.
 */
async function* heldBack(pending: Promise<IteratorResult<string[][]>>, iterator: AsyncIterator<string[][]>): AsyncGenerator<string[][]> {
  try {
    for (let next = await pending; !next.done; next = await iterator.next()) yield next.value;
  } catch {
    // Whatever the parser says of the line it held (a quoted cell still open at the end it was
    // given): that line was not whole, and every record before it has been yielded.
  }
}
