// Where the writer's bytes go: a temporary file beside the destination, renamed into place only
// when complete (a killed run never leaves a file that looks finished), or stdout.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Writable } from 'node:stream';
import { createGzip } from 'node:zlib';
import { OUTPUTS_GIVEN } from './output-words.js';
import { UnwritableOutputError } from '../api/errors.js';
import { isAlive } from '../core/processes.js';

export interface Sink {
  /** Where the writer writes. */
  stream: Writable;
  /** The file stream underneath (the same as `stream`, or what gzip writes to): closed last. */
  file: Writable;
  temp: string | undefined;
  final: string | undefined;
  /** A caller's stream is ended when the outputs are complete; stdout stays open. */
  endStream: boolean;
}

export function openSink(target: string | Writable, stdout: Writable): Sink {
  if (target === '-') return { stream: stdout, file: stdout, temp: undefined, final: undefined, endStream: false };
  if (typeof target !== 'string') return { stream: target, file: target, temp: undefined, final: undefined, endStream: target !== process.stdout && target !== process.stderr };
  const final = path.resolve(target);
  // Random beyond the pid, and created only if new ('wx' never follows a link): in a shared folder
  // another user cannot plant a link under the name to have the run overwrite a file of theirs.
  const temp = path.join(path.dirname(final), `.${path.basename(final)}.${process.pid}.${randomBytes(8).toString('hex')}.partial`);
  removeStalePartials(final);
  try {
    // Found now, before the first lookup, rather than when the complete file is renamed into place.
    assertNotFolder(final);
    fs.mkdirSync(path.dirname(final), { recursive: true });
    const fd = fs.openSync(temp, 'wx', 0o644);
    const file = fs.createWriteStream(temp, { fd });
    // A path ending in .gz is written gzipped (docs/cli-contract.md, "Input files": "Compressed").
    if (!final.endsWith('.gz')) return { stream: file, file, temp, final, endStream: true };
    const gzip = createGzip();
    gzip.pipe(file);
    return { stream: gzip, file, temp, final, endStream: true };
  } catch (error) {
    throw new UnwritableOutputError(`Cannot write ${target}: ${whyNotWritable(error)}; choose another path ${OUTPUTS_GIVEN()}`);
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

/** A folder where the output is to be renamed: rename() would fail with EISDIR; said the same way before. */
export function assertNotFolder(final: string): void {
  if (fs.statSync(final, { throwIfNoEntry: false })?.isDirectory()) throw Object.assign(new Error(`${final} is a folder`), { code: 'EISDIR' });
}

/** What an operating-system error means for a path to write, in words (not ENOTDIR). */
export function whyNotWritable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOTDIR':
    case 'EEXIST':
      return 'a part of the path is a file, not a folder';
    case 'EISDIR':
      return 'it is a folder';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'the disk is full';
    case 'ENAMETOOLONG':
      return 'the name is too long';
    default:
      return code ?? 'it cannot be written';
  }
}
