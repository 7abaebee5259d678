// The small parts of a workbook (ECMA-376 Part 1): the relationships (§9.3, which part is the
// styles, the shared strings, each sheet), the sheet list and date system (xl/workbook.xml,
// §18.2), and each cell style's number format (xl/styles.xml, §18.8). Each part is read whole (a few
// KiB) and decoded once, so no character is cut between two chunks; tag names are compared
// without a namespace prefix, since some writers spell them <x:sheet>.
import type { Readable } from 'node:stream';
import { SaxesParser, type SaxesTagPlain } from 'saxes';

export interface Relationship {
  id: string;
  type: string;
  target: string;
}

export interface SheetEntry {
  name: string;
  rId: string | undefined;
}

export const RELATIONSHIP = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/';

/** The built-in number formats a style may name by id alone (§18.8.30). */
const BUILT_IN_FORMATS: Record<number, string> = {
  1: '0',
  2: '0.00',
  3: '#,##0',
  4: '#,##0.00',
  9: '0%',
  10: '0.00%',
  11: '0.00E+00',
  12: '# ?/?',
  13: '# ??/??',
  14: 'mm-dd-yy',
  15: 'd-mmm-yy',
  16: 'd-mmm',
  17: 'mmm-yy',
  18: 'h:mm AM/PM',
  19: 'h:mm:ss AM/PM',
  20: 'h:mm',
  21: 'h:mm:ss',
  22: 'm/d/yy h:mm',
  37: '#,##0 ;(#,##0)',
  38: '#,##0 ;[Red](#,##0)',
  39: '#,##0.00;(#,##0.00)',
  40: '#,##0.00;[Red](#,##0.00)',
  45: 'mm:ss',
  46: '[h]:mm:ss',
  47: 'mmss.0',
  48: '##0.0E+0',
  49: '@',
};

const localName = (name: string): string => name.slice(name.indexOf(':') + 1);

export async function partText(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

/** Calls `open` for each element of the XML, its name without prefix. */
function eachTag(xml: string, open: (name: string, attributes: Record<string, string>) => void, close?: (name: string) => void): void {
  const parser = new SaxesParser();
  parser.on('opentag', (tag: SaxesTagPlain) => open(localName(tag.name), tag.attributes as Record<string, string>));
  if (close) parser.on('closetag', (tag) => close(localName(tag.name)));
  parser.write(xml).close();
}

/** An attribute by its local name (`r:id` as `id` with the relationships namespace's prefix, whatever it is). */
function attribute(attributes: Record<string, string>, local: string): string | undefined {
  for (const [key, value] of Object.entries(attributes)) if (key.includes(':') && localName(key) === local && !key.startsWith('xmlns')) return value;
  return undefined;
}

export function parseRelationships(xml: string): Relationship[] {
  const rels: Relationship[] = [];
  eachTag(xml, (name, a) => {
    if (name === 'Relationship' && a.Id !== undefined && a.Target !== undefined) rels.push({ id: a.Id, type: a.Type ?? '', target: a.Target });
  });
  return rels;
}

export function parseWorkbook(xml: string): { sheets: SheetEntry[]; date1904: boolean } {
  const sheets: SheetEntry[] = [];
  let date1904 = false;
  eachTag(xml, (name, a) => {
    if (name === 'sheet' && a.name !== undefined) sheets.push({ name: a.name, rId: attribute(a, 'id') });
    else if (name === 'workbookPr') date1904 = a.date1904 === '1' || a.date1904 === 'true';
  });
  return { sheets, date1904 };
}

/** Each cell style's (cellXfs index's) number format code; undefined for General. */
export function parseStyles(xml: string): (style: number) => string | undefined {
  const codes = new Map<number, string>();
  const formatIds: number[] = [];
  let inCellXfs = false;
  eachTag(
    xml,
    (name, a) => {
      if (name === 'numFmt' && a.numFmtId !== undefined && a.formatCode !== undefined) codes.set(Number(a.numFmtId), a.formatCode);
      else if (name === 'cellXfs') inCellXfs = true;
      else if (name === 'xf' && inCellXfs) formatIds.push(Number(a.numFmtId ?? 0));
    },
    (name) => {
      if (name === 'cellXfs') inCellXfs = false;
    },
  );
  return (style) => {
    const id = formatIds[style];
    if (id === undefined || id === 0) return undefined;
    return codes.get(id) ?? BUILT_IN_FORMATS[id];
  };
}

/** The zip path of the workbook's part of a relationship type (`sharedStrings`, `styles`), if it names one. */
export function partOfType(rels: readonly Relationship[], type: string, resolve: (target: string) => string): string | undefined {
  const rel = rels.find((r) => r.type === RELATIONSHIP + type);
  return rel ? resolve(rel.target) : undefined;
}
