// Where the writer's bytes go (output-place.ts): a temporary file beside the destination, renamed
// into place only when complete (a killed run never leaves a file that looks finished); a FIFO or a
// device, opened and written as it is; or stdout.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { PATH_GIVEN, type OutputOption } from './output-words.js';
import { FifoStream } from './fifo-stream.js';
import { outputPlace, whyNotWritable, type OutputPlace } from './output-place.js';
import { UnwritableOutputError } from '../api/errors.js';
import { isAlive } from '../core/processes.js';

export interface Sink {
  /** Where the writer writes. */
  stream: Writable;
  /** The file stream underneath (the same as `stream`, or what gzip writes to): closed last. */
  file: Writable;
  /** The temporary file, renamed over `target` when complete. */
  temp: string | undefined;
  /** Where the temporary file goes: the name given, its links followed. */
  target: string | undefined;
  /** The name given, made absolute (what the summary says); undefined for '-' and a caller's stream. */
  final: string | undefined;
  /** This writer opened `file` (a temporary file, a FIFO, a device): it is ended and closed when complete. */
  opened: boolean;
  /** Resolves once a FIFO has its reader, or a device is open; rejects with why it cannot be opened. */
  opening?: Promise<void> | undefined;
  /** A caller's stream is ended when the outputs are complete; stdout stays open. */
  endStream: boolean;
}

/** The sink of `target`, named by `option` in a refusal; UnwritableOutputError when it cannot be written. */
export function openSink(target: string | Writable, stdout: Writable, option: OutputOption): Sink {
  if (target === '-') return streamSink(stdout, undefined, false);
  if (typeof target !== 'string') return streamSink(target, undefined, target !== process.stdout && target !== process.stderr);
  const place = placeOf(target, option);
  // A path ending in .gz is written gzipped (docs/cli-contract.md, "Input files": "Compressed").
  const gzip = /\.gz$/i.test(target);
  switch (place.how) {
    case 'stdout':
      return streamSink(stdout, place.name, false);
    case 'stderr':
      return streamSink(process.stderr, place.name, false);
    case 'fifo': {
      // Its reader may come later: the run waits for it before the first lookup (RowWriter.ready).
      const file = new FifoStream(place.name);
      return { ...gzipped(file, gzip), temp: undefined, target: undefined, final: place.name, opened: true, opening: file.opened, endStream: true };
    }
    case 'device': {
      // Write-only, never created nor truncated: a device gone meanwhile is not made a regular file.
      const file = fs.createWriteStream(place.name, { flags: fs.constants.O_WRONLY as unknown as string });
      const opening = once(file, 'ready').then(() => undefined);
      opening.catch(() => {});
      return { ...gzipped(file, gzip), temp: undefined, target: undefined, final: place.name, opened: true, opening, endStream: true };
    }
    case 'file':
      return temporarySink(place.name, place.target, gzip, refusal(target, option));
  }
}

/** Where output `option` named `target` is written (output-place.ts); refused in one line where it cannot be. */
export function placeOf(target: string, option: OutputOption): OutputPlace {
  return outputPlace(target, refusal(target, option));
}

function refusal(target: string, option: OutputOption): (why: string, cause?: unknown) => Error {
  return (why, cause) => new UnwritableOutputError(`Cannot write ${target}: ${why}; choose another path ${PATH_GIVEN(option)}`, { cause });
}

function streamSink(stream: Writable, final: string | undefined, endStream: boolean): Sink {
  return { stream, file: stream, temp: undefined, target: undefined, final, opened: false, endStream };
}

function gzipped(file: Writable, gzip: boolean): { stream: Writable; file: Writable } {
  if (!gzip) return { stream: file, file };
  const stream = createGzip();
  stream.pipe(file);
  return { stream, file };
}

/** A temporary file beside `target`, renamed over it when complete (row-writer.ts). */
function temporarySink(final: string, target: string, gzip: boolean, refuse: (why: string, cause?: unknown) => Error): Sink {
  // Random beyond the pid, and created only if new ('wx' never follows a link): in a shared folder
  // another user cannot plant a link under the name to have the run overwrite a file of theirs.
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.${process.pid}.${randomBytes(8).toString('hex')}.partial`);
  removeStalePartials(target);
  try {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const fd = fs.openSync(temp, 'wx', 0o644);
    return { ...gzipped(fs.createWriteStream(temp, { fd }), gzip), temp, target, final, opened: true, endStream: true };
  } catch (error) {
    throw refuse(whyNotWritable(error), error);
  }
}

/**
 * Temporary files of earlier runs on `final` that are gone (killed, or failed before they could
 * clean up: their process is no longer alive) are removed. Called when a run takes the output's
 * lock, and again when it opens the output.
 */
export function removeStalePartials(final: string): void {
  const prefix = `.${path.basename(final)}.`;
  let names: string[];
  try {
    names = fs.readdirSync(path.dirname(final));
  } catch {
    return;
  }
  for (const name of names) {
    // `<pid>.<random>` (or `<pid>` alone, as earlier versions named them).
    const middle = name.startsWith(prefix) && name.endsWith('.partial') ? /^(\d+)(\.[0-9a-f]+)?$/.exec(name.slice(prefix.length, -'.partial'.length)) : null;
    const pid = middle ? Number(middle[1]) : NaN;
    if (!Number.isInteger(pid) || pid === process.pid || isAlive(pid)) continue;
    try {
      fs.rmSync(path.join(path.dirname(final), name), { force: true });
    } catch {
      // Not ours to remove (another user's folder): left as it is.
    }
  }
}

/** A folder made where the output is to be renamed meanwhile: rename() would fail with EISDIR; found before any output is renamed and said the same way. */
export function assertNotFolder(final: string): void {
  if (fs.statSync(final, { throwIfNoEntry: false })?.isDirectory()) throw Object.assign(new Error(`${final} is a folder`), { code: 'EISDIR' });
}
