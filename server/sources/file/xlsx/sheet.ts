// One written worksheet's XML, edited in place: rows the writes did not touch keep their XML
// (renumbered when a DELETE above moved them up), written rows keep their row attributes and the
// cells they did not change, and every new cell takes its style from the cell it replaces, the
// nearest cell above in its column, or the column's `<col style>`. Everything outside
// `<sheetData>` stays as it was, but for `<dimension>` and, after a DELETE, the ranges of merges,
// validations, conditional formats and hyperlinks below the removed rows.
import type { SheetRow } from '../../../../lib/workbook.ts';
import { sameValue } from '../write-cells.ts';
import { DATE_FORMAT, DATE_TIME_FORMAT, TIME_FORMAT } from '../dates.ts';
import { attribute, startTags, withAttribute } from '../xml/attributes.ts';
import { cellContent, columnIndex, columnName } from './cells.ts';
import { RowShift } from './ranges.ts';
import type { Styles } from './styles.ts';

/** A row of the written tab and where it came from. */
export interface RowSlot {
  /** The new model row. */
  readonly row: SheetRow;
  /** The old sheet row number (1-based) this row stands in, or null for a new row. */
  readonly origin: number | null;
  /** The model row at `origin` as it was read (null for a new row). */
  readonly originRow: SheetRow | null;
  /** Whether a write replaced or appended this row; false: copy the origin's XML. */
  readonly written: boolean;
  /** Columns a write set, even to the value they held (a formula cell set to its own result). */
  readonly setColumns: ReadonlySet<number>;
}

export interface XmlRow {
  readonly number: number;
  /** The `<row ...>` start tag (or `<row .../>`). */
  readonly start: string;
  /** What lies between the start and end tags. */
  readonly inner: string;
  readonly xml: string;
  /** Parsed on first use: most rows are copied without ever looking at their cells. */
  cells?: XmlCell[];
}

function cellsOf(row: XmlRow): XmlCell[] {
  row.cells ??= parseCells(row.inner, row.number);
  return row.cells;
}

interface XmlCell {
  readonly column: number;
  readonly xml: string;
  readonly style: number | null;
}

/** `headerRows`: the rows of the header block (lib/workbook.ts `headerBlock`), whose styles new data cells never take. */
export function rewriteSheet(xml: string, slots: readonly RowSlot[], oldRowCount: number, styles: Styles, date1904: boolean, headerRows = 1): string {
  const prefix = /<(\w+:)?worksheet\b/.exec(xml)?.[1] ?? '';
  const data = /<(\w+:)?sheetData\b[^>]*?(?:\/>|>([\s\S]*?)<\/\1?sheetData>)/.exec(xml);
  if (data === null) throw new Error('a written sheet has no <sheetData>');
  const oldRows = parseRows(data[2] ?? '');
  const byNumber = new Map(oldRows.map((row) => [row.number, row]));
  const shift = RowShift.of(slots, oldRowCount);
  const columnStyles = parseColumnStyles(xml.slice(0, data.index));
  const out: XmlRow[] = [];
  for (let index = 0; index < slots.length; index++) {
    const slot = slots[index];
    const number = index + 1;
    const origin = slot.origin === null ? undefined : byNumber.get(slot.origin);
    if (!slot.written) {
      if (origin !== undefined) out.push(origin.number === number ? origin : renumberRow(origin, number, shift));
      continue;
    }
    const built = buildRow(slot, origin, number, prefix, shift, (column) => styleAbove(out, column, headerRows) ?? columnStyles(column), styles, date1904);
    if (built !== null) out.push(built);
  }
  // Rows past the data (formatting only, as a template has) keep their numbers, unless written over.
  const last = slots.length;
  for (const row of oldRows) if (row.number > Math.max(last, oldRowCount)) out.push(row);
  const body = out.map((row) => row.xml).join('');
  const sheetData = `<${prefix}sheetData>${dropOrphanSharedFormulas(body)}</${prefix}sheetData>`;
  const before = withDimension(xml.slice(0, data.index), out);
  const after = shift.removesRows ? shift.shiftRanges(xml.slice(data.index + data[0].length)) : xml.slice(data.index + data[0].length);
  return before + sheetData + after;
}

function parseRows(xml: string): XmlRow[] {
  const rows: XmlRow[] = [];
  let number = 0;
  for (const match of xml.matchAll(/<(?:\w+:)?row\b[^>]*?(?:\/>|>([\s\S]*?)<\/(?:\w+:)?row>)/g)) {
    const start = /^<[^>]*>/.exec(match[0])![0];
    number = Number(attribute(start, 'r') ?? number + 1);
    rows.push({ number, start, inner: match[1] ?? '', xml: match[0] });
  }
  return rows;
}

function parseCells(xml: string, row: number): XmlCell[] {
  const cells: XmlCell[] = [];
  let column = -1;
  for (const match of xml.matchAll(/<(?:\w+:)?c\b[^>]*?(?:\/>|>[\s\S]*?<\/(?:\w+:)?c>)/g)) {
    const start = /^<[^>]*>/.exec(match[0])![0];
    const ref = attribute(start, 'r');
    column = ref === null ? column + 1 : columnIndex(/^[A-Za-z]+/.exec(ref)?.[0] ?? 'A');
    const style = attribute(start, 's');
    // A cell without `r` gets one, so it can be renumbered and kept beside written cells.
    const xmlWithRef = ref === null ? match[0].replace(/^<((?:\w+:)?c)\b/, `<$1 r="${columnName(column)}${row}"`) : match[0];
    cells.push({ column, xml: xmlWithRef, style: style === null ? null : Number(style) });
  }
  return cells;
}

export function renumberRow(row: XmlRow, number: number, shift: RowShift): XmlRow {
  const start = setRowNumber(row.start, number);
  if (start.endsWith('/>')) return { number, start, inner: '', xml: start };
  // Cells without `r` take their place from their order, which does not change.
  const inner = renumberCells(row.inner, number, shift);
  return { number, start, inner, xml: start + inner + row.xml.slice(row.xml.lastIndexOf('</')) };
}

/** Every `r="B7"` of the cells in `xml` moved to row `number`, and shared formulas' ranges with them. */
function renumberCells(xml: string, number: number, shift: RowShift): string {
  // Most writers quote with `"`: their rows take the quick pattern; a row with an apostrophe
  // anywhere takes the one for either quote (`r='B7'` -> `r='B5'`, the file's quote kept).
  const quoted = xml.includes("'");
  let cells = quoted ? xml.replace(CELL_REF, `$1$2$3${number}$2`) : xml.replace(CELL_REF_DOUBLE, `$1$2${number}"`);
  // A shared or array formula's range moves with the rows it covers.
  if (shift.removesRows && cells.includes('ref')) cells = cells.replace(FORMULA_REF, (_all, head: string, quote: string, ref: string) => `${head}${quote}${shift.shiftRef(ref) ?? ref}${quote}`);
  return cells;
}

const CELL_REF_DOUBLE = /(<(?:\w+:)?c\b[^>]*?\sr=")([A-Za-z]+)\d+"/g;
const CELL_REF = /(<(?:\w+:)?c\b[^>]*?\sr\s*=\s*)(["'])([A-Za-z]+)\d+\2/g;
const FORMULA_REF = /(<(?:\w+:)?f\b[^>]*?\sref\s*=\s*)(["'])([^"']*)\2/g;
const ROW_NUMBER = /\sr="\d*"/;

/** The row's `r` set in place (whichever quote it had), or added after the name. */
function setRowNumber(start: string, number: number): string {
  // The quick way for the usual `r="7"`; any other spelling through the attribute parser.
  return ROW_NUMBER.test(start) ? start.replace(ROW_NUMBER, ` r="${number}"`) : withAttribute(start, 'r', String(number));
}

export function buildRow(slot: RowSlot, origin: XmlRow | undefined, number: number, prefix: string, shift: RowShift, inherited: (column: number) => number | null, styles: Styles, date1904: boolean): XmlRow | null {
  const { row, originRow, setColumns } = slot;
  const kept = new Map((origin === undefined ? [] : cellsOf(origin)).map((cell) => [cell.column, cell]));
  const width = Math.max(row.text.length, row.value.length, row.formula?.length ?? 0, ...[...kept.keys()].map((column) => column + 1));
  const cells: XmlCell[] = [];
  for (let column = 0; column < width; column++) {
    const old = kept.get(column);
    const text = row.text[column] ?? '';
    const value = row.value[column] ?? null;
    const formula = row.formula?.[column];
    const unchanged = originRow !== null && !setColumns.has(column) && (formula === undefined || formula === '') && sameValue(originRow.value[column] ?? null, value) && (originRow.text[column] ?? '') === text;
    if (unchanged) {
      if (old !== undefined) cells.push({ ...old, xml: renumberCells(old.xml, number, shift) });
      continue;
    }
    let content = cellContent(text, value, formula, date1904);
    const base = old?.style ?? inherited(column) ?? 0;
    const ref = `${columnName(column)}${number}`;
    if (content === null) {
      // A cleared cell keeps its style (borders, fill), as a spreadsheet program's Delete does.
      if (old?.style) cells.push({ column, xml: `<${prefix}c r="${ref}" s="${old.style}"/>`, style: old.style });
      continue;
    }
    let style: number | null = base;
    if (content.kind === 'number') style = styles.withKind(base, 'number', 'General');
    else if (content.kind === 'time') style = styles.withKind(base, 'time', TIME_FORMAT);
    else if (content.kind === 'date') style = styles.withKind(base, 'date', content.iso?.includes(':') ? DATE_TIME_FORMAT : DATE_FORMAT);
    // A workbook without styles cannot show a date: it is kept as its ISO text instead.
    if (style === null && content.iso !== undefined) content = cellContent(content.iso, content.iso, undefined, date1904)!;
    const styled = style === null || style === 0 ? '' : ` s="${style}"`;
    cells.push({ column, xml: `<${prefix}c r="${ref}"${styled}${content.attributes}>${content.body.replace(/<(\/?)(f|v|is|t)\b/g, `<$1${prefix}$2`)}</${prefix}c>`, style });
  }
  if (origin === undefined && cells.length === 0) return null;
  // `spans` is only a hint for readers, and written cells may fall outside it.
  const start = setRowNumber(origin === undefined ? `<${prefix}row>` : withAttribute(origin.start, 'spans', null).replace(/\s*\/>$/, '>'), number);
  const inner = cells.map((cell) => cell.xml).join('');
  return { number, start, inner, cells, xml: `${start}${inner}</${prefix}row>` };
}

/** The style of the nearest cell above in `column`, below the header block (its last row is sheet row `headerRows`). */
export function styleAbove(rows: readonly XmlRow[], column: number, headerRows: number): number | null {
  for (let index = rows.length - 1, looked = 0; index >= 0 && looked < 1000; index--, looked++) {
    if (rows[index].number <= headerRows) break;
    const cell = cellsOf(rows[index]).find((candidate) => candidate.column === column);
    if (cell !== undefined && cell.style !== null) return cell.style;
  }
  return null;
}

/** `<col min="2" max="3" style="4"/>` -> columns B and C take style 4. */
export function parseColumnStyles(head: string): (column: number) => number | null {
  const spans = startTags(head, 'col').flatMap((tag) => {
    const style = attribute(tag, 'style');
    return style === null ? [] : [{ min: Number(attribute(tag, 'min')) - 1, max: Number(attribute(tag, 'max')) - 1, style: Number(style) }];
  });
  return (column) => spans.find((span) => column >= span.min && column <= span.max)?.style ?? null;
}

/**
 * `<dimension ref>` covering the rows now holding cells. Its last column is the old one's or a
 * written cell's, whichever is further right (reading every row's cells would cost a second parse
 * of the sheet; a reader takes the dimension as a hint only).
 */
function withDimension(head: string, rows: readonly XmlRow[]): string {
  let lastRow = 0;
  let lastColumn = 0;
  for (const row of rows) {
    if (!/<(?:\w+:)?c\b/.test(row.inner)) continue;
    lastRow = row.number;
    for (const cell of row.cells ?? []) lastColumn = Math.max(lastColumn, cell.column);
  }
  return setDimension(head, lastRow, lastColumn);
}

/** `head` with its `<dimension ref>` set to end at `lastRow` (0: no cells) and at least at column `lastColumn` (0-based). */
export function setDimension(head: string, lastRow: number, lastColumn: number): string {
  const tag = /<(?:\w+:)?dimension\b[^>]*>/.exec(head);
  if (tag === null) return head;
  const oldEnd = /\$?([A-Za-z]+)\$?\d+$/.exec(attribute(tag[0], 'ref') ?? '');
  const endColumn = Math.max(oldEnd === null ? 0 : columnIndex(oldEnd[1]), lastColumn);
  const ref = lastRow === 0 ? 'A1' : `A1:${columnName(endColumn)}${lastRow}`;
  return head.slice(0, tag.index) + withAttribute(tag[0], 'ref', ref) + head.slice(tag.index + tag[0].length);
}

/**
 * A cell sharing a formula points at the cell that holds its text (`si`); when that cell was
 * written over or removed, the sharing cell keeps its last value without the formula (Excel
 * would otherwise refuse the file).
 */
function dropOrphanSharedFormulas(body: string): string {
  if (!hasSharedFormula(body)) return body;
  return dropOrphans(body, sharedMasters(body));
}

/** Whether `xml` holds a shared formula (`t="shared"`, either quote). */
export function hasSharedFormula(xml: string): boolean {
  return SHARED_FORMULA.test(xml);
}

const SHARED_FORMULA = /\st\s*=\s*["']shared["']/;

/** The `si` of every cell in `xml` that holds a shared formula's text (its master). */
export function sharedMasters(xml: string): Set<string> {
  const masters = new Set<string>();
  for (const tag of startTags(xml, 'f')) {
    if (attribute(tag, 't') === 'shared' && attribute(tag, 'ref') !== null) masters.add(attribute(tag, 'si') ?? '');
  }
  return masters;
}

/** `xml` without the shared formulas whose master is not among `masters`. */
export function dropOrphans(xml: string, masters: ReadonlySet<string>): string {
  return xml.replace(/<(?:\w+:)?f\b[^>]*?(?:\/>|>[^<]*<\/(?:\w+:)?f>)/g, (element) => {
    const tag = /^<[^>]*>/.exec(element)![0];
    return attribute(tag, 't') === 'shared' && attribute(tag, 'ref') === null && !masters.has(attribute(tag, 'si') ?? '') ? '' : element;
  });
}
