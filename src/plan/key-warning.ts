import { fromBytes, type CsvSource } from '../read/index.js';
import { optionWord } from '../options/option-table.js';
import type { LookupTarget } from './detect.js';

/**
 * Most rows with no usable key usually means the wrong column or a wrong delimiter, not a file
 * of bad data (docs/cli-contract.md, "Input files": the dry run warns).
 */
export function keyWarning(
  counts: { rows: number; invalidRows: number; noKeyRows: number },
  source: CsvSource,
  targets: readonly LookupTarget[],
): string | undefined {
  const unusable = counts.invalidRows + counts.noKeyRows;
  if (counts.rows === 0 || unusable * 2 <= counts.rows) return undefined;
  const delimiter = fromBytes(source.delimiter);
  const columns = `${unusable} of ${counts.rows} ${counts.rows === 1 ? 'row' : 'rows'} ${unusable === 1 ? 'has' : 'have'} no usable key in column${targets.length > 1 ? 's' : ''} ${targets.map((t) => `'${t.columnName}'`).join(', ')}: `;
  const give = (other: 'sheet' | 'delimiter') => `(give ${optionWord('column')}, ${optionWord('by')} or ${optionWord(other)})`;
  if (source.sheet !== undefined) return `${columns}the key column looks wrong, or the sheet: read '${source.sheet}' ${give('sheet')}`;
  return `${columns}the key column looks wrong, or the delimiter: detected '${delimiter === '\t' ? 'tab' : delimiter}' ${give('delimiter')}`;
}
