// The output's styles part: the input workbook's own (its other sheets are copied as they are and
// point into it by index), or a minimal one for a fresh workbook, with what the enriched sheet
// needs appended at the end, so that no index the copied sheets use moves: a bold font for the
// header, and one cell format per number format its typed cells carry (dates show as dates).
import { xmlAttribute } from './sheet-xml.js';

/** The built-in number formats (ECMA-376 §18.8.30) by code: such a code needs no numFmt entry. */
const BUILT_IN: Record<string, number> = {
  '0': 1,
  '0.00': 2,
  '#,##0': 3,
  '#,##0.00': 4,
  '0%': 9,
  '0.00%': 10,
  '0.00E+00': 11,
  '# ?/?': 12,
  '# ??/??': 13,
  'mm-dd-yy': 14,
  'd-mmm-yy': 15,
  'd-mmm': 16,
  'mmm-yy': 17,
  'h:mm AM/PM': 18,
  'h:mm:ss AM/PM': 19,
  'h:mm': 20,
  'h:mm:ss': 21,
  'm/d/yy h:mm': 22,
  'mm:ss': 45,
  '[h]:mm:ss': 46,
  'mmss.0': 47,
  '##0.0E+0': 48,
  '@': 49,
};

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';

/** The styles of a workbook that has none of its own (a CSV input's). */
export const FRESH_STYLES =
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<styleSheet xmlns="${MAIN}">` +
  '<fonts count="1"><font><sz val="11"/><name val="Calibri"/></font></fonts>' +
  '<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>' +
  '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>' +
  '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>' +
  '<cellXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/></cellXfs>' +
  '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>' +
  '</styleSheet>';

/** The children of the first `<name>` block of `xml` (any namespace prefix), with where it lies. */
function block(xml: string, name: string): { start: number; end: number; inner: string; prefix: string } | undefined {
  const open = new RegExp(`<(\\w+:)?${name}\\b[^>]*?(/?)>`).exec(xml);
  if (!open) return undefined;
  const prefix = open[1] ?? '';
  if (open[2] === '/') return { start: open.index, end: open.index + open[0].length, inner: '', prefix };
  const close = xml.indexOf(`</${prefix}${name}>`, open.index);
  if (close === -1) return undefined;
  return { start: open.index, end: close + `</${prefix}${name}>`.length, inner: xml.slice(open.index + open[0].length, close), prefix };
}

/** How many `<child>` elements a block's children hold (its own nested elements not counted). */
function count(inner: string, prefix: string, child: string): number {
  return (inner.match(new RegExp(`<${prefix}${child}[\\s/>]`, 'g')) ?? []).length;
}

export class WorkbookStyles {
  readonly #base: string;
  readonly #xfBase: number;
  readonly #fontBase: number;
  readonly #numFmtBase: number;
  readonly #formats = new Map<string, number>();
  /** The appended cell formats: [numFmtId, bold]. */
  readonly #xfs: Array<[number, boolean]> = [];
  readonly #customFormats: Array<[number, string]> = [];
  readonly header: number;

  constructor(base: string, header: boolean) {
    this.#base = base;
    const xfs = block(base, 'cellXfs');
    const fonts = block(base, 'fonts');
    if (!xfs || !fonts) throw new Error("the workbook's styles part has no cell formats or fonts");
    this.#xfBase = count(xfs.inner, xfs.prefix, 'xf');
    this.#fontBase = count(fonts.inner, fonts.prefix, 'font');
    const ids = [...(block(base, 'numFmts')?.inner ?? '').matchAll(/numFmtId="(\d+)"/g)].map((m) => Number(m[1]));
    this.#numFmtBase = Math.max(163, ...ids) + 1;
    this.header = header ? this.#xf(0, true) : 0;
  }

  /** The style index of a cell with this number format; 0 (the default) for none or General. */
  numFmt(code: string | undefined): number {
    if (code === undefined || /^general$/i.test(code)) return 0;
    let index = this.#formats.get(code);
    if (index === undefined) {
      let id = BUILT_IN[code];
      if (id === undefined) {
        id = this.#numFmtBase + this.#customFormats.length;
        this.#customFormats.push([id, code]);
      }
      index = this.#xf(id, false);
      this.#formats.set(code, index);
    }
    return index;
  }

  #xf(numFmtId: number, bold: boolean): number {
    this.#xfs.push([numFmtId, bold]);
    return this.#xfBase + this.#xfs.length - 1;
  }

  /** The styles part with the appended fonts, formats and cell formats. */
  xml(): string {
    let xml = this.#base;
    const fonts = block(xml, 'fonts')!;
    const p = fonts.prefix;
    const bold = `<${p}font><${p}b/><${p}sz val="11"/><${p}name val="Calibri"/></${p}font>`;
    xml = replaceBlock(xml, fonts, 'fonts', this.#fontBase + 1, fonts.inner + bold);
    const xfs = block(xml, 'cellXfs')!;
    const added = this.#xfs.map(
      ([id, isBold]) =>
        `<${p}xf numFmtId="${id}" fontId="${isBold ? this.#fontBase : 0}" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"${isBold ? ' applyFont="1"' : ''}/>`,
    );
    xml = replaceBlock(xml, xfs, 'cellXfs', this.#xfBase + added.length, xfs.inner + added.join(''));
    if (this.#customFormats.length === 0) return xml;
    const formats = this.#customFormats.map(([id, code]) => `<${p}numFmt numFmtId="${id}" formatCode="${xmlAttribute(code)}"/>`).join('');
    const numFmts = block(xml, 'numFmts');
    if (numFmts) return replaceBlock(xml, numFmts, 'numFmts', count(numFmts.inner, p, 'numFmt') + this.#customFormats.length, numFmts.inner + formats);
    // numFmts is the stylesheet's first child.
    const root = /<(\w+:)?styleSheet\b[^>]*>/.exec(xml)!;
    const at = root.index + root[0].length;
    return `${xml.slice(0, at)}<${p}numFmts count="${this.#customFormats.length}">${formats}</${p}numFmts>${xml.slice(at)}`;
  }
}

function replaceBlock(xml: string, at: { start: number; end: number; prefix: string }, name: string, total: number, inner: string): string {
  const open = xml
    .slice(at.start, at.end)
    .match(/^<[^>]*?>/)![0]
    .replace(/\/>$/, '>');
  const counted = /\bcount="\d+"/.test(open) ? open.replace(/\bcount="\d+"/, `count="${total}"`) : open.replace(/>$/, ` count="${total}">`);
  return `${xml.slice(0, at.start)}${counted}${inner}</${at.prefix}${name}>${xml.slice(at.end)}`;
}
