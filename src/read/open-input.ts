// Opens what the user named as input: a file path, `-` for standard input, or a stream (the library
// API). A path that cannot be read is refused here, before any byte is parsed, with one line that
// says why and what to give instead.
import fs from 'node:fs';
import net from 'node:net';
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
    if (stat.isFIFO()) return { stream: openPipe(input), name: input, totalBytes };
  } catch (error) {
    const why = reasonFor((error as NodeJS.ErrnoException).code);
    throw new UnreadableInputError(`Cannot read input ${input}: ${why}; give the path of a CSV file, or - for stdin`);
  }
  return { stream: fs.createReadStream(input, { highWaterMark: READ_CHUNK }), name: input, totalBytes };
}

/**
 * A named pipe (mkfifo, a shell's <(...)), read as a socket is: a file stream's open and reads
 * wait in Node's thread pool until a writer comes or writes, and the process can then neither
 * stop on a signal nor exit. Opened without waiting; our own write end, held until the first bytes
 * arrive, keeps a writer that has not opened the pipe yet from reading as the end of the input.
 */
function openPipe(input: string): Readable {
  const { O_RDONLY, O_WRONLY, O_NONBLOCK } = fs.constants;
  const fd = fs.openSync(input, O_RDONLY | O_NONBLOCK);
  let hold: number | undefined = fs.openSync(input, O_WRONLY | O_NONBLOCK);
  const release = () => {
    if (hold !== undefined) fs.closeSync(hold);
    hold = undefined;
  };
  const socket = new net.Socket({ fd, readable: true, writable: false });
  // 'readable', not 'data': a 'data' listener would set the stream flowing before the head is read.
  for (const event of ['readable', 'close', 'error'] as const) socket.once(event, release);
  return socket;
}
