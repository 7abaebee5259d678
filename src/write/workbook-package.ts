// What a workbook output is built around: the input workbook's own package (an .xlsx input: every
// part but the enriched sheet copied as it is, so the other sheets keep their values, types,
// shared strings, styles, hyperlinks and widths), or a fresh one-sheet package (a CSV input).
// The enriched sheet's XML keeps the input sheet's own elements around its rows: column widths
// and the like before them, hyperlinks, merged cells and the rest after them.
import { StringDecoder } from 'node:string_decoder';
import type { SheetOrigin } from '../read/index.js';
import { parseRelationships, parseWorkbook, partOfType, partText, RELATIONSHIP } from '../read/workbook-parts.js';
import { WorkbookZip, workbookPartPath } from '../read/workbook-zip.js';
import { xmlAttribute } from './sheet-xml.js';
import { FRESH_STYLES } from './workbook-styles.js';

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const PACKAGE_RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml';

export interface WorkbookPackage {
  /** The enriched sheet's part. */
  sheetPart: string;
  /** Its XML before <sheetData> and after it, and the namespace prefix its elements use. */
  head: string;
  tail: string;
  prefix: string;
  styles: string;
  stylesPart: string;
  date1904: boolean;
  /** Parts written as given here (content types, relationships). */
  fixed: Array<[string, string]>;
  /** Parts copied from the input as they are. */
  copies: string[];
  zip: WorkbookZip | undefined;
}

/** A one-sheet workbook's package, for a CSV input. */
export function freshPackage(sheetName: string): WorkbookPackage {
  const overrides = [['/xl/workbook.xml', 'sheet.main+xml'], ['/xl/worksheets/sheet1.xml', 'worksheet+xml'], ['/xl/styles.xml', 'styles+xml']]
    .map(([part, type]) => `<Override PartName="${part}" ContentType="${CONTENT_TYPE}.${type}"/>`)
    .join('');
  const types = `${XML_DECLARATION}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>${overrides}</Types>`;
  const rels = `${XML_DECLARATION}<Relationships xmlns="${PACKAGE_RELS}"><Relationship Id="rId1" Type="${RELATIONSHIP}officeDocument" Target="xl/workbook.xml"/></Relationships>`;
  const book = `${XML_DECLARATION}<workbook xmlns="${MAIN}" xmlns:r="${RELATIONSHIP.slice(0, -1)}"><sheets><sheet name="${xmlAttribute(sheetName)}" sheetId="1" r:id="rId1"/></sheets></workbook>`;
  const bookRels = `${XML_DECLARATION}<Relationships xmlns="${PACKAGE_RELS}"><Relationship Id="rId1" Type="${RELATIONSHIP}worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${RELATIONSHIP}styles" Target="styles.xml"/></Relationships>`;
  return {
    sheetPart: 'xl/worksheets/sheet1.xml',
    head: `${XML_DECLARATION}<worksheet xmlns="${MAIN}" xmlns:r="${RELATIONSHIP.slice(0, -1)}">`,
    tail: '</worksheet>',
    prefix: '',
    styles: FRESH_STYLES,
    stylesPart: 'xl/styles.xml',
    date1904: false,
    fixed: [['[Content_Types].xml', types], ['_rels/.rels', rels], ['xl/workbook.xml', book], ['xl/_rels/workbook.xml.rels', bookRels]],
    copies: [],
    zip: undefined,
  };
}

/** The input workbook's package, the enriched sheet's part opened to take its head and tail. */
export async function inputPackage(origin: SheetOrigin): Promise<WorkbookPackage> {
  const zip = await WorkbookZip.open(origin.file);
  const relsPath = 'xl/_rels/workbook.xml.rels';
  let bookRels = await partText(zip.stream(relsPath)!);
  const rels = parseRelationships(bookRels);
  const { date1904 } = parseWorkbook(await partText(zip.stream('xl/workbook.xml')!));
  let types = await partText(zip.stream('[Content_Types].xml')!);
  const ownStyles = partOfType(rels, 'styles', workbookPartPath);
  const stylesPart = ownStyles ?? 'xl/styles.xml';
  const styles = ownStyles && zip.has(ownStyles) ? await partText(zip.stream(ownStyles)!) : FRESH_STYLES;
  if (!ownStyles) {
    bookRels = bookRels.replace(/<\/(\w+:)?Relationships>/, `<$1Relationship Id="rIdLeadEnrichStyles" Type="${RELATIONSHIP}styles" Target="styles.xml"/>$&`);
    types = types.replace(/<\/(\w+:)?Types>/, `<$1Override PartName="/xl/styles.xml" ContentType="${CONTENT_TYPE}.styles+xml"/>$&`);
  }
  const edited = { types, bookRels };
  // The calculation chain lists the formula cells of every sheet; the enriched sheet's formulas
  // become their values, so the chain is dropped (Excel rebuilds it) rather than left wrong.
  const calcChain = withoutPart(edited, 'calcChain');
  // The output is an .xlsx: a macro-enabled or template workbook (.xlsm, .xltx) becomes a plain
  // one, its macros left out (Excel refuses an .xlsx whose content type says macros).
  edited.types = edited.types.replace(/sheet\.(macroEnabled|template|macroEnabledTemplate)\.main\+xml/i, 'sheet.main+xml');
  const vbaPart = withoutPart(edited, 'vbaProject');
  const own = new Set(['[content_types].xml', relsPath, origin.part, stylesPart, calcChain, vbaPart].filter((p) => p !== undefined).map((p) => p.toLowerCase()));
  const frame = await sheetFrame(zip, origin.part);
  return {
    sheetPart: origin.part,
    ...frame,
    styles,
    stylesPart,
    date1904,
    fixed: [['[Content_Types].xml', edited.types], [relsPath, edited.bookRels]],
    copies: zip.paths().filter((p) => !own.has(p.toLowerCase())),
    zip,
  };
}

/** Leaves a part out of the package, its relationship and content type with it; its path, if there was one. */
function withoutPart(edited: { types: string; bookRels: string }, type: string): string | undefined {
  const rel = new RegExp(`<(\\w+:)?Relationship\\b[^>]*Type="[^"]*/${type}"[^>]*/>`).exec(edited.bookRels);
  const target = rel ? /Target="([^"]+)"/.exec(rel[0])?.[1] : undefined;
  if (!rel || target === undefined) return undefined;
  const part = workbookPartPath(target);
  edited.bookRels = edited.bookRels.replace(rel[0], '');
  const name = part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  edited.types = edited.types.replace(new RegExp(`<(\\w+:)?Override\\b[^>]*PartName="/${name}"[^>]*/>`, 'i'), '');
  return part;
}

/**
 * The sheet's XML before its <sheetData> (the root element, column widths, views) and after it
 * (hyperlinks, merged cells, page setup...), read in one pass that keeps none of the rows.
 */
async function sheetFrame(zip: WorkbookZip, part: string): Promise<{ head: string; tail: string; prefix: string }> {
  const decoder = new StringDecoder('utf8');
  let head = '';
  let prefix: string | undefined;
  let body = '';
  let tail: string | undefined;
  for await (const chunk of zip.stream(part)!) {
    const text = decoder.write(chunk as Buffer);
    if (tail !== undefined) {
      tail += text;
    } else if (prefix === undefined) {
      head += text;
      const open = /<(\w+:)?sheetData\b[^>]*>/.exec(head);
      if (!open) continue;
      prefix = open[1] ?? '';
      body = head.slice(open.index + open[0].length);
      if (open[0].endsWith('/>')) tail = body;
      head = head.slice(0, open.index);
    } else {
      body += text;
    }
    if (tail === undefined && prefix !== undefined) {
      const close = body.indexOf(`</${prefix}sheetData>`);
      if (close !== -1) tail = body.slice(close + `</${prefix}sheetData>`.length);
      // Only the last few characters can begin the closing tag: the rows themselves are not kept.
      else body = body.slice(-32);
    }
  }
  if (tail === undefined) throw new Error(`the worksheet ${part} has no <sheetData> that ends`);
  return { head, tail: tail + decoder.end(), prefix: prefix ?? '' };
}

/** The input sheet's head for the output: no <dimension> (its size changes), the header row frozen. */
export function outputHead(head: string, prefix: string, headerRow: number | undefined): string {
  let out = head.replace(/<(\w+:)?dimension\b[^>]*\/>/, '');
  if (headerRow === undefined) return out;
  const p = prefix;
  const views =
    `<${p}sheetViews><${p}sheetView workbookViewId="0"><${p}pane ySplit="${headerRow}" topLeftCell="A${headerRow + 1}" activePane="bottomLeft" state="frozen"/>` +
    `<${p}selection pane="bottomLeft"/></${p}sheetView></${p}sheetViews>`;
  const existing = /<(\w+:)?sheetViews\b[^>]*?(\/>|>[\s\S]*?<\/(\w+:)?sheetViews>)/.exec(out);
  if (existing) return out.slice(0, existing.index) + views + out.slice(existing.index + existing[0].length);
  // Views come before the format properties and the columns (CT_Worksheet's order).
  const next = /<(\w+:)?(sheetFormatPr|cols)\b/.exec(out);
  const at = next ? next.index : out.length;
  out = out.slice(0, at) + views + out.slice(at);
  return out;
}
