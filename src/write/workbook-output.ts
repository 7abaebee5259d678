// The enriched output as an Excel workbook (cli-contract, "Spreadsheets"), written row by row with
// exceljs's streaming WorkbookWriter (its in-memory Workbook would hold every row): the input
// sheet's cells with their values and types (numbers, dates, booleans: what the workbook reader
// kept beside each record; a CSV input's cells are text), then lead_status and the added columns,
// every added cell a text cell, never a formula. The header row is bold and frozen.
import { once } from 'node:events';
import { PassThrough, type Writable } from 'node:stream';
import type * as ExcelJS from 'exceljs';
import type { FinishedRow } from '../core/rows.js';
import { excel, fromBytes, type SheetCell } from '../read/index.js';
import type { ColumnSet } from './columns.js';

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
}

type CellValue = ExcelJS.CellValue;

/** Date cells need a date format to show as dates; one the input gave is kept. */
const DATE_FORMAT = 'yyyy-mm-dd';
const DATE_TIME_FORMAT = 'yyyy-mm-dd hh:mm:ss';

function typedValue(cell: SheetCell | undefined): { value: CellValue; numFmt: string | undefined } {
  if (cell === undefined || cell.value === null) return { value: null, numFmt: undefined };
  const { value, numFmt } = cell;
  if (value instanceof Date) {
    const withTime = value.getTime() % 86_400_000 !== 0;
    return { value, numFmt: numFmt ?? (withTime ? DATE_TIME_FORMAT : DATE_FORMAT) };
  }
  if (typeof value === 'object') return { value: { error: value.error } as CellValue, numFmt };
  return { value, numFmt: typeof value === 'number' ? numFmt : undefined };
}

/** A text cell; an empty one is no cell. exceljs writes a string as text whatever it begins with (`=` too). */
const text = (value: string): CellValue => (value === '' ? null : value);

export class WorkbookOutput {
  readonly #options: WorkbookOutputOptions;
  readonly #zip = new PassThrough();
  readonly #workbook: ExcelJS.stream.xlsx.WorkbookWriter;
  readonly #sheet: ExcelJS.Worksheet;
  readonly #width: number;

  constructor(options: WorkbookOutputOptions) {
    this.#options = options;
    this.#width = options.header.length;
    // Through a PassThrough that does not end the target: the writer ends or keeps it (stdout) as for CSV.
    this.#zip.pipe(options.target, { end: false });
    this.#workbook = new (excel().stream.xlsx.WorkbookWriter)({ stream: this.#zip, useStyles: true, useSharedStrings: false });
    this.#sheet = this.#workbook.addWorksheet(safeSheetName(options.sheetName), {
      views: options.headerLine ? [{ state: 'frozen', ySplit: 1 }] : [],
    });
    if (options.headerLine) this.#writeHeader();
  }

  #writeHeader(): void {
    const { header, columns, sheetCells } = this.#options;
    const typed = sheetCells?.(header);
    const cells = header.map((name, i) => (typed?.[i] ? typedValue(typed[i]).value : text(fromBytes(name))));
    const row = this.#sheet.addRow([...cells, columns.status, ...columns.names]);
    row.font = { bold: true };
    row.commit();
  }

  /** Adds rows in order; each is committed (written out of memory) at once. */
  addRows(rows: readonly FinishedRow[]): void {
    const { columns, sheetCells } = this.#options;
    for (const finished of rows) {
      const typed = sheetCells?.(finished.cells);
      const values: CellValue[] = [];
      const formats: Array<[number, string]> = [];
      for (let i = 0; i < this.#width; i += 1) {
        // --fill: the answer's text in the input's own blank cell (a text cell, as added cells are).
        const fill = finished.filled?.get(i);
        if (fill !== undefined) {
          values.push(text(fill));
          continue;
        }
        if (typed) {
          const { value, numFmt } = typedValue(typed[i]);
          values.push(value);
          if (numFmt !== undefined && value !== null) formats.push([i + 1, numFmt]);
        } else {
          values.push(text(fromBytes(finished.cells[i] ?? '')));
        }
      }
      values.push(finished.status, ...columns.values(finished).map(text));
      const row = this.#sheet.addRow(values);
      for (const [column, numFmt] of formats) row.getCell(column).numFmt = numFmt;
      row.commit();
    }
  }

  /**
   * Resolves when the rows written so far have gone on into the zip. exceljs's worksheet stream
   * (StreamBuf) hands its XML to the zip entry's stream without waiting (exceljs 4.4.0: #2916, the
   * fix in PR #2558 is unreleased), so a run that writes rows faster than zlib compresses them
   * would pile the whole sheet up in memory (370 MB peak RSS at 100,000 rows): wait for that
   * stream to drain. Undefined when there is nothing to wait for.
   */
  drained(): Promise<void> | undefined {
    type Entry = Writable & { _writableState?: { needDrain?: boolean } };
    const entry = (this.#sheet as unknown as { stream?: { pipes?: Entry[] } }).stream?.pipes?.[0];
    const waits = [entry?._writableState?.needDrain ? entry : undefined, this.#zip.writableNeedDrain ? this.#zip : undefined];
    const pending = waits.filter((stream): stream is Writable => stream !== undefined).map((stream) => once(stream, 'drain'));
    return pending.length === 0 ? undefined : Promise.all(pending).then(() => undefined);
  }

  /** The workbook is complete: its last bytes handed to the target (not ended). */
  async finish(): Promise<void> {
    this.#sheet.commit();
    const drained = once(this.#zip, 'end');
    await this.#workbook.commit();
    await drained;
  }

  /** The run failed: stop writing. */
  discard(): void {
    this.#zip.unpipe(this.#options.target);
    this.#zip.destroy();
  }
}

/** Excel's rules for a sheet name: 1 to 31 characters, none of : \ / ? * [ ]. */
function safeSheetName(name: string | undefined): string {
  const cleaned = (name ?? '').replace(/[:\\/?*[\]]/g, ' ').trim().slice(0, 31);
  return cleaned === '' ? 'Sheet1' : cleaned;
}
