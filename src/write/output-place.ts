// What an output's name is, and so how it is written (docs/cli-contract.md, "Never overwritten": an
// output never replaces what it names). A regular file, or a name not made yet: written to a
// temporary file beside it and renamed over it when complete, a link followed to its target (the
// link stays a link). A named pipe (FIFO) or a character device (/dev/null, a terminal) is opened
// and written as it is: renamed over, a FIFO would be replaced by a file its reader never sees,
// /dev/null by a file that grows. The process's own standard output or error, named as a file
// (/dev/stdout when stdout is a file, a pipe or a socket), is that stream. Anything else (a
// folder, a socket, a block device) is refused in one line before the first lookup.
import fs from 'node:fs';
import path from 'node:path';
import { UnwritableOutputError } from '../api/errors.js';
import { realPathOf } from '../core/real-path.js';

export type OutputPlace =
  /** Written beside `target` (links followed) and renamed over it when complete. */
  | { how: 'file'; name: string; target: string }
  /** A FIFO: opened as it is and written in order; `target` (links followed) is where its lock goes. */
  | { how: 'fifo'; name: string; target: string }
  /** A character device: opened as it is; any number of runs may write it. */
  | { how: 'device'; name: string }
  /** The process's own standard output, or its standard error. */
  | { how: 'stdout'; name: string }
  | { how: 'stderr'; name: string };

/** Where `name` is written; throws UnwritableOutputError, worded by `refuse`, for what no output may be. */
export function outputPlace(name: string, refuse: (why: string, cause?: unknown) => Error): OutputPlace {
  const absolute = path.resolve(name);
  let stat: fs.Stats | undefined;
  try {
    stat = fs.statSync(absolute, { throwIfNoEntry: false });
  } catch (error) {
    throw refuse(whyNotWritable(error), error);
  }
  if (stat === undefined || stat.isFile()) {
    const stream = stat && standardStream(stat);
    return stream ? { how: stream, name: absolute } : { how: 'file', name: absolute, target: realPathOf(absolute) };
  }
  if (stat.isCharacterDevice()) return { how: 'device', name: absolute };
  const stream = standardStream(stat);
  if (stream) return { how: stream, name: absolute };
  if (stat.isFIFO()) return { how: 'fifo', name: absolute, target: realPathOf(absolute) };
  throw refuse(
    stat.isDirectory() ? 'it is a folder' : stat.isSocket() ? 'it is a socket' : stat.isBlockDevice() ? 'it is a block device (a disk)' : 'it is not a file',
  );
}

/** The standard stream `stat` is (a file redirected with > or >>, a pipe, a socket), if any. */
function standardStream(stat: fs.Stats): 'stdout' | 'stderr' | undefined {
  for (const [fd, stream] of [
    [1, 'stdout'],
    [2, 'stderr'],
  ] as const) {
    try {
      const own = fs.fstatSync(fd);
      if (own.dev === stat.dev && own.ino === stat.ino) return stream;
    } catch {
      // Closed: no stream there.
    }
  }
  return undefined;
}

/** `name` is this process's standard output: '-', or a name for it (/dev/stdout, the file stdout was sent to). */
export function isStandardOutput(name: unknown): boolean {
  if (name === '-') return true;
  if (typeof name !== 'string' || name === '') return false;
  try {
    const stat = fs.statSync(name);
    const own = fs.fstatSync(1);
    return own.dev === stat.dev && own.ino === stat.ino;
  } catch {
    return false;
  }
}

/** This process's standard output is a character device (a terminal, /dev/null). */
export function standardOutputIsDevice(): boolean {
  try {
    return fs.fstatSync(1).isCharacterDevice();
  } catch {
    return false;
  }
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
    case 'ELOOP':
      return 'its links lead in a circle';
    case 'EPIPE':
      return 'its reader has gone (the pipe is closed)';
    case 'ENXIO':
      return 'nothing is there to take it (a socket, or a device that is not connected)';
    default:
      return code ?? 'it cannot be written';
  }
}
