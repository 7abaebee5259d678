// The enriched output as an Excel workbook (docs/cli-contract.md, "Spreadsheets"), streamed: each batch
// of rows becomes worksheet XML deflated into the zip at once (zip-writer.ts), so memory stays
// flat whatever the row count. The input sheet's cells keep their values, types and formulas
// (what the workbook reader kept beside each record; a CSV input's cells are text), then
// lead_status and the added columns, after the last column any of the sheet's cells or merged
// ranges uses, every added cell an inline string, never a formula. The header row is bold and
// frozen. An .xlsx input's workbook is kept whole: its other parts copied as they are stored, each
// row at the row number it had (workbook-package.ts).
//
// Everything that could stop the workbook is done or checked in start(), which the run waits for
// before its first lookup (ready()): the input's parts checked and copied, the sheet framed by its
// parser, the room for the added columns. What is left for the end is the rows' own XML.
import type { Writable } from 'node:stream';
import { LeadEnrichError, UnreadableInputError, UnwritableOutputError } from '../api/errors.js';
import type { FinishedRow } from '../core/rows.js';
import { fromBytes, type SheetCell, type SheetOrigin } from '../read/index.js';
import type { ColumnSet } from './columns.js';
import { checkRoom, MAX_ROWS } from './sheet-frame.js';
import { MAX_CELL_CHARS, rowXml, type OutCell, type RowStyles } from './sheet-xml.js';
import type { WorkbookPackage } from './workbook-package.js';
import { WorkbookStyles } from './workbook-styles.js';
import { ZipWriter, type ZipEntry } from './zip-writer.js';
import { CSV_INSTEAD } from './output-words.js';

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
  /** Where a note about the output goes (cells cut to Excel's limit, an input saved again meanwhile). */
  warn?: ((line: string) => void) | undefined;
}

interface Started {
  pkg: WorkbookPackage;
  styles: WorkbookStyles;
  entry: ZipEntry;
  close: () => Promise<void>;
  /** The input's columns: its header's, or as far as its cells and merged ranges reach. */
  width: number;
}

export class WorkbookOutput {
  readonly #options: WorkbookOutputOptions;
  readonly #zip: ZipWriter;
  /** Resolves once the parts before the rows are written; rows wait for it in #pending. */
  readonly #ready: Promise<Started>;
  #started: Started | undefined;
  #pkg: WorkbookPackage | undefined;
  #pending: FinishedRow[][] = [];
  #lastRow = 0;
  readonly #cuts = { count: 0, first: '' };
  #changeSaid = false;

  constructor(options: WorkbookOutputOptions) {
    this.#options = options;
    this.#zip = new ZipWriter(options.target);
    this.#ready = this.#start().catch((error: unknown) => {
      this.#release();
      if (error instanceof LeadEnrichError) throw error;
      // The input's parts could not be read as they were copied (a damaged zip).
      const why = error instanceof Error ? error.message : String(error);
      throw new UnwritableOutputError(`Cannot write the workbook: ${why}; ${CSV_INSTEAD()}, or save the input again as .xlsx`, { cause: error });
    });
    // A failure reaches the run through ready(), drained() or finish(); never an unhandled rejection.
    this.#ready.catch(() => {});
  }

  /** Resolves when everything but the rows is written; rejects with what stops the workbook. */
  async ready(): Promise<void> {
    await this.#ready;
  }

  async #start(): Promise<Started> {
    const { workbook, headerLine, header, columns } = this.#options;
    // Loaded here, not at start-up: its zip and XML libraries are for workbook outputs only.
    const { freshPackage, inputPackage, outputHead } = await import('./workbook-package.js');
    const pkg = workbook ? await inputPackage(workbook) : freshPackage(safeSheetName(this.#options.sheetName));
    this.#pkg = pkg;
    checkRoom(pkg.frame, header.length, 1 + columns.names.length, workbook?.file ?? 'the input');
    this.#checkInput('since the run read it');
    const styles = new WorkbookStyles(pkg.styles, headerLine);
    for (const [name, xml] of pkg.fixed) await this.#zip.add(name, xml);
    for (const part of pkg.copies) await this.#zip.copy(part, pkg.zip!.stored(part.name)!);
    const { entry, close } = this.#zip.open(pkg.sheetPart);
    const headerRow = headerLine ? (workbook?.row(header) ?? 1) : undefined;
    entry.write(`${outputHead(pkg.frame, headerRow)}<${pkg.frame.prefix}sheetData>`);
    const started = { pkg, styles, entry, close, width: Math.max(header.length, pkg.frame.lastColumn) };
    this.#writeAbove(started, workbook?.above ?? []);
    if (headerRow !== undefined) this.#writeHeader(started, headerRow);
    this.#started = started;
    for (const rows of this.#pending.splice(0)) this.addRows(rows);
    return started;
  }

  /**
   * The input read by the run is still the file opened (WorkbookZip.changes): one written to
   * meanwhile stops the output before the first lookup; one saved again is said once, the output
   * made from the workbook as the run read it.
   */
  #checkInput(when: string): void {
    const zip = this.#pkg?.zip;
    const change = zip?.changes();
    if (!zip || !change || this.#changeSaid) return;
    if (change === 'modified' && !this.#started) {
      throw new UnreadableInputError(`${zip.file} was written to ${when}: run the same command again once it is saved`);
    }
    this.#changeSaid = true;
    const what = change === 'modified' ? 'was written to' : 'was saved again (or moved)';
    this.#options.warn?.(
      `${zip.file} ${what} ${when}: the outputs hold the workbook as the run read it; run the same command again for the new one (stored answers are not paid again)`,
    );
  }

  /** --skip-lines: the rows above the header, as the sheet held them. */
  #writeAbove({ entry, pkg, styles }: Started, rows: SheetOrigin['above']): void {
    for (const row of rows) {
      this.#lastRow = row.number;
      entry.write(rowXml(row.number, row.cells, this.#styles(styles, pkg), false, pkg.frame.prefix));
    }
  }

  #writeHeader({ entry, styles, pkg, width }: Started, row: number): void {
    const { header, columns, sheetCells } = this.#options;
    const typed = sheetCells?.(header);
    const cells: OutCell[] = header.map((name, i) => typed?.[i] ?? fromBytes(name));
    cells.length = width;
    this.#lastRow = row;
    entry.write(rowXml(row, [...cells, columns.status, ...columns.names], this.#styles(styles, pkg), true, pkg.frame.prefix));
  }

  #styles(styles: WorkbookStyles, pkg: WorkbookPackage): RowStyles {
    return { numFmt: (code) => styles.numFmt(code), header: styles.header, date1904: pkg.date1904, cut: (ref) => this.#cut(ref) };
  }

  #cut(ref: string): void {
    this.#cuts.count += 1;
    this.#cuts.first ||= ref;
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
      for (let i = 0; i < started.width; i += 1) {
        // --fill: the answer's text in the input's own blank cell (a text cell, as added cells are).
        const fill = finished.filled?.get(i);
        if (fill !== undefined) cells.push(fill);
        else cells.push(typed ? typed[i] : fromBytes(finished.cells[i] ?? ''));
      }
      cells.push(finished.status, ...columns.values(finished));
      // The row where the sheet had it; a row without one (a CSV input) follows the last.
      const own = workbook?.row(finished.cells);
      this.#lastRow = own !== undefined && own > this.#lastRow ? own : this.#lastRow + 1;
      if (this.#lastRow > MAX_ROWS) throw tooManyRows();
      xml += rowXml(this.#lastRow, cells, styles, false, started.pkg.frame.prefix);
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
    entry.write(`</${pkg.frame.prefix}sheetData>${pkg.frame.tail}`);
    await close();
    await this.#zip.add(pkg.stylesPart, styles.xml());
    this.#zip.finish();
    await this.#zip.drained();
    this.#checkInput('while the run worked');
    this.#release();
    if (this.#cuts.count > 0) {
      const { count, first } = this.#cuts;
      this.#options.warn?.(
        `${count === 1 ? '1 cell' : `${count} cells`} of the workbook held more than ${MAX_CELL_CHARS.toLocaleString('en-US')} characters, the most an Excel cell holds, and ${count === 1 ? 'was' : 'were'} cut there (the first: ${first}); a CSV output (-o FILE.csv) keeps them whole`,
      );
    }
  }

  /** The run failed: stop writing. */
  discard(): void {
    this.#zip.destroy();
    this.#release();
  }

  /** The input's zip is let go, once. */
  #release(): void {
    this.#pkg?.zip?.close();
    this.#pkg = undefined;
  }
}

function tooManyRows(): UnwritableOutputError {
  return new UnwritableOutputError(
    `Cannot write the workbook: it would hold more than ${MAX_ROWS.toLocaleString('en-US')} rows, the most a worksheet has; ${CSV_INSTEAD()}: the answers received are kept in the store, and the same command with -o FILE.csv writes them without paying again`,
  );
}

/** Excel's rules for a sheet name: 1 to 31 characters, none of : \ / ? * [ ]. */
function safeSheetName(name: string | undefined): string {
  const cleaned = (name ?? '')
    .replace(/[:\\/?*[\]]/g, ' ')
    .trim()
    .slice(0, 31);
  return cleaned === '' ? 'Sheet1' : cleaned;
}
