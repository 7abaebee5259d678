// The header row of each other sheet of a workbook, for a message that names the sheets that hold
// a key column when the chosen one does not. Each sheet is opened as a run would read it (the
// same first non-empty row), and closed after its header.
import { openWorkbook, sheetNamesOf } from './open-workbook.js';

export async function otherSheetHeaders(file: string, except: string): Promise<Array<{ name: string; header: string[] }>> {
  const headers: Array<{ name: string; header: string[] }> = [];
  for (const name of await sheetNamesOf(file)) {
    if (name === except) continue;
    try {
      const source = await openWorkbook(file, { sheet: name });
      source.destroy();
      headers.push({ name, header: source.header });
    } catch {
      // An empty or unreadable sheet holds no key column: it is not named.
    }
  }
  return headers;
}
