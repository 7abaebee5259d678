// The read phase for rows that are already objects or arrays (enrichRows): any iterable or async
// iterable, pulled only as the run asks for the next batch, so a database cursor is read as fast
// as results are consumed and no faster. Cells become the byte strings the rest of the run works
// on (UTF-8, one character per byte: read/byte-string.ts); each row's own object is kept, by row
// number, until its result is handed back.
import { ConfigError } from '../api/errors.js';
import { toBytes } from './byte-string.js';
import type { CsvSource } from './open-csv.js';
import type { RecordCount } from './record-estimate.js';

/** Rows pulled per batch: small, so that reading stays close to consuming. */
const ROWS_PER_BATCH = 64;

export type InputRow = Record<string, unknown> | readonly unknown[];

function cellOf(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return toBytes(value);
  if (value instanceof Date) return value.toISOString();
  return toBytes(typeof value === 'object' ? JSON.stringify(value) : String(value));
}

export class RowsSource implements CsvSource {
  header: string[] = [];
  readonly delimiter = ',';
  readonly recordDelimiter = '\n' as const;
  readonly encoding = 'utf-8';
  readonly outputBom = false;
  readonly totalBytes = undefined;
  readonly #iterator: Iterator<InputRow> | AsyncIterator<InputRow>;
  /** The names of the cells: options.header, else the first object's keys. */
  #names: string[] | undefined;
  readonly #originals = new Map<number, InputRow>();
  #first: InputRow | undefined;
  #pulled = 0;
  #taken = 0;
  #done = false;

  constructor(rows: Iterable<InputRow> | AsyncIterable<InputRow>, header: readonly string[] | undefined) {
    const asyncIterable = (rows as AsyncIterable<InputRow>)[Symbol.asyncIterator];
    const syncIterable = (rows as Iterable<InputRow>)[Symbol.iterator];
    if (typeof asyncIterable !== 'function' && typeof syncIterable !== 'function') {
      throw new ConfigError('Invalid rows: must be an iterable or async iterable of objects or arrays, such as an array or an async generator');
    }
    this.#iterator = typeof asyncIterable === 'function' ? asyncIterable.call(rows) : syncIterable.call(rows);
    this.#names = header ? [...header] : undefined;
  }

  /** Reads the first row to learn the header (objects' keys), unless options.header named it. */
  async start(): Promise<void> {
    const first = await this.#pull();
    this.#first = first;
    if (this.#names) this.header = this.#names.map(toBytes);
    else if (first === undefined) this.header = [];
    else if (Array.isArray(first))
      throw new ConfigError('Invalid option header: rows given as arrays need header, the names of their cells, such as ["email", "name"]');
    else {
      this.#names = Object.keys(first);
      this.header = this.#names.map(toBytes);
    }
  }

  async #pull(): Promise<InputRow | undefined> {
    if (this.#done) return undefined;
    const next = await this.#iterator.next();
    if (next.done) {
      this.#done = true;
      return undefined;
    }
    const row = next.value;
    if (typeof row !== 'object' || row === null) throw new ConfigError(`Invalid row ${this.#pulled + 1}: must be an object or an array, got ${typeof row}`);
    return row;
  }

  #cells(row: InputRow): string[] {
    if (Array.isArray(row)) return row.map(cellOf);
    return this.#names!.map((name) => cellOf((row as Record<string, unknown>)[name]));
  }

  readonly batches: AsyncIterable<string[][]> = {
    [Symbol.asyncIterator]: () => ({
      next: async (): Promise<IteratorResult<string[][]>> => {
        const batch: string[][] = [];
        while (batch.length < ROWS_PER_BATCH) {
          const row = this.#first ?? (await this.#pull());
          this.#first = undefined;
          if (row === undefined) break;
          this.#pulled += 1;
          this.#originals.set(this.#pulled, row);
          batch.push(this.#cells(row));
        }
        return batch.length > 0 ? { done: false, value: batch } : { done: true, value: undefined };
      },
    }),
  };

  /** Rows pulled from the caller's iterable so far. */
  get pulled(): number {
    return this.#pulled;
  }

  /** The caller's own row number `row` (1-based), handed back with its result; earlier ones are dropped. */
  take(row: number): InputRow | undefined {
    for (; this.#taken < row - 1; this.#taken += 1) this.#originals.delete(this.#taken + 1);
    const original = this.#originals.get(row);
    this.#originals.delete(row);
    this.#taken = row;
    return original;
  }

  sawInvalidUtf8(): boolean {
    return false;
  }

  bytesRead(): number {
    return 0;
  }

  /** An iterable has no size: the rows are known only once it is done. */
  estimatedRecords(): RecordCount | undefined {
    return this.#done ? { records: this.#pulled, exact: true } : undefined;
  }

  /** Stops pulling, and lets the caller's iterator release what it holds (a cursor, a file). */
  destroy(): void {
    if (this.#done) return;
    this.#done = true;
    this.#first = undefined;
    void Promise.resolve(this.#iterator.return?.()).catch(() => {});
  }
}
