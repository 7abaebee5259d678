// --limit N: only the first N data rows, to try a file before the whole run. The rest is not read
// at all (the source is stopped), so a try on a big file costs what N rows cost.
import { optionAsked, optionWord } from '../options/option-table.js';
import type { CsvSource } from './open-csv.js';

/** The first `limit` data rows of `source`; `tell` says once, at the cut, that the input has more. */
export function limitRows(source: CsvSource, limit: number, tell: (line: string) => void): CsvSource {
  const inner = source.batches[Symbol.asyncIterator]();
  let left = limit;
  let more = false;
  const limited: CsvSource = { ...source, limited: { limit, more: () => more } };
  limited.estimatedRecords = () => {
    const count = source.estimatedRecords();
    return count === undefined ? { records: limit, exact: false } : { records: Math.min(count.records, limit), exact: count.exact || count.records >= limit };
  };
  limited.batches = {
    [Symbol.asyncIterator]: () => ({
      next: async (): Promise<IteratorResult<string[][]>> => {
        if (left <= 0) return { done: true, value: undefined };
        const next = await inner.next();
        if (next.done) return next;
        const batch = next.value;
        if (batch.length < left) {
          left -= batch.length;
          return next;
        }
        more = batch.length > left || !(await inner.next()).done;
        const rows = batch.slice(0, left);
        left = 0;
        if (more) {
          tell(
            `${optionAsked('limit', String(limit))}: the output holds the first ${limit} data row${limit === 1 ? '' : 's'} only; the input has more (a partial run: drop ${optionWord('limit')} for the whole file)`,
          );
          source.destroy();
        }
        return { done: false, value: rows };
      },
    }),
  };
  return limited;
}
