// Takes records off the parser in batches: one promise per batch of up to BATCH_RECORDS, since a
// promise per record would cost more than the parsing itself.
import type { Parser } from 'csv-parse';

export const BATCH_RECORDS = 512;

export class RecordBatches {
  readonly #parser: Parser;
  #ended = false;
  #failure: Error | undefined;

  constructor(parser: Parser) {
    this.#parser = parser;
    parser.once('end', () => {
      this.#ended = true;
    });
  }

  /** The parser has handed out its last record. */
  get ended(): boolean {
    return this.#ended;
  }

  /** The reason reading stopped, thrown by the next call to `next` (the first reason wins). */
  fail(error: Error): void {
    this.#failure ??= error;
  }

  /** The next batch, or undefined at the end of the input. */
  async next(): Promise<string[][] | undefined> {
    for (;;) {
      const batch: string[][] = [];
      let record: string[] | null;
      while (batch.length < BATCH_RECORDS && (record = this.#parser.read() as string[] | null) !== null) batch.push(record);
      if (batch.length > 0) return batch;
      if (this.#failure) throw this.#failure;
      if (this.#ended || this.#parser.destroyed) return undefined;
      await this.#readable();
      // The pipeline's rejection may settle a tick after the parser's error event.
      await new Promise((resolve) => setImmediate(resolve));
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
