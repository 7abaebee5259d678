// Workbook outputs read back by programs other than ours: exceljs's in-memory reader, and
// LibreOffice (when installed: hasSoffice) converting a sheet to CSV; and a sheet's raw XML as the
// zip holds it, inflated by Node's zlib from the zip's own directory, for what no reader shows as
// it is stored (a date-styled number out of the date range, which exceljs makes an Invalid Date).
import fs from 'node:fs';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import ExcelJS from 'exceljs';
import { parse } from 'csv-parse/sync';
import { soffice } from './soffice.js';

export async function readByExceljs(file: string): Promise<ExcelJS.Workbook> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  return workbook;
}

/**
 * LibreOffice's reading of the first sheet, converted to CSV: each cell's value, not as shown
 * (the filter's ninth option: a number it cannot show as a date is its digits, not `#FMT`).
 */
export async function readByLibreOffice(file: string, dir: string): Promise<string[][]> {
  const out = path.join(dir, `lo-${path.basename(file, '.xlsx')}`);
  await soffice(['--headless', '--convert-to', 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,false', '--outdir', out, file], 120_000);
  return parse(fs.readFileSync(path.join(out, `${path.basename(file, '.xlsx')}.csv`), 'utf8'), { relax_column_count: true }) as string[][];
}

/** The names of a zip's parts and one part's bytes, from its central directory (no Zip64 needed). */
export function zipPart(file: string, name: string): Buffer | undefined {
  const zip = fs.readFileSync(file);
  const end = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  let at = zip.readUInt32LE(end + 16);
  while (zip.readUInt32LE(at) === 0x02014b50) {
    const nameLength = zip.readUInt16LE(at + 28);
    const entry = zip.subarray(at + 46, at + 46 + nameLength).toString('utf8');
    if (entry === name) {
      const local = zip.readUInt32LE(at + 42);
      const start = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
      const data = zip.subarray(start, start + zip.readUInt32LE(at + 20));
      return zip.readUInt16LE(at + 10) === 8 ? inflateRawSync(data) : data;
    }
    at += 46 + nameLength + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
  }
  return undefined;
}
