// exceljs, loaded only by runs that read or write a workbook: it and its zip and XML libraries
// cost start-up time that a CSV run should not pay (issue 6, start-up).
import { createRequire } from 'node:module';
import type * as ExcelJS from 'exceljs';

let loaded: typeof ExcelJS | undefined;

export function excel(): typeof ExcelJS {
  loaded ??= createRequire(import.meta.url)('exceljs') as typeof ExcelJS;
  return loaded;
}
