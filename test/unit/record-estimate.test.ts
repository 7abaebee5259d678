// The reader's estimate of how many rows the input holds (src/read/record-estimate.ts), the
// progress line's total: close from the first batch on a file larger than one read chunk, whatever
// its encoding, exact once it is read to the end; no estimate at all for a gzipped file or a
// stream until then (never a false total).
import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { openCsv, type CsvSource } from '../../src/read/index.js';
import { REPO_ROOT, tempDir } from '../helpers/cli.js';
import { unevenContacts } from '../helpers/uneven-rows.js';

/** Reads every batch; the estimate after the first one and at the end. */
async function estimates(
  source: CsvSource,
): Promise<{ first: number | undefined; last: { records: number; exact: boolean } | undefined; rows: number; seen: Array<number | undefined> }> {
  let rows = 0;
  let first: number | undefined;
  const seen: Array<number | undefined> = [];
  for await (const batch of source.batches) {
    rows += batch.length;
    const count = source.estimatedRecords();
    seen.push(count?.records);
    if (seen.length === 1) first = count?.records;
  }
  return { first, last: source.estimatedRecords(), rows, seen };
}

const within = (value: number | undefined, target: number, share: number) => value !== undefined && Math.abs(value - target) <= target * share;

describe("the reader's estimate of the rows", () => {
  const dir = tempDir();

  it('a UTF-8 file larger than a read chunk: within 10 % from the first batch, never below the rows read, exact at the end', async () => {
    const file = path.join(dir, 'contacts.csv');
    fs.writeFileSync(file, unevenContacts(2500));
    expect(fs.statSync(file).size).toBeGreaterThan(400_000);
    const result = await estimates(await openCsv(file));
    expect(result.rows).toBe(2500);
    expect(within(result.first, 2500, 0.1), `first estimate ${result.first}`).toBe(true);
    for (const n of result.seen) expect(within(n, 2500, 0.1), `estimate ${n}`).toBe(true);
    expect(result.last).toEqual({ records: 2500, exact: true });
  });

  it("Excel's Unicode text (UTF-16LE, tabs, CRLF): measured in bytes on disk, within 10 %", async () => {
    const file = path.join(dir, 'export.txt');
    const text = unevenContacts(3000, 11).replaceAll(',', '\t').replaceAll('"', '').replaceAll('\n', '\r\n');
    fs.writeFileSync(file, Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    const result = await estimates(await openCsv(file));
    expect(result.rows).toBe(3000);
    for (const n of result.seen) expect(within(n, 3000, 0.1), `estimate ${n}`).toBe(true);
    expect(result.last).toEqual({ records: 3000, exact: true });
  });

  it('a gzipped file and a stream: no estimate until the end (no false total), then the exact count', async () => {
    const gz = path.join(dir, 'contacts.csv.gz');
    fs.writeFileSync(gz, gzipSync(unevenContacts(2500)));
    const zipped = await estimates(await openCsv(gz));
    expect(zipped.seen.slice(0, -1).every((n) => n === undefined)).toBe(true);
    expect(zipped.last).toEqual({ records: 2500, exact: true });
    const streamed = await estimates(await openCsv(Readable.from([unevenContacts(1200)])));
    expect(streamed.first).toBeUndefined();
    expect(streamed.last).toEqual({ records: 1200, exact: true });
  });

  it('without a header every record is a row', async () => {
    const file = path.join(dir, 'no-header.csv');
    fs.writeFileSync(file, unevenContacts(600).split('\n').slice(1).join('\n'));
    const result = await estimates(await openCsv(file, { header: false }));
    expect(result.last).toEqual({ records: 600, exact: true });
  });

  it("a Salesforce report: its footer is no row, so the exact count is the rows written (the progress's 100 %)", async () => {
    const report = path.join(REPO_ROOT, 'fixtures', 'input', 'salesforce-report-windows1252.csv');
    const result = await estimates(await openCsv(report));
    expect(result.rows).toBe(320);
    expect(result.last).toEqual({ records: 320, exact: true });
  });
});
