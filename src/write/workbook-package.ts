// What a workbook output is built around: the input workbook's own package (an .xlsx input: every
// part but the enriched sheet copied as it is, so the other sheets keep their values, types,
// shared strings, styles, hyperlinks and widths), or a fresh one-sheet package (a CSV input).
// The enriched sheet's XML keeps the input sheet's own elements around its rows (sheet-frame.ts):
// column widths and the like before them, hyperlinks, merged cells and the rest after them.
import type { Readable } from 'node:stream';
import { UnreadableInputError, UnwritableOutputError } from '../api/errors.js';
import type { SheetOrigin } from '../read/index.js';
import { boundedPart, WORKBOOK_LIMITS } from '../read/workbook-limits.js';
import { parseRelationships, parseWorkbook, partOfType, partText, RELATIONSHIP } from '../read/workbook-parts.js';
import { methodName, workbookPartPath, type WorkbookZip, type ZipPart } from '../read/workbook-zip.js';
import { frameSheet, type SheetFrame } from './sheet-frame.js';
import { xmlAttribute } from './sheet-xml.js';
import { FRESH_STYLES } from './workbook-styles.js';
import { ENTRY_LIMIT } from './zip-writer.js';
import { CSV_INSTEAD } from './output-words.js';

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const PACKAGE_RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';
const XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml';

export interface WorkbookPackage {
  /** The enriched sheet's part. */
  sheetPart: string;
  /** Its XML around its rows, the namespace prefix its elements use, the last column its rows use. */
  frame: SheetFrame;
  styles: string;
  stylesPart: string;
  date1904: boolean;
  /** Parts written as given here (content types, relationships). */
  fixed: Array<[string, string]>;
  /** Parts copied from the input as they are stored (deflated or not), checked before the first lookup. */
  copies: ZipPart[];
  /** The input's zip, held until the output is complete (WorkbookZip.hold). */
  zip: WorkbookZip | undefined;
}

/** A one-sheet workbook's package, for a CSV input. */
export function freshPackage(sheetName: string): WorkbookPackage {
  const overrides = [
    ['/xl/workbook.xml', 'sheet.main+xml'],
    ['/xl/worksheets/sheet1.xml', 'worksheet+xml'],
    ['/xl/styles.xml', 'styles+xml'],
  ]
    .map(([part, type]) => `<Override PartName="${part}" ContentType="${CONTENT_TYPE}.${type}"/>`)
    .join('');
  const types = `${XML_DECLARATION}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>${overrides}</Types>`;
  const rels = `${XML_DECLARATION}<Relationships xmlns="${PACKAGE_RELS}"><Relationship Id="rId1" Type="${RELATIONSHIP}officeDocument" Target="xl/workbook.xml"/></Relationships>`;
  const book = `${XML_DECLARATION}<workbook xmlns="${MAIN}" xmlns:r="${RELATIONSHIP.slice(0, -1)}"><sheets><sheet name="${xmlAttribute(sheetName)}" sheetId="1" r:id="rId1"/></sheets></workbook>`;
  const bookRels = `${XML_DECLARATION}<Relationships xmlns="${PACKAGE_RELS}"><Relationship Id="rId1" Type="${RELATIONSHIP}worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${RELATIONSHIP}styles" Target="styles.xml"/></Relationships>`;
  const head = `${XML_DECLARATION}<worksheet xmlns="${MAIN}" xmlns:r="${RELATIONSHIP.slice(0, -1)}">`;
  return {
    sheetPart: 'xl/worksheets/sheet1.xml',
    frame: { head, tail: '</worksheet>', spans: { viewsAt: head.length }, prefix: '', lastColumn: 0, lastColumnAt: '' },
    styles: FRESH_STYLES,
    stylesPart: 'xl/styles.xml',
    date1904: false,
    fixed: [
      ['[Content_Types].xml', types],
      ['_rels/.rels', rels],
      ['xl/workbook.xml', book],
      ['xl/_rels/workbook.xml.rels', bookRels],
    ],
    copies: [],
    zip: undefined,
  };
}

/**
 * The input workbook's package, from the zip the reader opened (the workbook as the run read it):
 * its small parts edited, the enriched sheet framed, and every other part checked to be copied as
 * it is stored, all before the first lookup. The zip is held until the output lets it go.
 */
export async function inputPackage(origin: SheetOrigin): Promise<WorkbookPackage> {
  const zip = origin.zip.hold();
  try {
    return await packageOf(zip, origin);
  } catch (error) {
    zip.close();
    throw error;
  }
}

async function packageOf(zip: WorkbookZip, origin: SheetOrigin): Promise<WorkbookPackage> {
  const text = (part: string): Promise<string> => partText(requiredPart(zip, part));
  const relsPath = 'xl/_rels/workbook.xml.rels';
  let bookRels = await text(relsPath);
  const rels = parseRelationships(bookRels);
  const { date1904 } = parseWorkbook(await text('xl/workbook.xml'));
  let types = await text('[Content_Types].xml');
  const ownStyles = partOfType(rels, 'styles', workbookPartPath);
  const stylesPart = ownStyles ?? 'xl/styles.xml';
  const styles = ownStyles && zip.has(ownStyles) ? await text(ownStyles) : FRESH_STYLES;
  if (!ownStyles) {
    bookRels = bookRels.replace(/<\/(\w+:)?Relationships>/, `<$1Relationship Id="rIdLeadEnrichStyles" Type="${RELATIONSHIP}styles" Target="styles.xml"/>$&`);
    types = types.replace(/<\/(\w+:)?Types>/, `<$1Override PartName="/xl/styles.xml" ContentType="${CONTENT_TYPE}.styles+xml"/>$&`);
  }
  const edited = { types, bookRels };
  // The calculation chain lists the formula cells of every sheet, for Excel's own use: it is
  // dropped (Excel rebuilds it) rather than left to disagree with the cells written.
  const calcChain = withoutPart(edited, 'calcChain');
  // The output is an .xlsx: a macro-enabled or template workbook (.xlsm, .xltx) becomes a plain
  // one, its macros left out (Excel refuses an .xlsx whose content type says macros).
  edited.types = edited.types.replace(/sheet\.(macroEnabled|template|macroEnabledTemplate)\.main\+xml/i, 'sheet.main+xml');
  const vbaPart = withoutPart(edited, 'vbaProject');
  const own = new Set(
    ['[content_types].xml', relsPath, origin.part, stylesPart, calcChain, vbaPart].filter((p) => p !== undefined).map((p) => p.toLowerCase()),
  );
  const frame = await frameSheet(zip.stream(origin.part)!, { input: origin.file, part: origin.part, limit: WORKBOOK_LIMITS.partBytes });
  return {
    sheetPart: origin.part,
    frame,
    styles,
    stylesPart,
    date1904,
    fixed: [
      ['[Content_Types].xml', edited.types],
      [relsPath, edited.bookRels],
    ],
    copies: zip
      .paths()
      .filter((p) => !own.has(p.toLowerCase()))
      .map((p) => copyable(zip, p)),
    zip,
  };
}

/** A small part read whole, refused once it inflates past the bound of a part. */
function requiredPart(zip: WorkbookZip, part: string): Readable {
  const stream = boundedPart(zip, part);
  if (!stream) throw new UnreadableInputError(`${zip.file} has no part ${part}: open it in Excel or LibreOffice and save it again as .xlsx`);
  return stream;
}

/**
 * A part the output copies as the input stores it, deflated or not: one stored any other way
 * (another compression method, encrypted) is refused by name, as is one too large for a zip
 * without Zip64 entries, rather than written into an output that Excel cannot open.
 */
function copyable(zip: WorkbookZip, path: string): ZipPart {
  const part = zip.part(path)!;
  const refuse = (why: string): Error =>
    new UnwritableOutputError(
      `Cannot write the workbook of ${zip.file}: its part ${part.name} ${why}; open it in Excel or LibreOffice and save it again, or ${CSV_INSTEAD()}`,
    );
  if (part.encrypted) throw refuse('is encrypted');
  if (part.method !== 0 && part.method !== 8)
    throw refuse(`is compressed with ${methodName(part.method)}, which lead-enrich cannot copy (only deflate, as Excel writes)`);
  if (part.size > ENTRY_LIMIT || part.compressedSize > ENTRY_LIMIT) throw refuse('is larger than 4 GiB');
  return part;
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
 * The input sheet's head for the output: no <dimension> (its size changes), the header row frozen
 * in views of our own in place of the sheet's. Edited where its parser found these elements.
 */
export function outputHead(frame: SheetFrame, headerRow: number | undefined): string {
  const { head, spans, prefix: p } = frame;
  const cuts: Array<[number, number, string]> = [];
  if (spans.dimension) cuts.push([...spans.dimension, '']);
  if (headerRow !== undefined) {
    const views =
      `<${p}sheetViews><${p}sheetView workbookViewId="0"><${p}pane ySplit="${headerRow}" topLeftCell="A${headerRow + 1}" activePane="bottomLeft" state="frozen"/>` +
      `<${p}selection pane="bottomLeft"/></${p}sheetView></${p}sheetViews>`;
    cuts.push(spans.views ? [...spans.views, views] : [spans.viewsAt, spans.viewsAt, views]);
  }
  let out = '';
  let at = 0;
  for (const [start, end, text] of cuts.sort((a, b) => a[0] - b[0])) {
    out += head.slice(at, start) + text;
    at = end;
  }
  return out + head.slice(at);
}
