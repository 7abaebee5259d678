// An output at a named pipe (FIFO), in-process (write/fifo-stream.ts): it waits for its reader in the
// event loop, never in a thread of Node's pool (a thread blocked on a FIFO would keep even
// process.exit from ending the process); let go before a reader came, it stops waiting; a reader
// that leaves is one error in words. FIFOs are made in a temporary folder.
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { toBytes } from '../../src/read/index.js';
import { FifoStream } from '../../src/write/fifo-stream.js';
import { whyNotWritable } from '../../src/write/output-place.js';
import { RowWriter } from '../../src/write/row-writer.js';
import { columnsFor } from '../../src/write/columns.js';
import { makeTempDir } from '../helpers/files.js';
import { runChecked } from '../helpers/processes.js';

function fifoIn(dir = makeTempDir()): string {
  const fifo = path.join(dir, 'out.fifo');
  runChecked('mkfifo', [fifo]);
  return fifo;
}

/** How many of this process's descriptors lead to `fifo` (Linux: /proc/self/fd). */
function heldOpen(fifo: string): number {
  return fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`) === fifo;
    } catch {
      return false;
    }
  }).length;
}

/** A reader that takes no part (non-blocking, never read): once it is there, a writer still trying would open. */
async function expectNoWriterComes(fifo: string): Promise<void> {
  const reader = fs.openSync(fifo, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(heldOpen(fifo)).toBe(1);
  } finally {
    fs.closeSync(reader);
  }
}

// Skipped on Windows: it has no mkfifo.
describe.skipIf(process.platform === 'win32')('an output at a FIFO', { meta: { skipReason: 'no mkfifo on Windows' } }, () => {
  it('waits for a reader that comes late with the event loop free, then the reader gets every byte in order', async () => {
    const fifo = fifoIn();
    const stream = new FifoStream(fifo);
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i} ${'x'.repeat(40)}\n`);
    // More than a pipe holds (64 KiB): the writes wait for the reader in the loop, not in a thread.
    for (const line of lines) stream.write(line);
    stream.end();
    try {
      // The loop runs while it waits (a blocking open on this thread would hold every timer).
      let ticks = 0;
      const ticking = setInterval(() => (ticks += 1), 10);
      await new Promise((resolve) => setTimeout(resolve, 150));
      clearInterval(ticking);
      expect(ticks).toBeGreaterThan(0);
      let text = '';
      const reader = fs.createReadStream(fifo, 'utf8').on('data', (chunk) => (text += chunk));
      await stream.opened;
      await Promise.all([once(stream, 'close'), once(reader, 'end')]);
      expect(text).toBe(lines.join(''));
    } finally {
      stream.destroy();
    }
  });

  // Linux only: it reads /proc/self/fd, which other systems lack (its skipReason says so).
  it.runIf(process.platform === 'linux')(
    'let go before any reader came: stops waiting at once, its open never made',
    { meta: { skipReason: 'reads /proc/self/fd (Linux)' } },
    async () => {
      const fifo = fifoIn();
      const stream = new FifoStream(fifo);
      stream.write('never read\n');
      await new Promise((resolve) => setTimeout(resolve, 120));
      const closed = once(stream, 'close');
      stream.destroy();
      await expect(stream.opened).rejects.toThrow(/closed before a reader opened it/);
      await closed;
      await expectNoWriterComes(fifo);
    },
  );

  it('a reader that leaves mid-way: one error, said in words (its reader has gone)', async () => {
    const fifo = fifoIn();
    const stream = new FifoStream(fifo);
    const failed = once(stream, 'error');
    const reader = fs.createReadStream(fifo);
    await stream.opened;
    reader.destroy();
    await once(reader, 'close');
    const big = 'y'.repeat(256 * 1024);
    for (let i = 0; i < 4; i += 1) stream.write(big);
    const [error] = (await failed) as [NodeJS.ErrnoException];
    expect(error.code).toBe('EPIPE');
    expect(whyNotWritable(error)).toBe('its reader has gone (the pipe is closed)');
  });

  // Linux only: it reads /proc/self/fd, which other systems lack (its skipReason says so).
  it.runIf(process.platform === 'linux')(
    'a writer whose changes file is a FIFO nobody reads: abort() lets it go at once, nothing left waiting',
    { meta: { skipReason: 'reads /proc/self/fd (Linux)' } },
    async () => {
      const dir = makeTempDir();
      const fifo = fifoIn(dir);
      const writer = new RowWriter({
        output: path.join(dir, 'out.csv'),
        errors: undefined,
        changes: fifo,
        format: 'csv',
        header: [toBytes('email')],
        columns: columnsFor('email', { mx: false, whois: false }, {}),
        recordDelimiter: '\n',
        delimiter: ',',
        bom: false,
        headerLine: true,
      });
      const ready = writer.ready();
      ready.catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 120));
      await writer.abort();
      await expect(ready).rejects.toThrow();
      await expectNoWriterComes(fifo);
      expect(fs.readdirSync(dir).filter((name) => name !== 'out.fifo')).toEqual([]);
    },
  );
});
