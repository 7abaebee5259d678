// A named pipe (FIFO) written as it is, without a thread of Node's pool ever blocked on it. open()
// for writing waits in the kernel until a reader opens the other end, and a write waits while the
// pipe is full: in the pool, a FIFO nobody reads would hold a thread for ever, and Node joins its
// pool's threads before the process exits, so even `process.exit` would wait. Instead the FIFO is
// opened non-blocking, tried again every POLL_MS until a reader is there (ENXIO until then), and
// written through a pipe handle of the event loop (net.Socket on the descriptor, as Node writes a
// piped stdout): a full pipe is waited for in the loop, and a signal is still heard meanwhile.
import fs from 'node:fs';
import net from 'node:net';
import { Writable } from 'node:stream';

const POLL_MS = 50;

export class FifoStream extends Writable {
  readonly #name: string;
  #socket: net.Socket | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Resolves once a reader has the other end; rejects with why the FIFO cannot be opened. */
  readonly opened: Promise<void>;
  #settle!: { resolve: () => void; reject: (error: Error) => void };

  constructor(name: string) {
    super({ decodeStrings: true });
    this.#name = name;
    this.opened = new Promise((resolve, reject) => {
      this.#settle = { resolve, reject };
    });
    // Handled here too: a caller that never waits for it hears of a failure through 'error'.
    this.opened.catch(() => {});
  }

  override _construct(callback: (error?: Error | null) => void): void {
    const attempt = (): void => {
      this.#timer = undefined;
      let fd: number;
      try {
        fd = fs.openSync(this.#name, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
      } catch (error) {
        // Let go while it waited (the run failed or was stopped): nothing more to say.
        if (this.destroyed) {
          callback();
          return;
        }
        if ((error as NodeJS.ErrnoException).code === 'ENXIO') {
          this.#timer = setTimeout(attempt, POLL_MS);
          return;
        }
        this.#settle.reject(error as Error);
        callback(error as Error);
        return;
      }
      const socket = new net.Socket({ fd, readable: false, writable: true });
      socket.on('error', (error) => this.destroy(error));
      this.#socket = socket;
      this.#settle.resolve();
      callback();
    };
    attempt();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (this.#socket) this.#socket.write(chunk, callback);
    else callback();
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.#socket) this.#socket.end(() => callback());
    else callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#settle.reject(error ?? new Error(`${this.#name} was closed before a reader opened it`));
    this.#socket?.destroy();
    callback(error);
  }
}
