// Paid work is never thrown away on a workbook: a cell that cannot be read as what its
// style says is kept as it is (a phone number in a date-styled cell, which Excel shows as #####;
// an error cell), on the second row and deep in the file; what could stop the output is found
// before the first lookup (a part the writer cannot copy is refused in one line, 66,000 parts are
// written whole); the output failing at the end anyway leaves no temporary file, says in one line
// where the answers are, and the same command writes them without paying again; the input saved
// again while the run works is said in one line, the outputs made from what was read; temporary
// files of dead runs are removed by the next run. Workbooks are made here (test/helpers/zip.ts),
// outputs read back by exceljs and LibreOffice.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { lines, runCli, spawnCli } from '../helpers/cli.js';
import { readCsvObjects } from '../helpers/files.js';
import { hangBound, runSync } from '../helpers/processes.js';
import { hasSoffice } from '../helpers/soffice.js';
import { readByExceljs, readByLibreOffice, zipPart } from '../helpers/workbook-read.js';
import { bookOf, textCell } from '../helpers/zip.js';
import { envFor, expectNoCrash, lookupsSeen, sandbox, until } from './reliability/support.js';
import { leftIn, unstamped, workbookRuns } from './workbook-runs.js';

const runs = workbookRuns('lead-enrich-paid-');
const { tempDir, lookups } = runs;

const PHONE = 4155550123;

/** `rows` contacts; on the rows `odd` names, a phone number and an error (#N/A) in date-styled cells (style 1: format 14, a date). */
function phoneBook(rows: number, odd: number[]): Buffer {
  let xml = `<row r="1">${textCell('A1', 'email')}${textCell('B1', 'phone')}${textCell('C1', 'called')}</row>`;
  for (let r = 2; r <= rows + 1; r += 1) {
    const strange = odd.includes(r);
    const phone = `<c r="B${r}" s="1"><v>${strange ? PHONE : 45000 + (r % 365)}</v></c>`;
    const called = strange ? `<c r="C${r}" s="1" t="e"><v>#N/A</v></c>` : `<c r="C${r}" s="1"><v>46000</v></c>`;
    xml += `<row r="${r}">${textCell(`A${r}`, `p${r}@acme.example`)}${phone}${called}</row>`;
  }
  return bookOf(`<sheetData>${xml}</sheetData>`, { styles: [14] });
}

describe('a cell that cannot be read as what its style says is kept as it is', () => {
  it('a phone number and an error in date-styled cells, on row 2 and on row 2,500 of 3,000: exit 0, every row out, the number and the error kept', async () => {
    const dir = tempDir();
    const input = path.join(dir, 'phones.xlsx');
    fs.writeFileSync(input, phoneBook(3000, [2, 2500]));
    const result = await runCli(['enrich', input, '--fields', 'lead_name', '-q'], { env: envFor(runs.sandbox(), dir), timeoutMs: 120_000 });
    expectNoCrash(result);
    expect(result.code, result.stderr).toBe(0);
    const output = path.join(dir, 'phones.enriched.xlsx');
    const sheet = (await readByExceljs(output)).worksheets[0]!;
    expect(sheet.rowCount).toBe(3001);
    for (let r = 2; r <= 3001; r += 1) expect(['found', 'not_found'], `row ${r}`).toContain(sheet.getCell(`D${r}`).value);
    // The error cells stay errors; the other date-styled cells are dates.
    for (const r of [2, 2500]) expect(sheet.getCell(`C${r}`).value).toEqual({ error: '#N/A' });
    expect(sheet.getCell('B3').value).toEqual(new Date(Date.UTC(2023, 2, 18)));
    // The number as the zip stores it, in its date-styled cell (exceljs makes it an Invalid Date).
    const xml = zipPart(output, 'xl/worksheets/sheet1.xml')!.toString('utf8');
    for (const r of [2, 2500]) expect(xml).toMatch(new RegExp(`<c r="B${r}" s="\\d+"><v>${PHONE}</v></c>`));
    // A CSV of the same input holds the number's digits.
    const csv = await runCli(['enrich', input, '--fields', 'lead_name', '-q', '-o', path.join(dir, 'phones.csv')], { env: envFor(runs.sandbox(), dir) });
    expect(csv.code, csv.stderr).toBe(0);
    const records = readCsvObjects(path.join(dir, 'phones.csv'));
    expect(records).toHaveLength(3000);
    expect([records[0], records[2498]].map((r) => [r!.email, r!.phone, r!.called])).toEqual([
      ['p2@acme.example', String(PHONE), '#N/A'],
      ['p2500@acme.example', String(PHONE), '#N/A'],
    ]);
  });

  it('LibreOffice reads the kept number and the error back', async (context) => {
    // Skipped only without LibreOffice (soffice): .ci/run installs libreoffice-calc, so CI runs it.
    if (!hasSoffice()) return context.skip('no LibreOffice (soffice) on PATH (Debian: libreoffice-calc)');
    const dir = tempDir();
    const input = path.join(dir, 'phones.xlsx');
    fs.writeFileSync(input, phoneBook(30, [2, 25]));
    expect((await runCli(['enrich', input, '--fields', 'lead_name', '-q'], { env: envFor(runs.sandbox(), dir) })).code).toBe(0);
    const rows = await readByLibreOffice(path.join(dir, 'phones.enriched.xlsx'), dir);
    expect(rows[0]).toEqual(['email', 'phone', 'called', 'lead_status', 'lead_name']);
    for (const r of [2, 25]) expect(rows[r - 1]!.slice(0, 3)).toEqual([`p${r}@acme.example`, String(PHONE), '#N/A']);
  });
});

describe('what could stop the workbook is found before the first lookup', () => {
  it('a part compressed with a method the writer cannot copy: exit 1 in one line naming it, no lookup, nothing left behind', async () => {
    const dir = tempDir();
    const input = path.join(dir, 'packed.xlsx');
    const rows = `<row r="1">${textCell('A1', 'email')}</row><row r="2">${textCell('A2', 'ann@acme.example')}</row>`;
    // Method 12 is BZIP2: Excel writes deflate only.
    fs.writeFileSync(input, bookOf(`<sheetData>${rows}</sheetData>`, { extra: [['xl/media/image1.bin', Buffer.alloc(64, 1), 12]] }));
    const before = lookups();
    const result = await runCli(['enrich', input], { env: envFor(runs.sandbox(), dir) });
    expectNoCrash(result);
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      `lead-enrich: Cannot write the workbook of ${input}: its part xl/media/image1.bin is compressed with method 12 (BZIP2), which lead-enrich cannot copy (only deflate, as Excel writes); open it in Excel or LibreOffice and save it again, or write CSV instead (-o FILE.csv) (code: unwritable_output)`,
    ]);
    expect(lookups()).toBe(before);
    expect(leftIn(dir)).toEqual(['packed.xlsx', 'store.sqlite']);
    // As CSV, the same workbook is enriched.
    const csv = await runCli(['enrich', input, '-q', '-o', path.join(dir, 'packed.csv')], { env: envFor(runs.sandbox(), dir) });
    expect(csv.code, csv.stderr).toBe(0);
  });

  it('66,000 parts: the workbook is written whole (Zip64), every part in it, nothing left behind', { timeout: hangBound(180_000) }, async () => {
    const dir = tempDir();
    const input = path.join(dir, 'parts.xlsx');
    const rows = `<row r="1">${textCell('A1', 'email')}</row><row r="2">${textCell('A2', 'ann@acme.example')}</row>`;
    // Stored, not deflated (method 0, as some writers store images): copied as stored too.
    const extra = Array.from({ length: 66_000 }, (_, i) => [`customXml/item${i}.xml`, `<item n="${i}"/>`, 0] as const);
    fs.writeFileSync(input, bookOf(`<sheetData>${rows}</sheetData>`, { extra }));
    const result = await runCli(['enrich', input, '-q', '--fields', 'lead_name'], { env: envFor(runs.sandbox(), dir), timeoutMs: 120_000 });
    expectNoCrash(result);
    expect(result.code, result.stderr).toBe(0);
    const output = path.join(dir, 'parts.enriched.xlsx');
    expect(leftIn(dir)).toEqual(['parts.enriched.errors.csv', 'parts.enriched.xlsx', 'parts.xlsx', 'store.sqlite']);
    expect(zipPart(output, 'xl/worksheets/sheet1.xml')?.toString()).toMatch(
      /<row r="2"><c r="A2" t="inlineStr"><is><t>ann@acme\.example<\/t><\/is><\/c><c r="B2" t="inlineStr"><is><t>(found|not_found)<\/t>/,
    );
    // Every part is there: yauzl finds their count in the Zip64 end record (the classic one's is -1).
    const zip = await yauzl.openPromise(output);
    expect(zip.entryCount).toBe(66_000 + 6);
    zip.close();
    expect(zipPart(output, 'customXml/item65999.xml')?.toString()).toBe('<item n="65999"/>');
  });
});

/** `count` contacts, from `first` on (a workbook as a CRM exports one). */
function contactsBook(count: number, first = 1): Buffer {
  let xml = `<row r="1">${textCell('A1', 'email')}</row>`;
  for (let i = 0; i < count; i += 1) xml += `<row r="${i + 2}">${textCell(`A${i + 2}`, `c${first + i}@acme.example`)}</row>`;
  return bookOf(`<sheetData>${xml}</sheetData>`);
}

describe('while the run works', () => {
  it('the output cannot be completed at the end (a folder made at its path meanwhile): exit 1 in one line saying where the answers are, no temporary file; -o FILE.csv then writes every answer without a lookup', async () => {
    const slow = await sandbox({ rpm: 600, credits: 1_000_000 });
    const dir = tempDir();
    const input = path.join(dir, 'contacts.xlsx');
    fs.writeFileSync(input, contactsBook(20));
    const child = spawnCli(['enrich', input, '-q', '--fields', 'lead_name'], { env: envFor(slow, dir) });
    child.stdin!.end();
    const paid = () => lookupsSeen(slow);
    await until(() => paid() > 0, 'the first lookup');
    const output = path.join(dir, 'contacts.enriched.xlsx');
    fs.mkdirSync(output);
    fs.writeFileSync(path.join(output, 'notes.txt'), 'mine\n');
    const result = await child.result;
    expectNoCrash(result);
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      `lead-enrich: Cannot write ${output}: it is a folder; the answers received are kept in the store: run the same command again to write them without paying again (code: unwritable_output)`,
    ]);
    expect(leftIn(dir)).toEqual(['contacts.enriched.xlsx', 'contacts.xlsx', 'store.sqlite']);
    expect(leftIn(output)).toEqual(['notes.txt']);
    expect(paid()).toBe(20);
    const again = await runCli(['enrich', input, '-q', '--fields', 'lead_name', '-o', path.join(dir, 'contacts.csv')], { env: envFor(slow, dir) });
    expect(again.code, again.stderr).toBe(0);
    expect(paid()).toBe(20);
    const rows = readCsvObjects(path.join(dir, 'contacts.csv'));
    expect(rows).toHaveLength(20);
    for (const row of rows) expect(['found', 'not_found']).toContain(row.lead_status);
  });

  it('the input saved again meanwhile (a new file renamed over it, as Excel saves): said in one line, the outputs made from the workbook as it was read', async () => {
    const slow = await sandbox({ rpm: 600, credits: 1_000_000 });
    const dir = tempDir();
    const input = path.join(dir, 'contacts.xlsx');
    fs.writeFileSync(input, contactsBook(15));
    const child = spawnCli(['enrich', input, '-q', '--fields', 'lead_name'], { env: envFor(slow, dir) });
    child.stdin!.end();
    await until(() => lookupsSeen(slow) > 0, 'the first lookup');
    fs.writeFileSync(path.join(dir, 'saving.tmp'), contactsBook(3, 100));
    fs.renameSync(path.join(dir, 'saving.tmp'), input);
    const result = await child.result;
    expectNoCrash(result);
    expect(result.code, result.stderr).toBe(0);
    expect(lines(result.stderr).map(unstamped)).toEqual([
      `lead-enrich: ${input} was saved again (or moved) while the run worked: the outputs hold the workbook as the run read it; run the same command again for the new one (stored answers are not paid again)`,
    ]);
    const sheet = (await readByExceljs(path.join(dir, 'contacts.enriched.xlsx'))).worksheets[0]!;
    expect(sheet.getColumn(1).values.slice(2)).toEqual(Array.from({ length: 15 }, (_, i) => `c${i + 1}@acme.example`));
    expect(leftIn(dir)).toEqual(['contacts.enriched.errors.csv', 'contacts.enriched.xlsx', 'contacts.xlsx', 'store.sqlite']);
  });

  it('temporary files of a run that died are removed by the next run on the same output, even one that stops before it writes; a live run keeps its own', async () => {
    const dir = tempDir();
    const input = path.join(dir, 'contacts.xlsx');
    fs.writeFileSync(input, contactsBook(2));
    // A process that has ended: its pid names a dead run's temporary file.
    const dead = runSync(process.execPath, ['-e', '0']).pid!;
    const partial = (pid: number) => `.contacts.enriched.xlsx.${pid}.0123456789abcdef.partial`;
    fs.writeFileSync(path.join(dir, partial(dead)), 'PK');
    fs.writeFileSync(path.join(dir, partial(process.pid)), 'PK');
    // Refused at the account read (a token the API no longer takes), after the output's lock was taken.
    const revoked = await sandbox();
    revoked.revokeToken();
    const result = await runCli(['enrich', input], { env: envFor(revoked, dir) });
    expectNoCrash(result);
    expect(result.code).toBe(1);
    expect(leftIn(dir)).toEqual([partial(process.pid), 'contacts.xlsx', 'store.sqlite']);
  });

  it('--limit --no-header on a sheet of 1.5 MB (more rows than the reader reads at once): the workbook output made from the input as it was read', async () => {
    const dir = tempDir();
    const input = path.join(dir, 'contacts.xlsx');
    // No header: the key column is found from the first batch of rows, which --limit cuts (the
    // reader stops before the output opens); a sheet over a MiB is read in a stream the cut destroys.
    let xml = '';
    for (let r = 1; r <= 1500; r += 1) xml += `<row r="${r}">${textCell(`A${r}`, `c${r}@acme.example`)}${textCell(`B${r}`, 'n'.repeat(1000))}</row>`;
    fs.writeFileSync(input, bookOf(`<sheetData>${xml}</sheetData>`));
    const result = await runCli(['enrich', input, '--no-header', '--limit', '5', '--fields', 'lead_name'], { env: envFor(runs.sandbox(), dir) });
    expectNoCrash(result);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/saved again|written to|Cannot/);
    const sheet = (await readByExceljs(path.join(dir, 'contacts.enriched.xlsx'))).worksheets[0]!;
    expect(sheet.getColumn(1).values.slice(1)).toEqual(Array.from({ length: 5 }, (_, i) => `c${i + 1}@acme.example`));
    expect(sheet.getColumn(3).values.slice(1)).toEqual(Array.from({ length: 5 }, () => expect.stringMatching(/^(found|not_found)$/)));
  });

  it('an output path that is a folder: refused in one line before the first lookup', async () => {
    const dir = tempDir();
    const input = path.join(dir, 'contacts.xlsx');
    fs.writeFileSync(input, contactsBook(2));
    fs.mkdirSync(path.join(dir, 'out.xlsx'));
    const before = lookups();
    const result = await runCli(['enrich', input, '-o', path.join(dir, 'out.xlsx')], { env: envFor(runs.sandbox(), dir) });
    expectNoCrash(result);
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      `lead-enrich: Cannot write ${path.join(dir, 'out.xlsx')}: it is a folder; choose another path with -o / --errors (code: unwritable_output)`,
    ]);
    expect(lookups()).toBe(before);
    // Refused before the store is opened: nothing made at all.
    expect(leftIn(dir)).toEqual(['contacts.xlsx', 'out.xlsx']);
  });
});
