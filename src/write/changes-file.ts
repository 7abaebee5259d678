// The --changes file (docs/cli-contract.md, "What changed since the last answer"): one record per
// changed field (answer-changes.ts says which), in the format its name says. CSV, written like the
// sidecar (the output's delimiter, line ending and BOM; cells formula-escaped as added cells are);
// `.jsonl`, one JSON object a line with the CSV's columns as members (`row` a number); `.xlsx`, a
// workbook of one sheet with the CSV's columns, every cell text (changes-workbook.ts).
import type { Writable } from 'node:stream';
import { jsonText } from '../core/terminal-text.js';
import { toBytes } from '../read/index.js';
import { CHANGES_HEADER } from './answer-changes.js';
import { ChangesWorkbook } from './changes-workbook.js';
import { csvLines, escapeFormula } from './csv-lines.js';

export type ChangesFormat = 'csv' | 'jsonl' | 'xlsx';

/** The format a --changes name says: `.jsonl` and `.xlsx` (before any `.gz`), else CSV. */
export function changesFormatOf(name: string): ChangesFormat {
  if (/\.xlsx$/i.test(name)) return 'xlsx';
  return /\.jsonl(\.gz)?$/i.test(name) ? 'jsonl' : 'csv';
}

export interface ChangesLayout {
  format: ChangesFormat;
  /** The output's record delimiter, field delimiter and BOM (CSV only). */
  eol: string;
  delimiter: string;
  bom: boolean;
  warn?: ((line: string) => void) | undefined;
}

export class ChangesFile {
  readonly #stream: Writable;
  readonly #layout: ChangesLayout;
  readonly #workbook: ChangesWorkbook | undefined;

  constructor(stream: Writable, layout: ChangesLayout) {
    this.#stream = stream;
    this.#layout = layout;
    if (layout.format === 'xlsx') this.#workbook = new ChangesWorkbook(stream, CHANGES_HEADER, layout.warn);
    else if (layout.format === 'csv') stream.write((layout.bom ? '\xef\xbb\xbf' : '') + csvLines([CHANGES_HEADER], layout.eol, layout.delimiter), 'latin1');
  }

  /** Resolves when everything but the records is written (a workbook's parts). */
  async ready(): Promise<void> {
    await this.#workbook?.ready();
  }

  /** Adds records (the header's cells, as text); false when the file should be let drain first. */
  add(records: readonly (readonly string[])[]): boolean {
    if (records.length === 0) return true;
    if (this.#workbook) return this.#workbook.add(records);
    const { format, eol, delimiter } = this.#layout;
    if (format === 'jsonl') return this.#stream.write(records.map((cells) => `${jsonText(jsonRecord(cells))}\n`).join(''), 'utf8');
    return this.#stream.write(
      csvLines(
        records.map((cells) => cells.map((cell) => toBytes(escapeFormula(cell)))),
        eol,
        delimiter,
      ),
      'latin1',
    );
  }

  /** Resolves when the file can take more; undefined when there is nothing to wait for. */
  drained(): Promise<void> | undefined {
    return this.#workbook?.drained();
  }

  /** The records are all written: a workbook's last parts (the stream is not ended here). */
  async finish(): Promise<void> {
    await this.#workbook?.finish();
  }

  discard(): void {
    this.#workbook?.discard();
  }
}

/** A record as JSON: the header's names as members, `row` a number (null where the key is in no row of the file). */
function jsonRecord(cells: readonly string[]): Record<string, string | number | null> {
  const record: Record<string, string | number | null> = {};
  CHANGES_HEADER.forEach((name, i) => {
    record[name] = cells[i] ?? '';
  });
  record.row = cells[0] === '' || cells[0] === undefined ? null : Number(cells[0]);
  return record;
}
