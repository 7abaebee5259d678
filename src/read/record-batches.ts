// Takes records off the parser in batches: one promise per batch of up to BATCH_RECORDS, since a
// promise per record would cost more than the parsing itself.
import type { Parser } from 'csv-parse';

export const BATCH_RECORDS = 512;

export class RecordBatches {
  readonly #parser: Parser;
  readonly #describe: (error: unknown) => Error;
  #ended = false;
  #stopped = false;
  #failure: Error | undefined;

  /** `describe` turns whatever stopped the parser into the error the reader throws. */
  constructor(parser: Parser, describe: (error: unknown) => Error) {
    this.#parser = parser;
    this.#describe = describe;
    parser.once('end', () => {
      this.#ended = true;
    });
    // Taken at once: the pipeline's rejection settles later than the parser is destroyed, and a
    // destroyed parser must never be read as the end of the input (the rows after it would be lost).
    parser.once('error', (error: unknown) => this.fail(describe(error)));
  }

  /** The parser has handed out its last record. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The reason reading stopped, thrown by the next call to `next` (the first reason wins). */
  fail(error: Error): void {
    this.#failure ??= error;
  }

  /** Reading is given up on purpose (the run failed elsewhere): `next` then says the input ended. */
  stop(): void {
    this.#stopped = true;
  }

  /** The next batch, or undefined at the end of the input. */
  async next(): Promise<string[][] | undefined> {
    for (;;) {
      const batch: string[][] = [];
      let record: string[] | null;
      while (batch.length < BATCH_RECORDS && (record = this.#parser.read() as string[] | null) !== null) batch.push(record);
      if (batch.length > 0) return batch;
      if (this.#failure) throw this.#failure;
      if (this.#ended || this.#stopped) return undefined;
      // Destroyed without its 'end' and without an error: reading stopped short all the same.
      if (this.#parser.destroyed) throw this.#describe(new Error('reading stopped before the end of the input'));
      await this.#readable();
    }
  }

  /** Resolves when the parser has records, has ended, or has failed. */
  #readable(): Promise<void> {
    const parser = this.#parser;
    return new Promise((resolve) => {
      const events = ['readable', 'end', 'error', 'close'] as const;
      const done = () => {
        for (const event of events) parser.off(event, done);
        resolve();
      };
      for (const event of events) parser.on(event, done);
    });
  }
}
