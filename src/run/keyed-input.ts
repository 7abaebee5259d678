// The input as a run reads it: its dialect, header, lines to skip, --limit, sheet and key columns.
// One place, for the run's own reading (prepare.ts) and for the passes that read the file again
// before it (the dry run's and the spend estimate's count, the order of refreshes), so that what they
// count or order is what the run looks up.
import { keyColumns, type KeyColumns } from '../plan/key-columns.js';
import { openSource, type CsvSource } from '../read/index.js';
import { inputName } from './input-wait.js';
import { readOptionsOf, type EnrichSettings } from './settings.js';

/** Where the reading's lines go: `notice` the reader's (a dialect guessed), `warn` the key columns' (a header read as data). */
export interface PassLines {
  notice: (line: string) => void;
  warn: (line: string) => void;
}

/** The input opened (`opened` sees it before its key columns are looked for) and its key columns found. */
export async function readKeyed(settings: EnrichSettings, lines: PassLines, opened?: (read: CsvSource) => void): Promise<KeyColumns> {
  const read = await openSource(settings.input, { ...readOptionsOf(settings), warn: lines.notice });
  opened?.(read);
  return keyColumns(read, { by: settings.by, columns: settings.column, header: settings.header, inputName: inputName(settings.input), warn: lines.warn });
}
