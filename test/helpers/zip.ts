// Writes a zip of deflated parts, for workbooks shaped as a test needs them (a bomb: a part that
// inflates far beyond its compressed size; a part stored with another compression method, its
// bytes then written as given). More than 65,535 parts end with Zip64's records.
import { crc32, deflateRawSync } from 'node:zlib';

export function zipOf(parts: ReadonlyArray<readonly [name: string, content: Buffer | string, method?: number]>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, content, method = 8] of parts) {
    const data = Buffer.isBuffer(content) ? content : Buffer.from(content);
    const packed = method === 8 ? deflateRawSync(data, { level: 9 }) : data;
    const nameBytes = Buffer.from(name);
    const fields = (header: Buffer, at: number) => {
      header.writeUInt16LE(20, at); // version needed
      header.writeUInt16LE(0, at + 2); // flags
      header.writeUInt16LE(method, at + 4);
      header.writeUInt32LE(0, at + 6); // time and date
      header.writeUInt32LE(crc32(data), at + 10);
      header.writeUInt32LE(packed.length, at + 14);
      header.writeUInt32LE(data.length, at + 18);
      header.writeUInt16LE(nameBytes.length, at + 22);
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    fields(local, 4);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // version made by
    fields(central, 6);
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, packed);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + packed.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(Math.min(parts.length, 0xffff), 8);
  end.writeUInt16LE(Math.min(parts.length, 0xffff), 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, ...(parts.length > 0xffff ? [zip64End(parts.length, directory.length, offset)] : []), end]);
}

/** More than 65,535 parts: the count in a Zip64 end record and its locator (APPNOTE.TXT 4.3.14-15), the classic one's -1. */
function zip64End(count: number, size: number, start: number): Buffer {
  const record = Buffer.alloc(76);
  record.writeUInt32LE(0x06064b50, 0);
  record.writeBigUInt64LE(44n, 4);
  record.writeUInt16LE(45, 12);
  record.writeUInt16LE(45, 14);
  record.writeBigUInt64LE(BigInt(count), 24);
  record.writeBigUInt64LE(BigInt(count), 32);
  record.writeBigUInt64LE(BigInt(size), 40);
  record.writeBigUInt64LE(BigInt(start), 48);
  record.writeUInt32LE(0x07064b50, 56);
  record.writeBigUInt64LE(BigInt(start + size), 64);
  record.writeUInt32LE(1, 72);
  return record;
}

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** A one-sheet .xlsx whose worksheet's <sheetData> is `rows` and whose shared strings part is `shared` (XML inside <sst>). */
export function workbookOf(rows: string, shared: string | Buffer = ''): Buffer {
  const sst = Buffer.isBuffer(shared) ? shared : Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${MAIN}">${shared}</sst>`);
  return zipOf([
    ['[Content_Types].xml', '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'],
    [
      'xl/workbook.xml',
      `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${MAIN}" xmlns:r="${RELS}"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ],
    [
      'xl/_rels/workbook.xml.rels',
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${RELS}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${RELS}/sharedStrings" Target="sharedStrings.xml"/></Relationships>`,
    ],
    ['xl/worksheets/sheet1.xml', `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}"><sheetData>${rows}</sheetData></worksheet>`],
    ['xl/sharedStrings.xml', sst],
    [
      'xl/styles.xml',
      `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="${MAIN}"><fonts count="1"><font/></fonts><fills count="1"><fill/></fills><borders count="1"><border/></borders><cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="1"><xf numFmtId="0"/></cellXfs></styleSheet>`,
    ],
  ]);
}

const TYPES = 'http://schemas.openxmlformats.org/package/2006/content-types';
const SHEET_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml';

export interface BookOptions {
  /** The number format of each cell style (s="1" is the second): built-in ids, e.g. 14 (a date). */
  styles?: number[];
  /** Parts beside the workbook's own, as zipOf takes them (after them in the zip). */
  extra?: ReadonlyArray<readonly [name: string, content: Buffer | string, method?: number]>;
}

/**
 * A one-sheet .xlsx as Excel lays it out (content types, package relationships, styles), whose
 * worksheet element holds `sheet` (its <sheetData> and whatever else a test puts around it).
 */
export function bookOf(sheet: string, options: BookOptions = {}): Buffer {
  const xfs = [0, ...(options.styles ?? [])].map((id) => `<xf numFmtId="${id}" applyNumberFormat="1"/>`).join('');
  const overrides = [
    ['/xl/workbook.xml', 'sheet.main+xml'],
    ['/xl/worksheets/sheet1.xml', 'worksheet+xml'],
    ['/xl/styles.xml', 'styles+xml'],
  ]
    .map(([part, type]) => `<Override PartName="${part}" ContentType="${SHEET_TYPE}.${type}"/>`)
    .join('');
  return zipOf([
    [
      '[Content_Types].xml',
      `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="${TYPES}"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>${overrides}</Types>`,
    ],
    [
      '_rels/.rels',
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${RELS}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    ],
    [
      'xl/workbook.xml',
      `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${MAIN}" xmlns:r="${RELS}"><sheets><sheet name="Leads" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    ],
    [
      'xl/_rels/workbook.xml.rels',
      `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${RELS}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${RELS}/styles" Target="styles.xml"/></Relationships>`,
    ],
    ['xl/worksheets/sheet1.xml', `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}">${sheet}</worksheet>`],
    [
      'xl/styles.xml',
      `<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="${MAIN}"><fonts count="1"><font/></fonts><fills count="1"><fill/></fills><borders count="1"><border/></borders><cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="${1 + (options.styles?.length ?? 0)}">${xfs}</cellXfs></styleSheet>`,
    ],
    ...(options.extra ?? []),
  ]);
}

/** An inline-string cell (`t="inlineStr"`), its text escaped for XML. */
export function textCell(ref: string, text: string): string {
  const escaped = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<c r="${ref}" t="inlineStr"><is><t>${escaped}</t></is></c>`;
}
