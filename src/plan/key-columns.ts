// Which columns hold the keys, for files with a header and without one (docs/cli-contract.md, "Input
// files": "No header"). With a header, by name (detect.ts, targets.ts). Without one (--no-header,
// or a first line whose cell is itself an email address or a profile URL), by position: `--column
// N` is the 1-based position, and a kind not given with --by is read from the first row's cells.
import { ConfigError } from '../api/errors.js';
import { optionAsked, optionWord } from '../options/option-table.js';
import { fromBytes, type CsvSource } from '../read/index.js';
import { namesKeyColumn, type LookupTarget } from './detect.js';
import { LOOKUP_KINDS, normalizeKey, type LookupKind } from './normalize.js';
import { detectTargets } from './targets.js';

export interface KeyColumnOptions {
  by: LookupKind[] | undefined;
  columns: string[] | undefined;
  /** The first line is a header (false: --no-header). */
  header: boolean;
  /** How the input is named in messages. */
  inputName: string;
  warn(line: string): void;
}

export interface KeyColumns {
  targets: LookupTarget[];
  /** The input had a header line, so the enriched CSV has one too. */
  headerLine: boolean;
  /** The source to read the rows from (the first line put back when it turned out to be data). */
  source: CsvSource;
}

export async function keyColumns(source: CsvSource, options: KeyColumnOptions): Promise<KeyColumns> {
  if (!options.header) {
    const { first, source: peeked } = await peekFirstRow(source);
    return { targets: headerlessTargets(first ?? [], peeked.header, options), headerLine: false, source: peeked };
  }
  const header = source.header.map(fromBytes);
  const dataCell = options.columns ? undefined : header.find(isKeyCell);
  if (dataCell === undefined || namesItsKeyColumns(header, options.by))
    return { targets: await headerTargets(source, header, options), headerLine: true, source };
  options.warn(
    `The first line of ${options.inputName} holds ${JSON.stringify(dataCell)}, a key, not a column name: it is read as data (give --no-header to say so, or add a header line)`,
  );
  const asData = headerAsData(source);
  return { targets: headerlessTargets(header, asData.header, options), headerLine: false, source: asData };
}

/** The key columns by name; a workbook sheet without one: the one line names the sheets that have one. */
async function headerTargets(source: CsvSource, header: string[], options: KeyColumnOptions): Promise<LookupTarget[]> {
  try {
    return detectTargets(header, options.by, options.columns);
  } catch (error) {
    if (!(error instanceof ConfigError) || source.workbook === undefined || source.sheet === undefined || options.columns !== undefined) throw error;
    // Loaded only here: a CSV run never needs it.
    const { otherSheetHeaders } = await import('../read/sheet-headers.js');
    const others = await otherSheetHeaders(source.workbook.file, source.sheet).catch(() => []);
    const withKeys = others.filter(({ header: cells }) => hasTargets(cells.map(fromBytes), options.by)).map(({ name }) => `'${name}'`);
    const at = error.message.indexOf(': pass ');
    const [what, instruction] = at === -1 ? [error.message, ''] : [error.message.slice(0, at), error.message.slice(at)];
    if (withKeys.length === 0) throw new ConfigError(`${what} of sheet '${source.sheet}', nor in any other sheet of ${options.inputName}${instruction}`);
    throw new ConfigError(`${what} of sheet '${source.sheet}': pass ${optionAsked('sheet', 'NAME')} with a sheet that has one: ${withKeys.join(', ')}`);
  }
}

function hasTargets(header: readonly string[], by: LookupKind[] | undefined): boolean {
  try {
    return detectTargets(header, by, undefined).length > 0;
  } catch {
    return false;
  }
}

/** An email address or a profile URL: a cell that is a key, not a column's name. */
function isKeyCell(cell: string): boolean {
  return normalizeKey('email', cell).ok || isProfileUrl(cell);
}

/**
 * A first line that holds a key somewhere is still a header when its key column is found by a
 * name that is exactly a person key column's (`email`, `E-Mail`, `LinkedIn URL`) and no key
 * column's cell is itself a key: a header cell naming the key column wins over an email-looking
 * cell elsewhere (a column named after a mailbox, `sales@acme.com`). A name that only contains a
 * key word, or a domain column's name (`Website`), is not enough beside a real email address: a
 * line of contact data may well hold the word.
 */
function namesItsKeyColumns(header: readonly string[], by: LookupKind[] | undefined): boolean {
  let targets: LookupTarget[];
  try {
    targets = detectTargets(header, by, undefined);
  } catch {
    return false;
  }
  const names = targets.map((target) => header[target.columnIndex] ?? '');
  return names.every((name) => !isKeyCell(name)) && targets.some((target, i) => target.kind !== 'domain' && namesKeyColumn(names[i]!, target.kind));
}

/** A profile URL (not any URL: a header cell may be a link to documentation, rarely a person). */
function isProfileUrl(cell: string): boolean {
  const url = normalizeKey('url', cell);
  return url.ok && /linkedin\.com\/in\//i.test(url.key);
}

/** The targets of a file without a header: by position, the kinds from --by or the first row. */
function headerlessTargets(firstRow: string[], names: readonly string[], options: KeyColumnOptions): LookupTarget[] {
  const row = firstRow.map(fromBytes);
  const target = (index: number, kind: LookupKind): LookupTarget => ({ kind, columnIndex: index, columnName: names[index] ?? `column_${index + 1}` });
  if (options.columns) {
    return options.columns.map((column, i) => {
      const index = positionOf(column, names.length);
      const kind = options.by?.[i] ?? LOOKUP_KINDS.find((k) => normalizeKey(k, row[index] ?? '').ok);
      if (!kind)
        throw new ConfigError(
          `The first row's column ${index + 1} (${JSON.stringify(row[index] ?? '')}) is not an email, profile URL or domain: give ${optionWord('by')}`,
        );
      return target(index, kind);
    });
  }
  const kinds = options.by ?? LOOKUP_KINDS;
  const found = kinds.flatMap((kind) => {
    const index = row.findIndex((cell) => normalizeKey(kind, cell).ok);
    return index < 0 ? [] : [target(index, kind)];
  });
  if (found.length === 0 || (options.by && found.length < options.by.length)) {
    throw new ConfigError(
      `No column of the first row holds ${options.by ? `a key for each of ${options.by.join(', ')}` : 'an email, profile URL or domain'}: give ${optionAsked('column', 'N')} (its position) and ${optionWord('by')}`,
    );
  }
  return options.by ? found : [found[0]!];
}

/** `--column 2` or `--column column_2`: a 0-based index within the row's width. */
function positionOf(column: string, width: number): number {
  const n = Number(/^\s*(?:column_)?(\d+)\s*$/i.exec(column)?.[1]);
  if (!Number.isInteger(n) || n < 1 || n > Math.max(width, 1)) {
    throw new ConfigError(`Invalid option ${optionWord('column')}: without a header it is a column's position, 1 to ${Math.max(width, 1)}, got '${column}'`);
  }
  return n - 1;
}

/** The source with its first batch read ahead, to look at the first row. */
async function peekFirstRow(source: CsvSource): Promise<{ first: string[] | undefined; source: CsvSource }> {
  const iterator = source.batches[Symbol.asyncIterator]();
  const head = await iterator.next();
  const firstBatch = head.done ? undefined : head.value;
  let given = false;
  const batches: AsyncIterable<string[][]> = {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        if (!given && firstBatch) {
          given = true;
          return { done: false, value: firstBatch };
        }
        return iterator.next();
      },
    }),
  };
  return { first: firstBatch?.[0], source: { ...source, batches } };
}

/** The source whose header line is a data row: named column_1..N, the line given back first. */
function headerAsData(source: CsvSource): CsvSource {
  const first = source.header;
  const iterator = source.batches[Symbol.asyncIterator]();
  let given = false;
  return {
    ...source,
    header: first.map((_, i) => `column_${i + 1}`),
    // The line taken for a header is a record of the data after all.
    estimatedRecords: () => {
      const count = source.estimatedRecords();
      return count === undefined ? undefined : { ...count, records: count.records + 1 };
    },
    batches: {
      [Symbol.asyncIterator]: () => ({
        next: async () => {
          if (given) return iterator.next();
          given = true;
          const head = await iterator.next();
          return { done: false, value: head.done ? [first] : [first, ...head.value] };
        },
      }),
    },
  };
}
