// Finished rows handed to a library caller's loop (enrichRows) instead of a file: the run waits
// until the caller has taken what it was given, so rows are read and looked up only as fast as
// results are consumed (a slow consumer keeps memory flat).
import type { FinishedRow } from '../core/rows.js';
import type { RowSink } from '../write/row-writer.js';

export class ConsumerSink implements RowSink {
  #queue: FinishedRow[] = [];
  #head = 0;
  #ended = false;
  #closed = false;
  #failure: unknown;
  #wakeConsumer: (() => void) | undefined;
  #wakeRun: (() => void) | undefined;

  writeRows(rows: readonly FinishedRow[]): Promise<void> | undefined {
    if (rows.length === 0 || this.#closed) return undefined;
    this.#queue.push(...rows);
    this.#wake();
    return new Promise<void>((resolve) => {
      this.#wakeRun = resolve;
    });
  }

  /** The next row for the caller, in order; undefined once the run ended. */
  async next(): Promise<FinishedRow | undefined> {
    for (;;) {
      if (this.#head < this.#queue.length) {
        const row = this.#queue[this.#head]!;
        this.#head += 1;
        if (this.#head === this.#queue.length) this.#drained();
        return row;
      }
      if (this.#failure !== undefined) throw this.#failure;
      if (this.#ended) return undefined;
      await new Promise<void>((resolve) => {
        this.#wakeConsumer = resolve;
      });
    }
  }

  #drained(): void {
    this.#queue = [];
    this.#head = 0;
    const wake = this.#wakeRun;
    this.#wakeRun = undefined;
    wake?.();
  }

  #wake(): void {
    const wake = this.#wakeConsumer;
    this.#wakeConsumer = undefined;
    wake?.();
  }

  async commit(): Promise<{ output: string | undefined; errors: string | undefined }> {
    this.#ended = true;
    this.#wake();
    return { output: undefined, errors: undefined };
  }

  async abort(): Promise<void> {
    this.#ended = true;
    this.#wake();
  }

  /** The run failed: the caller's next() rejects with its error. */
  fail(error: unknown): void {
    this.#failure = error;
    this.#wake();
  }

  /** The caller stopped consuming: nothing more is kept, and the run is never held back again. */
  close(): void {
    this.#closed = true;
    this.#ended = true;
    this.#drained();
    this.#wake();
  }
}
