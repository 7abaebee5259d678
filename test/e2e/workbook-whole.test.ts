// The .xlsx output keeps the whole workbook (cli-contract "Spreadsheets"): every sheet of the input
// in its order, the other sheets as they are (values, types), hyperlinks as hyperlinks and column
// widths, the enriched sheet with its own. The input was written by LibreOffice from a flat
// OpenDocument file (fixtures/README.md); the output is read back by two other programs: exceljs's
// in-memory reader and, where it is installed, LibreOffice (converted to flat OpenDocument, whose
// sheets, widths and links are compared with LibreOffice's reading of the input itself).
import fs from 'node:fs';
import path from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { WorkbookZip } from '../../src/read/workbook-zip.js';
import { ZipWriter } from '../../src/write/zip-writer.js';
import { lines, REPO_ROOT, runCli } from '../helpers/cli.js';
import { makeTempDir } from '../helpers/files.js';
import { hasSoffice, soffice } from '../helpers/soffice.js';

const BOOK = path.join(REPO_ROOT, 'fixtures', 'input', 'workbook-three-sheets.xlsx');

function copyBook(): { dir: string; file: string } {
  const dir = makeTempDir('lead-enrich-whole-');
  const file = path.join(dir, 'book.xlsx');
  fs.copyFileSync(BOOK, file);
  return { dir, file };
}

async function readBook(file: string): Promise<ExcelJS.Workbook> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  return workbook;
}

interface SheetAsRead {
  name: string;
  widths: string[];
  links: string[];
  texts: string[];
}

/** LibreOffice's reading of a workbook: each sheet's column widths, link targets and cell texts. */
async function readByLibreOffice(file: string, dir: string): Promise<SheetAsRead[]> {
  const out = path.join(dir, `lo-${path.basename(file, '.xlsx')}`);
  await soffice(['--headless', '--convert-to', 'fods', '--outdir', out, file], 120_000);
  const xml = fs.readFileSync(path.join(out, `${path.basename(file, '.xlsx')}.fods`), 'utf8');
  const widthOf = new Map(
    [...xml.matchAll(/<style:style style:name="([^"]+)" style:family="table-column">\s*<style:table-column-properties[^>]*style:column-width="([^"]+)"/g)].map(
      (m) => [m[1]!, m[2]!],
    ),
  );
  return xml
    .split('<table:table table:name="')
    .slice(1)
    .map((part) => {
      const widths: string[] = [];
      for (const m of part.matchAll(/<table:table-column table:style-name="([^"]+)"(?: table:number-columns-repeated="(\d+)")?/g)) {
        for (let i = 0; i < Math.min(Number(m[2] ?? 1), 8); i += 1) widths.push(widthOf.get(m[1]!) ?? '?');
      }
      const texts = [...part.matchAll(/<text:p>(.*?)<\/text:p>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, ''));
      return { name: part.slice(0, part.indexOf('"')), widths, links: [...part.matchAll(/xlink:href="([^"]+)"/g)].map((m) => m[1]!), texts };
    });
}

describe('the workbook output keeps the whole workbook', () => {
  it('--sheet Contacts: all three sheets in their order, the others as they were, hyperlinks and widths kept, Contacts enriched', async () => {
    const { dir, file } = copyBook();
    const result = await runCli(['enrich', file, '--sandbox', '--sheet', 'Contacts', '--fields', 'lead_name']);
    expect(result.code, result.stderr).toBe(0);
    const output = path.join(dir, 'book.enriched.xlsx');
    const book = await readBook(output);
    expect(book.worksheets.map((sheet) => sheet.name)).toEqual(['About', 'Contacts', 'Notes']);
    const [about, contacts, notes] = book.worksheets as [ExcelJS.Worksheet, ExcelJS.Worksheet, ExcelJS.Worksheet];
    // The other sheets: values and types as they were, their links and widths too.
    expect(about.getCell('A1').value).toBe('Exported from HubSpot');
    expect(about.getCell('B1').value).toEqual(new Date(Date.UTC(2026, 10, 20)));
    expect(about.getCell('B3').value).toBe(42);
    expect(about.getCell('A3').value).toMatchObject({ text: 'List 42', hyperlink: 'https://crm.example/lists/42' });
    expect([1, 2].map((c) => about.getColumn(c).width)).toEqual([34.02, 11.34]);
    expect(notes.getCell('A2').value).toBe(7);
    expect(notes.getCell('B2').value).toMatchObject({ text: 'Guide', hyperlink: 'https://docs.example/guide' });
    expect([1, 2].map((c) => notes.getColumn(c).width)).toEqual([11.34, 34.02]);
    // The enriched sheet: its cells with their types, links and widths, then lead_status and the added column.
    expect((contacts.getRow(1).values as unknown[]).slice(1)).toEqual(['Email', 'Website', 'Employees', 'Signed up', 'lead_status', 'lead_name']);
    expect(contacts.getCell('B2').value).toMatchObject({ text: 'Acme site', hyperlink: 'https://acme.example/' });
    expect(contacts.getCell('B3').value).toMatchObject({ text: 'Beta site', hyperlink: 'https://beta.example/' });
    expect(contacts.getCell('C2').value).toBe(250);
    expect(contacts.getCell('D3').value).toEqual(new Date(Date.UTC(1999, 11, 31)));
    expect([1, 2, 3, 4].map((c) => contacts.getColumn(c).width)).toEqual([34.02, 22.68, 11.34, 22.68]);
    for (const row of [2, 3]) {
      expect(['found', 'not_found']).toContain(contacts.getRow(row).getCell(5).value);
      expect(contacts.getRow(row).getCell(6).type).toBe(ExcelJS.ValueType.String);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('LibreOffice reads the same sheets, widths and links in the output as in the input', async (context) => {
    // Skipped only without LibreOffice (soffice): .ci/run installs libreoffice-calc, so CI runs it.
    if (!hasSoffice()) return context.skip('no LibreOffice (soffice) on PATH');
    const { dir, file } = copyBook();
    const result = await runCli(['enrich', file, '--sandbox', '--sheet', 'Contacts', '--fields', 'lead_name']);
    expect(result.code, result.stderr).toBe(0);
    const input = await readByLibreOffice(file, dir);
    const output = await readByLibreOffice(path.join(dir, 'book.enriched.xlsx'), dir);
    expect(output.map((sheet) => sheet.name)).toEqual(['About', 'Contacts', 'Notes']);
    expect(output.map((sheet) => sheet.links)).toEqual(input.map((sheet) => sheet.links));
    expect(output[0]).toEqual(input[0]);
    expect(output[2]).toEqual(input[2]);
    // The enriched sheet: the input's four column widths first, its cells, then the two added columns.
    expect(output[1]!.widths.slice(0, 4)).toEqual(input[1]!.widths.slice(0, 4));
    expect(output[1]!.texts.slice(0, 4)).toEqual(['Email', 'Website', 'Employees', 'Signed up']);
    expect(output[1]!.texts).toEqual(expect.arrayContaining(['lead_status', 'lead_name', 'ann@example.com', 'Acme site', '250', '2026-11-24']));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a first sheet without a key column: exit 1, one line naming --sheet and the sheet that has one, nothing written', async () => {
    const { dir, file } = copyBook();
    const result = await runCli(['enrich', file, '--sandbox']);
    expect(result.code).toBe(1);
    expect(lines(result.stderr)).toEqual([
      "lead-enrich: No lookup column found in the header (Exported from HubSpot, 2026-11-20) of sheet 'About': pass --sheet NAME with a sheet that has one: 'Contacts' (code: config)",
    ]);
    expect(fs.readdirSync(dir)).toEqual(['book.xlsx']);
    // No sheet has a profile URL column: the line says so, and what to give instead.
    const none = await runCli(['enrich', file, '--sandbox', '--by', 'url']);
    expect(none.code).toBe(1);
    expect(lines(none.stderr)).toEqual([
      `lead-enrich: No url column found in the header (Exported from HubSpot, 2026-11-20) of sheet 'About', nor in any other sheet of ${file}: pass --column NAME (code: config)`,
    ]);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('a macro-enabled workbook with a calculation chain: the output is a plain .xlsx, its macros and chain left out, the sheets kept', async () => {
    const { dir, file } = copyBook();
    // The fixture as Excel saves an .xlsm: its content type says macros, a vbaProject.bin and a calcChain.xml beside the sheets.
    const xlsm = path.join(dir, 'book.xlsm');
    const source = await WorkbookZip.open(file);
    const target = fs.createWriteStream(xlsm);
    const zip = new ZipWriter(target);
    for (const part of source.paths()) {
      let text = Buffer.concat(await Array.fromAsync(source.stream(part)!)).toString('utf8');
      if (part === '[Content_Types].xml')
        text = text
          .replace('sheet.main+xml', 'sheet.macroEnabled.main+xml')
          .replace(
            '</Types>',
            '<Override PartName="/xl/vbaProject.bin" ContentType="application/vnd.ms-office.vbaProject"/><Override PartName="/xl/calcChain.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.calcChain+xml"/></Types>',
          );
      if (part === 'xl/_rels/workbook.xml.rels')
        text = text.replace(
          '</Relationships>',
          '<Relationship Id="rId90" Type="http://schemas.microsoft.com/office/2006/relationships/vbaProject" Target="vbaProject.bin"/><Relationship Id="rId91" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/calcChain" Target="calcChain.xml"/></Relationships>',
        );
      await zip.add(part, text);
    }
    await zip.add('xl/vbaProject.bin', Buffer.alloc(16));
    await zip.add('xl/calcChain.xml', '<calcChain xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><c r="A1" i="2"/></calcChain>');
    zip.finish();
    await new Promise((resolve) => target.end(resolve));
    const output = path.join(dir, 'out.xlsx');
    const result = await runCli(['enrich', xlsm, '--sandbox', '--sheet', 'Contacts', '-o', output]);
    expect(result.code, result.stderr).toBe(0);
    const written = await WorkbookZip.open(output);
    expect(written.paths().filter((part) => /vbaProject|calcChain/.test(part))).toEqual([]);
    const types = Buffer.concat(await Array.fromAsync(written.stream('[Content_Types].xml')!)).toString('utf8');
    expect(types).toContain('spreadsheetml.sheet.main+xml');
    expect(types).not.toMatch(/macroEnabled|vbaProject|calcChain/);
    expect((await readBook(output)).worksheets.map((sheet) => sheet.name)).toEqual(['About', 'Contacts', 'Notes']);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
