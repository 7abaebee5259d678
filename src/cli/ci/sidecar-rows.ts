// The first rows of each code, read back from the run's sidecar (docs/cli-contract.md, "The error
// sidecar": `row`, the input's cells, then `error_code` and `error_message`): an annotation names
// a code's first rows, and points at the first one's line. The summary has the counts; the rows are
// in the sidecar alone, and it is read only as far as the rows asked for.
import fs from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { createGunzip } from 'node:zlib';
import { parse } from 'csv-parse';

const GZIP = [0x1f, 0x8b];

/** Whether the sidecar is gzipped (its first bytes), and its delimiter: the character its header has after `row`, its first cell. */
async function layoutOf(file: string): Promise<{ gzip: boolean; delimiter: string }> {
  const magic = Buffer.alloc(GZIP.length);
  const fd = fs.openSync(file, 'r');
  try {
    fs.readSync(fd, magic, 0, magic.length, 0);
  } finally {
    fs.closeSync(fd);
  }
  const gzip = GZIP.every((byte, i) => magic[i] === byte);
  const head = gzip ? fs.createReadStream(file).pipe(createGunzip()) : fs.createReadStream(file, { end: 63 });
  try {
    for await (const chunk of head as AsyncIterable<Buffer>) {
      const text = chunk.toString('latin1').replace(/^\xef\xbb\xbf/, '');
      return { gzip, delimiter: text.startsWith('row') && text.length > 3 ? text[3]! : ',' };
    }
    return { gzip, delimiter: ',' };
  } finally {
    head.destroy();
  }
}

/**
 * For each code of `counts` (code → rows the summary counts), its first `per` row numbers in the
 * sidecar `file`, in the sidecar's order (the input's).
 */
export async function firstRowsByCode(file: string, counts: ReadonlyMap<string, number>, per: number): Promise<Map<string, number[]>> {
  const rows = new Map<string, number[]>([...counts.keys()].map((code) => [code, []]));
  const complete = () => [...rows].every(([code, list]) => list.length >= Math.min(per, counts.get(code) ?? 0));
  // A sidecar that is no regular file (a named pipe) cannot be read again.
  if (complete() || fs.statSync(file, { throwIfNoEntry: false })?.isFile() !== true) return rows;
  const { gzip, delimiter } = await layoutOf(file);
  const input = fs.createReadStream(file);
  const gunzip = gzip ? createGunzip() : undefined;
  const parser = parse({ delimiter, bom: true, relax_column_count: true, relax_quotes: true, skip_empty_lines: true });
  const done = pipeline(gunzip ? [input, gunzip, parser] : [input, parser]).catch(() => {});
  let codeAt = -1;
  try {
    for await (const record of parser as AsyncIterable<string[]>) {
      if (codeAt < 0) {
        codeAt = record.lastIndexOf('error_code') >= 0 ? record.lastIndexOf('error_code') : record.length - 2;
        continue;
      }
      const list = rows.get(record[codeAt] ?? '');
      const row = Number(record[0]);
      if (list && list.length < per && Number.isInteger(row)) list.push(row);
      if (complete()) break;
    }
  } finally {
    input.destroy();
    parser.destroy();
    await done;
  }
  return rows;
}
