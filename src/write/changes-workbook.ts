// The --changes file as a workbook (`--changes changes.xlsx`): one sheet, `Changes`, its header row
// bold and frozen, then one row per changed field, every cell an inline string (text whatever it
// holds: a `before` of "=1+1" or "00123" is read back as written, never a formula or a number).
// Streamed into the zip as the records come (zip-writer.ts), like the enriched workbook, so memory
// stays flat and a FIFO or a pipe takes it as it is made.
import type { Writable } from 'node:stream';
import { UnwritableOutputError } from '../api/errors.js';
import { MAX_ROWS } from './sheet-frame.js';
import { MAX_CELL_CHARS, rowXml, type RowStyles } from './sheet-xml.js';
import { WorkbookStyles } from './workbook-styles.js';
import { ZipWriter, type ZipEntry } from './zip-writer.js';

interface Started {
  entry: ZipEntry;
  close: () => Promise<void>;
  styles: WorkbookStyles;
  stylesPart: string;
  tail: string;
}

export class ChangesWorkbook {
  readonly #zip: ZipWriter;
  readonly #ready: Promise<Started>;
  readonly #warn: ((line: string) => void) | undefined;
  #started: Started | undefined;
  #pending: (readonly string[])[] = [];
  #row = 1;
  readonly #cuts = { count: 0, first: '' };

  constructor(target: Writable, header: readonly string[], warn?: (line: string) => void) {
    this.#zip = new ZipWriter(target);
    this.#warn = warn;
    this.#ready = this.#start(header);
    // A failure reaches the run through ready(), drained() or finish(); never an unhandled rejection.
    this.#ready.catch(() => {});
  }

  async ready(): Promise<void> {
    await this.#ready;
  }

  async #start(header: readonly string[]): Promise<Started> {
    // Loaded here, not at start-up, as the enriched workbook loads it.
    const { freshPackage, outputHead } = await import('./workbook-package.js');
    const pkg = freshPackage('Changes');
    const styles = new WorkbookStyles(pkg.styles, true);
    for (const [name, xml] of pkg.fixed) await this.#zip.add(name, xml);
    const { entry, close } = this.#zip.open(pkg.sheetPart);
    entry.write(`${outputHead(pkg.frame, 1)}<sheetData>${rowXml(1, header, this.#styles(styles), true)}`);
    this.#started = { entry, close, styles, stylesPart: pkg.stylesPart, tail: `</sheetData>${pkg.frame.tail}` };
    const pending = this.#pending.splice(0);
    if (pending.length > 0) this.add(pending);
    return this.#started;
  }

  #styles(styles: WorkbookStyles): RowStyles {
    return {
      numFmt: () => 0,
      header: styles.header,
      date1904: false,
      cut: (ref) => {
        this.#cuts.count += 1;
        this.#cuts.first ||= ref;
      },
    };
  }

  /** Adds records as rows; false when the zip should be let drain first. */
  add(records: readonly (readonly string[])[]): boolean {
    const started = this.#started;
    if (!started) {
      this.#pending.push(...records);
      return false;
    }
    if (this.#row + records.length > MAX_ROWS) {
      throw new UnwritableOutputError(
        `Cannot write the changes workbook: it would hold more than ${MAX_ROWS.toLocaleString('en-US')} rows, the most a worksheet has; name the changes file .csv or .jsonl`,
      );
    }
    const styles = this.#styles(started.styles);
    let xml = '';
    for (const cells of records) {
      this.#row += 1;
      xml += rowXml(this.#row, cells, styles);
    }
    return started.entry.write(xml) && !this.#zip.needsDrain;
  }

  drained(): Promise<void> | undefined {
    if (!this.#started) return this.#ready.then(() => undefined);
    if (!this.#zip.needsDrain) return undefined;
    return Promise.all([this.#started.entry.drained(), this.#zip.drained()]).then(() => undefined);
  }

  /** The workbook is complete: its last bytes handed to the target (not ended). */
  async finish(): Promise<void> {
    const { entry, close, styles, stylesPart, tail } = await this.#ready;
    entry.write(tail);
    await close();
    await this.#zip.add(stylesPart, styles.xml());
    this.#zip.finish();
    await this.#zip.drained();
    if (this.#cuts.count > 0) {
      const { count, first } = this.#cuts;
      this.#warn?.(
        `${count === 1 ? '1 cell' : `${count} cells`} of the changes workbook held more than ${MAX_CELL_CHARS.toLocaleString('en-US')} characters, the most an Excel cell holds, and ${count === 1 ? 'was' : 'were'} cut there (the first: ${first}); a changes file named .csv or .jsonl keeps them whole`,
      );
    }
  }

  discard(): void {
    this.#zip.destroy();
  }
}
