// On which line of the file each record begins: a CI annotation points at the file and line of a
// row (docs/cli-contract.md, "In a CI step"), and a row's number counts neither the header, nor the
// lines --skip-lines passes over, nor blank lines, nor the line breaks inside a quoted cell.
// It reads the text the parser reads (ReadOptions.textWatch) as the parser splits it
// (open-csv.ts): records end at a CR, an LF or a CRLF outside quotes, a line with nothing on it is
// no record, and a quote opens a quoted cell only at a cell's start (relax_quotes). A line break is
// CR, LF or CRLF, one line each, inside a quoted cell too.

const CR = 0x0d;
const LF = 0x0a;
const QUOTE = 0x22;

export class RecordLines {
  readonly #delimiter: number | undefined;
  readonly #wanted: ReadonlySet<number>;
  readonly #lines = new Map<number, number>();
  /** The line being read (1-based), and the lines above the header still to pass over. */
  #line = 1;
  #skipping: number;
  #afterCr = false;
  /** The record being read: its index once its first byte is seen (-1 between records). */
  #record = -1;
  #records = 0;
  #cellStart = true;
  #quoted = false;
  /** A quote inside a quoted cell: the end of the cell, or the first of two (a quote in it). */
  #quoteSeen = false;

  /**
   * `delimiter`: the cells' delimiter as the parser has it (a byte string: a character beyond ASCII
   * is several bytes, and is not told from the text: the lines are then not known). `skipLines`:
   * the lines above the header. `wanted`: the records (0-based, the header the first) whose line is asked for.
   */
  constructor(delimiter: string, skipLines: number, wanted: Iterable<number>) {
    this.#delimiter = delimiter.length === 1 ? delimiter.charCodeAt(0) : undefined;
    this.#skipping = skipLines;
    this.#wanted = new Set(wanted);
  }

  /** Every record asked for has begun (or the lines cannot be told). */
  get done(): boolean {
    return this.#delimiter === undefined || this.#lines.size === this.#wanted.size;
  }

  /** The line on which record `index` begins, once read. */
  lineOf(index: number): number | undefined {
    return this.#lines.get(index);
  }

  feed(chunk: Buffer | string): void {
    if (this.done) return;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
    for (let i = 0; i < bytes.length; i += 1) this.#byte(bytes[i]!);
  }

  #byte(b: number): void {
    if (b === CR || b === LF) {
      this.#lineBreak(b);
      return;
    }
    this.#afterCr = false;
    if (this.#skipping > 0) return;
    if (this.#quoted) {
      if (this.#quoteSeen) {
        this.#quoteSeen = false;
        if (b === QUOTE) return;
        this.#quoted = false;
      } else {
        if (b === QUOTE) this.#quoteSeen = true;
        return;
      }
    }
    this.#begin();
    if (b === this.#delimiter) this.#cellStart = true;
    else {
      if (b === QUOTE && this.#cellStart) this.#quoted = true;
      this.#cellStart = false;
    }
  }

  #lineBreak(b: number): void {
    const crlf = b === LF && this.#afterCr;
    this.#afterCr = b === CR;
    if (crlf) return;
    this.#line += 1;
    if (this.#skipping > 0) {
      this.#skipping -= 1;
      return;
    }
    if (this.#quoted && !this.#quoteSeen) return;
    // A quote then a line break: the quoted cell ended with the record.
    this.#quoted = false;
    this.#quoteSeen = false;
    this.#record = -1;
    this.#cellStart = true;
  }

  /** The record's first byte: the line it begins on is its line. */
  #begin(): void {
    if (this.#record >= 0) return;
    this.#record = this.#records;
    this.#records += 1;
    if (this.#wanted.has(this.#record)) this.#lines.set(this.#record, this.#line);
  }
}
