// The enriched output as an Excel workbook (docs/cli-contract.md, "Spreadsheets"), streamed: each batch
// of rows becomes worksheet XML deflated into the zip at once (zip-writer.ts), so memory stays
// flat whatever the row count. The input sheet's cells keep their values and types (numbers,
// dates, booleans: what the workbook reader kept beside each record; a CSV input's cells are
// text), then lead_status and the added columns, every added cell an inline string, never a
// formula. The header row is bold and frozen. An .xlsx input's workbook is kept whole: its other
// parts copied as they are, each row at the row number it had (workbook-package.ts).
import type { Writable } from 'node:stream';
import { LeadEnrichError, UnwritableOutputError } from '../api/errors.js';
import type { FinishedRow } from '../core/rows.js';
import { fromBytes, type SheetCell, type SheetOrigin } from '../read/index.js';
import type { ColumnSet } from './columns.js';
import { rowXml, type OutCell } from './sheet-xml.js';
import type { WorkbookPackage } from './workbook-package.js';
import { WorkbookStyles } from './workbook-styles.js';
import { ZipWriter, type ZipEntry } from './zip-writer.js';

export interface WorkbookOutputOptions {
  /** Where the workbook's bytes go: the temporary file, a caller's stream, or stdout (not ended here). */
  target: Writable;
  /** The input header, as byte strings. */
  header: string[];
  columns: ColumnSet;
  /** Write the header row (not when the input had none: --no-header). */
  headerLine: boolean;
  /** The input's worksheet name, for the output's; CSV inputs get `Sheet1`. */
  sheetName: string | undefined;
  /** A record's cells as the input sheet held them; undefined for a CSV input (text cells). */
  sheetCells: ((record: readonly string[]) => readonly SheetCell[] | undefined) | undefined;
  /** An .xlsx input's workbook, kept whole in the output. */
  workbook?: SheetOrigin | undefined;
}

interface Started {
  pkg: WorkbookPackage;
  styles: WorkbookStyles;
  entry: ZipEntry;
  close: () => Promise<void>;
}

export class WorkbookOutput {
  readonly #options: WorkbookOutputOptions;
  readonly #zip: ZipWriter;
  readonly #width: number;
  /** Resolves once the parts before the rows are written; rows wait for it in #pending. */
  readonly #ready: Promise<Started>;
  #started: Started | undefined;
  #pending: FinishedRow[][] = [];
  #lastRow = 0;

  constructor(options: WorkbookOutputOptions) {
    this.#options = options;
    this.#width = options.header.length;
    this.#zip = new ZipWriter(options.target);
    this.#ready = this.#start().catch((error: unknown) => {
      if (error instanceof LeadEnrichError) throw error;
      // The input workbook changed or vanished since it was read, or holds parts we cannot take over.
      const why = error instanceof Error ? error.message : String(error);
      throw new UnwritableOutputError(`Cannot write the workbook: ${why}; write CSV instead (-o FILE.csv), or save the input again as .xlsx`, { cause: error });
    });
    // A failure reaches the run through drained() or finish(); never an unhandled rejection.
    this.#ready.catch(() => {});
  }

  async #start(): Promise<Started> {
    const { workbook, headerLine, header } = this.#options;
    // Loaded here, not at start-up: its zip and XML libraries are for workbook outputs only.
    const { freshPackage, inputPackage, outputHead } = await import('./workbook-package.js');
    const pkg = workbook ? await inputPackage(workbook) : freshPackage(safeSheetName(this.#options.sheetName));
    const styles = new WorkbookStyles(pkg.styles, headerLine);
    for (const [name, xml] of pkg.fixed) await this.#zip.add(name, xml);
    const { entry, close } = this.#zip.open(pkg.sheetPart);
    const headerRow = headerLine ? (workbook?.row(header) ?? 1) : undefined;
    entry.write(`${outputHead(pkg.head, pkg.prefix, headerRow)}<${pkg.prefix}sheetData>`);
    const started = { pkg, styles, entry, close };
    if (headerRow !== undefined) this.#writeHeader(started, headerRow);
    this.#started = started;
    for (const rows of this.#pending.splice(0)) this.addRows(rows);
    return started;
  }

  #writeHeader({ entry, styles, pkg }: Started, row: number): void {
    const { header, columns, sheetCells } = this.#options;
    const typed = sheetCells?.(header);
    const cells: OutCell[] = header.map((name, i) => typed?.[i] ?? fromBytes(name));
    this.#lastRow = row;
    entry.write(rowXml(row, [...cells, columns.status, ...columns.names], this.#styles(styles, pkg), true, pkg.prefix));
  }

  #styles(styles: WorkbookStyles, pkg: WorkbookPackage): { numFmt: (code: string | undefined) => number; header: number; date1904: boolean } {
    return { numFmt: (code) => styles.numFmt(code), header: styles.header, date1904: pkg.date1904 };
  }

  /** Adds rows in order; their XML goes into the zip at once (or when the workbook's head is written). */
  addRows(rows: readonly FinishedRow[]): void {
    const started = this.#started;
    if (!started) {
      this.#pending.push([...rows]);
      return;
    }
    const { columns, sheetCells, workbook } = this.#options;
    const styles = this.#styles(started.styles, started.pkg);
    let xml = '';
    for (const finished of rows) {
      const typed = sheetCells?.(finished.cells);
      const cells: OutCell[] = [];
      for (let i = 0; i < this.#width; i += 1) {
        // --fill: the answer's text in the input's own blank cell (a text cell, as added cells are).
        const fill = finished.filled?.get(i);
        if (fill !== undefined) cells.push(fill);
        else cells.push(typed ? typed[i] : fromBytes(finished.cells[i] ?? ''));
      }
      cells.push(finished.status, ...columns.values(finished));
      // The row where the sheet had it; a row without one (a CSV input) follows the last.
      const own = workbook?.row(finished.cells);
      this.#lastRow = own !== undefined && own > this.#lastRow ? own : this.#lastRow + 1;
      xml += rowXml(this.#lastRow, cells, styles, false, started.pkg.prefix);
    }
    started.entry.write(xml);
  }

  /** Resolves when the zip can take more rows; undefined when there is nothing to wait for. */
  drained(): Promise<void> | undefined {
    if (!this.#started) return this.#ready.then(() => undefined);
    if (!this.#zip.needsDrain) return undefined;
    return Promise.all([this.#started.entry.drained(), this.#zip.drained()]).then(() => undefined);
  }

  /** The workbook is complete: its last bytes handed to the target (not ended). */
  async finish(): Promise<void> {
    const { pkg, styles, entry, close } = await this.#ready;
    entry.write(`</${pkg.prefix}sheetData>${pkg.tail}`);
    await close();
    for (const part of pkg.copies) {
      const copy = this.#zip.open(part);
      for await (const chunk of pkg.zip!.stream(part)!) {
        if (!copy.entry.write(chunk as Buffer)) await copy.entry.drained();
      }
      await copy.close();
    }
    await this.#zip.add(pkg.stylesPart, styles.xml());
    this.#zip.finish();
    await this.#zip.drained();
  }

  /** The run failed: stop writing. */
  discard(): void {
    this.#zip.destroy();
  }
}

/** Excel's rules for a sheet name: 1 to 31 characters, none of : \ / ? * [ ]. */
function safeSheetName(name: string | undefined): string {
  const cleaned = (name ?? '').replace(/[:\\/?*[\]]/g, ' ').trim().slice(0, 31);
  return cleaned === '' ? 'Sheet1' : cleaned;
}
