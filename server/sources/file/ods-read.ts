// An .ods file's content.xml -> sheetrest tabs, keeping the XML each row and cell came from so
// that a write can put every cell it did not touch back byte for byte (ods-package.ts).
// `<table:table-cell office:value-type="date" office:date-value="2024-03-01T09:30:00.25">`
// reads as `{ iso: '2024-03-01T09:30:00.25' }` with its `<text:p>` as the shown text; spaces
// kept by `<text:s/>`, tabs, line breaks and `&#13;` come back as written.
// Declared repeats are counted before anything is built: a 1 KB file declaring a million rows
// of 16,384 filled cells is refused in milliseconds instead of filling the heap (LOAD_LIMITS).
import type { CellObject } from '@e965/xlsx';
import type { SheetRow, Tab, TypedValue } from '../../../lib/workbook.ts';
import { createInterner, type Interner } from '../../../lib/workbook.ts';
import { serialToIso } from './dates.ts';
import { LOAD_LIMITS } from './limits.ts';
import { sourceCells } from './read-cells.ts';
import { attributesOf, decodeXml, styleKinds, TAG, type StyleKinds } from './ods-xml.ts';

/** One `<table:table-cell>` (or covered cell) element, standing for `count` columns. */
export interface CellRun {
  readonly xml: string;
  readonly count: number;
  readonly style: string | null;
  /** The start tag's attributes as written; parsed again only when a write needs them (cellAttributes). */
  readonly attributeText: string;
  readonly text: string;
  readonly value: TypedValue;
  readonly row: RowRun;
}

/** One `<table:table-row>` element, standing for `count` rows. */
export interface RowRun {
  readonly xml: string;
  readonly startTag: string;
  readonly count: number;
  readonly cells: CellRun[];
}

/** A table: its XML as text pieces and row runs, in document order. */
export interface OdsTable {
  readonly name: string;
  readonly hidden: boolean;
  /** [start, end) of the whole `<table:table>` element in content.xml. */
  readonly start: number;
  readonly end: number;
  readonly pieces: readonly (string | RowRun)[];
  /** Each column's default cell style (`table:default-cell-style-name`), where declared. */
  readonly columnStyles: readonly (string | null)[];
}

export interface OdsContent {
  readonly xml: string;
  readonly tables: readonly OdsTable[];
  readonly kinds: StyleKinds;
}

/** Which row run each decoded row came from. */
export const rowRuns = new WeakMap<SheetRow, RowRun>();

/**
 * Which cell run a decoded cell came from, kept on the cell object itself: a WeakMap of a
 * million cells makes every garbage collection walk it (a 100k-row tab loaded 5x slower).
 * Cell objects are never copied, only passed on (write-cells.ts), so the mark stays honest.
 */
const CELL_RUN = Symbol('ods cell run');

export function cellRunOf(cell: object): CellRun | undefined {
  return (cell as { [CELL_RUN]?: CellRun })[CELL_RUN];
}

export function cellAttributes(cell: CellRun): Record<string, string> {
  return attributesOf(cell.attributeText);
}

export class LoadLimitError extends Error {}

/** Parses content.xml (with styles.xml for the styles it inherits); throws on what it cannot read. */
export function readOdsContent(xml: string, stylesXml: string): { content: OdsContent; tabs: Tab[] } {
  const kinds = styleKinds(xml, stylesXml);
  const tables: OdsTable[] = [];
  const tabs: Tab[] = [];
  const budget = { cells: 0 };
  TAG.lastIndex = 0;
  for (let match = TAG.exec(xml); match !== null; match = TAG.exec(xml)) {
    if (match[2] !== 'table:table' || match[1] === '/') continue;
    const { table, rows } = readTable(xml, match, kinds, budget);
    tables.push(table);
    tabs.push({ name: table.name, rows });
    TAG.lastIndex = table.end;
  }
  return { content: { xml, tables, kinds }, tabs };
}

function readTable(xml: string, open: RegExpExecArray, kinds: StyleKinds, budget: { cells: number }): { table: OdsTable; rows: SheetRow[] } {
  const attributes = attributesOf(open[3]);
  const name = attributes['table:name'] ?? '';
  const pieces: (string | RowRun)[] = [];
  const columnStyles: (string | null)[] = [];
  const rows: SheetRow[] = [];
  /** Empty rows not yet known to lie before a row with content (trailing ones are never built). */
  let pendingEmpty: RowRun[] = [];
  let pendingCount = 0;
  const interner = createInterner();
  let textStart = open.index;
  let depth = 1;
  let match: RegExpExecArray | null;
  if (open[4] === '/') depth = 0;
  while (depth > 0 && (match = TAG.exec(xml)) !== null) {
    const [tag, closing, qname, attributeText, selfClosing] = match;
    if (qname === undefined) continue;
    if (closing === '/') {
      depth--;
      continue;
    }
    if (qname === 'table:table-column') {
      const column = attributesOf(attributeText);
      const repeat = repeatOf(column['table:number-columns-repeated']);
      const style = column['table:default-cell-style-name'] ?? null;
      for (let n = 0; n < repeat && columnStyles.length < LOAD_LIMITS.columns; n++) columnStyles.push(style);
    }
    if (qname === 'table:table-row') {
      pieces.push(xml.slice(textStart, match.index));
      const run = readRow(xml, match, kinds);
      pieces.push(run);
      textStart = TAG.lastIndex;
      const width = runWidth(run);
      if (width === 0) {
        pendingEmpty.push(run);
        pendingCount += run.count;
        continue;
      }
      if (width > LOAD_LIMITS.columns) throw new LoadLimitError(`the table "${name}" has a row reaching column ${count(width)}; at most ${count(LOAD_LIMITS.columns)} columns are read`);
      const total = rows.length + pendingCount + run.count;
      if (total > LOAD_LIMITS.rows) throw new LoadLimitError(`the table "${name}" declares ${count(total)} or more rows with content; at most ${count(LOAD_LIMITS.rows)} are read`);
      budget.cells += run.count * width;
      if (budget.cells > LOAD_LIMITS.cells) throw new LoadLimitError(`the workbook declares more than ${count(LOAD_LIMITS.cells)} cells up to its last value; at most that many are read`);
      for (const empty of pendingEmpty) for (let n = 0; n < empty.count; n++) rows.push(emptyRow(empty));
      pendingEmpty = [];
      pendingCount = 0;
      const shared = rowFromRun(run, width, interner);
      for (let n = 0; n < run.count; n++) {
        const row: SheetRow = { text: shared.text, value: shared.value };
        rowRuns.set(row, run);
        sourceCells.set(row, shared.cells);
        rows.push(row);
      }
      continue;
    }
    if (selfClosing !== '/') depth++;
  }
  const end = TAG.lastIndex;
  pieces.push(xml.slice(textStart, end));
  const hidden = kinds.hiddenTables.has(attributes['table:style-name'] ?? '');
  return { table: { name, hidden, start: open.index, end, pieces, columnStyles }, rows };
}

/** Parses one row element (as ods-package.ts writes it) into its run. */
export function readRowXml(xml: string, kinds: StyleKinds): RowRun {
  TAG.lastIndex = 0;
  const open = TAG.exec(xml);
  if (open === null || open[2] !== 'table:table-row') throw new Error('not a table row');
  return readRow(xml, open, kinds);
}

/** The same row element standing for `count` rows (its start tag changed), its cells pointing at it. */
export function resizedRun(run: RowRun, startTag: string, count: number): RowRun {
  const cells: CellRun[] = [];
  const resized: RowRun = { xml: startTag + run.xml.slice(run.startTag.length), startTag, count, cells };
  for (const cell of run.cells) cells.push({ ...cell, row: resized });
  return resized;
}

/** Points `row` at `run`: the next fold puts it back as that element's XML. */
export function markRow(row: SheetRow, run: RowRun, interner: Interner): void {
  rowRuns.set(row, run);
  sourceCells.set(row, rowFromRun(run, runWidth(run), interner).cells);
}

function emptyRow(run: RowRun): SheetRow {
  const row: SheetRow = { text: [], value: [] };
  rowRuns.set(row, run);
  sourceCells.set(row, []);
  return row;
}

/** Columns up to the last cell holding something. */
function runWidth(run: RowRun): number {
  let column = 0;
  let width = 0;
  for (const cell of run.cells) {
    column += cell.count;
    if (cell.text !== '' || cell.value !== null) width = column;
  }
  return width;
}

function rowFromRun(run: RowRun, width: number, interner: Interner): { text: string[]; value: TypedValue[]; cells: CellObject[] } {
  const text: string[] = [];
  const value: TypedValue[] = [];
  const cells: CellObject[] = [];
  for (const cell of run.cells) {
    // One object per element: the writer puts consecutive columns of one element back as one.
    const object = { t: 'z', [CELL_RUN]: cell } as CellObject;
    const shownText = interner.text(cell.text);
    const typed = typeof cell.value === 'object' && cell.value !== null ? interner.date(cell.value.iso) : cell.value;
    for (let n = 0; n < cell.count && text.length < width; n++) {
      text.push(shownText);
      value.push(typed);
      cells.push(object);
    }
    if (text.length >= width) break;
  }
  return { text, value, cells };
}

function readRow(xml: string, open: RegExpExecArray, kinds: StyleKinds): RowRun {
  const cells: CellRun[] = [];
  const run = { xml: '', startTag: open[0], count: repeatOf(attributesOf(open[3])['table:number-rows-repeated']), cells };
  if (open[4] !== '/') {
    let match: RegExpExecArray | null;
    while ((match = TAG.exec(xml)) !== null) {
      const [, closing, qname] = match;
      if (closing === '/' && qname === 'table:table-row') break;
      if (closing !== '/' && (qname === 'table:table-cell' || qname === 'table:covered-table-cell')) cells.push(readCell(xml, match, kinds, run));
    }
    if (match === null) throw new Error('content.xml ends inside a table row');
  }
  run.xml = xml.slice(open.index, TAG.lastIndex);
  return run;
}

/** Reads one cell element, leaving TAG after its end. */
function readCell(xml: string, open: RegExpExecArray, kinds: StyleKinds, row: RowRun): CellRun {
  const attributes = attributesOf(open[3]);
  const paragraphs: string[] = [];
  if (open[4] !== '/') readCellText(xml, open[2], paragraphs);
  const style = attributes['table:style-name'] ?? null;
  const shown = decodeControls(paragraphs.join('\n'));
  const value = cellValue(attributes, shown, style, kinds);
  const text = paragraphs.length > 0 ? shown : shownValue(value);
  return { xml: xml.slice(open.index, TAG.lastIndex), count: repeatOf(attributes['table:number-columns-repeated']), style, attributeText: open[3] ?? '', text, value, row };
}

/**
 * The paragraphs directly inside a cell, as ODF's white-space rules read them: runs of literal
 * white space are one space and vanish at a paragraph's ends; `<text:s text:c="3"/>`, tabs,
 * line breaks and character references (`&#13;`) are kept as written. Comments
 * (`office:annotation`) and drawings in the cell are not its text.
 */
function readCellText(xml: string, cellName: string, paragraphs: string[]): void {
  let depth = 1;
  let paragraph: { out: string; spaceOpen: boolean } | null = null;
  let paragraphDepth = 0;
  let skipDepth = 0;
  let last = TAG.lastIndex;
  let match: RegExpExecArray | null;
  while ((match = TAG.exec(xml)) !== null) {
    if (paragraph !== null && skipDepth === 0) addText(paragraph, xml.slice(last, match.index));
    last = TAG.lastIndex;
    const [, closing, qname, attributeText, selfClosing] = match;
    if (qname === undefined) continue;
    if (closing === '/') {
      depth--;
      if (depth === 0) {
        if (qname !== cellName) throw new Error(`content.xml closes ${qname} inside a ${cellName}`);
        return;
      }
      if (skipDepth > 0 && depth < skipDepth) skipDepth = 0;
      if (paragraph !== null && depth < paragraphDepth) {
        paragraphs.push(paragraph.spaceOpen ? paragraph.out.replace(/ $/, '') : paragraph.out);
        paragraph = null;
      }
      continue;
    }
    const opensParagraph = depth === 1 && (qname === 'text:p' || qname === 'text:h');
    if (selfClosing !== '/') depth++;
    if (opensParagraph) {
      paragraph = { out: '', spaceOpen: true };
      paragraphDepth = depth;
      if (selfClosing === '/') {
        paragraphs.push('');
        paragraph = null;
      }
      continue;
    }
    if (paragraph === null || skipDepth > 0) continue;
    if (qname === 'office:annotation' || qname.startsWith('draw:') || qname === 'text:note') {
      if (selfClosing !== '/') skipDepth = depth;
    } else if (qname === 'text:s') {
      paragraph.out += ' '.repeat(Math.min(repeatOf(attributesOf(attributeText)['text:c']), 65_536));
      paragraph.spaceOpen = false;
    } else if (qname === 'text:tab') {
      paragraph.out += '\t';
      paragraph.spaceOpen = false;
    } else if (qname === 'text:line-break') {
      paragraph.out += '\n';
      paragraph.spaceOpen = false;
    }
  }
  throw new Error('content.xml ends inside a table cell');
}

/** Literal white space collapses; characters written as references (`&#32;`, `&#13;`) stay. */
function addText(paragraph: { out: string; spaceOpen: boolean }, raw: string): void {
  if (raw === '') return;
  for (const part of raw.split(/(&#(?:x[0-9a-fA-F]+|[0-9]+);)/)) {
    if (part === '') continue;
    if (part.startsWith('&#')) {
      paragraph.out += decodeXml(part);
      paragraph.spaceOpen = false;
      continue;
    }
    let text = decodeXml(part.replace(/[ \t\r\n]+/g, ' '));
    if (paragraph.spaceOpen && text.startsWith(' ')) text = text.slice(1);
    if (text === '') continue;
    paragraph.out += text;
    paragraph.spaceOpen = text.endsWith(' ') && /[ \t\r\n]$/.test(part);
  }
}

function cellValue(attributes: Record<string, string>, shown: string, style: string | null, kinds: StyleKinds): TypedValue {
  const type = attributes['office:value-type'];
  if (attributes['calcext:value-type'] === 'error') return shown === '' ? null : shown;
  switch (type) {
    case 'float':
    case 'percentage':
    case 'currency': {
      const number = Number(attributes['office:value']);
      if (!Number.isFinite(number)) return shown === '' ? null : shown;
      // Files written by SheetJS (sheetrest before 0.2) keep dates as serials with a date style.
      const kind = style === null ? undefined : kinds.cellKinds.get(style);
      if (type === 'float' && kind === 'date') return { iso: serialToIso(number, false) };
      if (type === 'float' && kind === 'time' && number >= 0 && number < 1) return { iso: serialToIso(number, false, true) };
      return number;
    }
    case 'boolean':
      return attributes['office:boolean-value'] === 'true' || attributes['office:boolean-value'] === '1';
    case 'date':
    case 'time': {
      const iso = type === 'date' ? isoOfDateValue(attributes['office:date-value'] ?? '') : isoOfTimeValue(attributes['office:time-value'] ?? '');
      return iso !== null ? { iso } : shown === '' ? null : shown;
    }
    default: {
      const text = attributes['office:string-value'] === undefined ? shown : decodeControls(attributes['office:string-value']);
      return text === '' ? null : text;
    }
  }
}

/** `2024-03-01T09:30:00.250` -> `2024-03-01T09:30:00.25`; midnight is the bare date, as serials give it. */
export function isoOfDateValue(value: string): string | null {
  const match = /^(-?\d{4,})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2}):(\d{2})(\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?$/.exec(value);
  if (match === null || match[1].startsWith('-') || match[1].length > 4) return null;
  const [, year, month, day, hours, minutes, seconds, fraction] = match;
  const date = `${year}-${month}-${day}`;
  const fractionText = (fraction ?? '').replace(/\.?0+$/, '');
  if (hours === undefined || (hours === '00' && minutes === '00' && seconds === '00' && fractionText === '')) return date;
  return `${date}T${hours}:${minutes}:${seconds}${fractionText}`;
}

/** `PT09H30M00S` -> `09:30:00`; a duration of a day or more stays its ODF text (`PT255H10M10S`). */
export function isoOfTimeValue(value: string): string | null {
  const match = /^PT(\d+)H(\d+)M(\d+)(\.\d+)?S$/.exec(value);
  if (match === null) return null;
  const [, hours, minutes, seconds, fraction] = match;
  if (Number(hours) >= 24) return null;
  return `${hours.padStart(2, '0').slice(-2)}:${minutes.padStart(2, '0')}:${seconds.padStart(2, '0')}${(fraction ?? '').replace(/\.?0+$/, '')}`;
}

/** The text of a cell with a value but no paragraph (programs other than LibreOffice write such). */
function shownValue(value: TypedValue): string {
  if (value === null) return '';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'object') return value.iso.replace('T', ' ');
  return String(value);
}

/**
 * Control characters XML cannot hold, as SheetJS (and sheetrest) write them: `_x0001_`. Tab, line
 * feed and carriage return have XML of their own, so `_x000D_` is just text.
 */
function decodeControls(text: string): string {
  if (!text.includes('_x')) return text;
  return text.replace(/_x(000[0-8bBcCeEfF]|001[0-9a-fA-F]|[fF]{3}[eEfF])_/g, (_whole, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

export function repeatOf(text: string | undefined): number {
  const repeat = Number.parseInt(text ?? '1', 10);
  return Number.isFinite(repeat) && repeat >= 1 ? repeat : 1;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}
