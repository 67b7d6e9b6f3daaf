// An .ods file's content.xml -> sheetrest tabs, keeping the XML each row and cell came from so
// that a write can put every cell it did not touch back byte for byte (ods-package.ts).
// `<table:table-cell office:value-type="date" office:date-value="2024-03-01T09:30:00.25">`
// reads as `{ iso: '2024-03-01T09:30:00.25' }` with its `<text:p>` as the shown text; spaces
// kept by `<text:s/>`, tabs, line breaks and `&#13;` come back as written.
// Declared repeats are counted before anything is built: a 1 KB file declaring a million rows
// of 16,384 filled cells is refused in milliseconds instead of filling the heap (LOAD_LIMITS).
import type { CellObject } from '@e965/xlsx';
import type { SheetRow, Tab, TypedValue } from '../../../../lib/workbook.ts';
import { createInterner, type Interner } from '../../../../lib/workbook.ts';
import { LOAD_LIMITS } from '../limits.ts';
import { sourceCells } from '../write-cells.ts';
import { cellValue, decodeControls, readCellText, shownValue } from './cell-read.ts';
import { attributesOf, repeatOf, styleKinds, TAG, type StyleKinds } from './xml.ts';

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
  /** `<table:table table:display="false">`, or a table style whose properties say so. */
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
    // Served as an .xlsx hidden sheet is: marked in /tabs, left out with `hiddenTabs: "hide"`.
    tabs.push(table.hidden ? { name: table.name, rows, visibility: 'hidden' } : { name: table.name, rows });
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
      const down = mergedDownOf(run);
      for (let n = 0; n < run.count; n++) {
        const row: SheetRow = down === 0 ? { text: shared.text, value: shared.value } : { text: shared.text, value: shared.value, mergedDown: down };
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
  // LibreOffice hides a sheet with its table style; `table:display="false"` on the table itself
  // (other writers) hides it too.
  const hidden = attributes['table:display'] === 'false' || kinds.hiddenTables.has(attributes['table:style-name'] ?? '');
  return { table: { name, hidden, start: open.index, end, pieces, columnStyles }, rows };
}

/** How many rows below a merged cell of the row reaches (`table:number-rows-spanned="2"`: 1); 0 when none. */
function mergedDownOf(run: RowRun): number {
  let down = 0;
  for (const cell of run.cells) {
    if (!cell.attributeText.includes('rows-spanned')) continue;
    down = Math.max(down, repeatOf(attributesOf(cell.attributeText)['table:number-rows-spanned']) - 1);
  }
  return down;
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


function count(n: number): string {
  return n.toLocaleString('en-US');
}
