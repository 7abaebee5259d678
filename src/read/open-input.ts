// Opens what the user named as input: a file path, `-` for standard input, or a stream (the library
// API). A path that cannot be read is refused here, before any byte is parsed, with one line that
// says why and what to give instead.
import fs from 'node:fs';
import type { Readable } from 'node:stream';
import { UnreadableInputError } from '../api/errors.js';

export interface OpenedInput {
  stream: Readable;
  /** How messages name the input: its path as given, 'standard input' or 'the input stream'. */
  name: string;
  /** The file's size, when it is a regular file: for progress and ETA. */
  totalBytes: number | undefined;
}

/** Large reads: the parser is the bottleneck, and fewer chunks mean fewer calls into it. */
const READ_CHUNK = 256 * 1024;

function reasonFor(code: string | undefined): string {
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  return code ?? 'unreadable';
}

export function openInput(input: string | Readable): OpenedInput {
  if (typeof input !== 'string') return { stream: input, name: 'the input stream', totalBytes: undefined };
  if (input === '-') return { stream: process.stdin, name: 'standard input', totalBytes: undefined };
  let totalBytes: number | undefined;
  try {
    const stat = fs.statSync(input);
    if (stat.isDirectory()) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
    totalBytes = stat.isFile() ? stat.size : undefined;
    fs.accessSync(input, fs.constants.R_OK);
  } catch (error) {
    const why = reasonFor((error as NodeJS.ErrnoException).code);
    throw new UnreadableInputError(`Cannot read input ${input}: ${why}; give the path of a CSV file, or - for stdin`);
  }
  return { stream: fs.createReadStream(input, { highWaterMark: READ_CHUNK }), name: input, totalBytes };
}
