// SheetJS cells -> sheetrest rows: a `$#,##0.00` cell holding 1234.5 reads as text `$1,234.50`
// and value 1234.5; a `yyyy-mm-dd` cell holding 45352 as `2024-03-01` and `{ iso: '2024-03-01' }`.
import { sheetJs } from './sheetjs.ts';
import type { CellObject, WorkBook, WorkSheet } from '@e965/xlsx';
import { createInterner, EMPTY_ROW, isSheetDate, type Interner, type SheetRow, type Tab, type TabVisibility, type TypedValue } from '../../../../lib/workbook.ts';
import { daysToDuration, formatIsDuration, formatIsTimeOnly, serialToIso } from '../dates.ts';
import { isMacroEnabled, mendXlsxPackage, type ZipContainer } from './mend-package.ts';
import { readZip, unpackEntry } from '../zip.ts';
import { excelFormatter, formatNumber, withSystemFormats } from './number-format.ts';

export type Cells = readonly (CellObject | undefined)[];


const MS_PER_DAY = 86_400_000;
const UNIX_EPOCH_SERIAL = 25_569;

// cellDates off: dates arrive as serials and we convert them ourselves, free of time zones.
const READ_OPTIONS = { dense: true, cellDates: false, cellNF: true, cellFormula: true, cellText: true, cellHTML: false } as const;

/** SheetJS's reading of an .xlsx (or .xlsm) package, mended first (xlsx-package.ts); .ods is read by ods-read.ts. */
export function readBook(bytes: Uint8Array): WorkBook {
  const zip = containerOf(bytes);
  mendXlsxPackage(zip);
  // bookVBA: an .xlsm file's macros are kept (as bytes, never run) to be written back.
  const book = (sheetJs() as unknown as { parse_zip(zip: ZipContainer, options: object): WorkBook }).parse_zip(zip, { type: 'array', bookVBA: true, ...READ_OPTIONS });
  if (isMacroEnabled(zip)) book.bookType = 'xlsm';
  return book;
}

/**
 * The package as SheetJS's workbook reader takes it, each part unpacked by zip.ts: within its
 * declared size and the part limit. SheetJS's own zip reader inflates a part to its end whatever
 * it declares (a `sheet1.xml` declaring 1,000 bytes inflated to 2 GiB for 8.8 s, then read as
 * an empty tab). Throws zip.ts's Error naming the part.
 */
function containerOf(bytes: Uint8Array): ZipContainer {
  const { utils } = sheetJs().CFB as unknown as { utils: { cfb_new(): ZipContainer; cfb_add(container: ZipContainer, name: string, content: Uint8Array, options: { unsafe: boolean }): unknown } };
  const container = utils.cfb_new();
  // unsafe: added as they come, as SheetJS's zip reader adds them, not re-sorted after each one.
  for (const entry of readZip(bytes)) utils.cfb_add(container, entry.name, unpackEntry(entry), { unsafe: true });
  return container;
}

export function bookUsesDate1904(book: WorkBook): boolean {
  return Boolean(book.Workbook?.WBProps?.date1904);
}

export function tabsOfBook(book: WorkBook): Tab[] {
  const date1904 = bookUsesDate1904(book);
  return book.SheetNames.map((name, index) => {
    const tab: Tab = { name, rows: rowsOfSheet(book.Sheets[name], date1904) };
    const visibility = visibilityOf(book, name, index);
    return visibility === undefined ? tab : { ...tab, visibility };
  });
}

/** SheetJS's `Hidden`: 1 for a hidden tab, 2 for a very hidden one (shown only by a macro). */
function visibilityOf(book: WorkBook, name: string, index: number): TabVisibility | undefined {
  const sheets = book.Workbook?.Sheets ?? [];
  const hidden = (sheets[index]?.name === name ? sheets[index] : sheets.find((sheet) => sheet.name === name))?.Hidden;
  return hidden === 1 ? 'hidden' : hidden === 2 ? 'veryHidden' : undefined;
}

function rowsOfSheet(sheet: WorkSheet | undefined, date1904: boolean): SheetRow[] {
  const { length, rows: held } = sparseRowsOfSheet(sheet, date1904);
  // A row with no cells is the one shared empty row: the streaming fold (stream-fold.ts) decodes
  // a few rows of a 100k-row sheet whose `<dimension>` still reaches row 100,001, and a row object
  // with two arrays for each missing one took 38 MB of Bun's heap (docs/benchmarks.md, "Big files").
  const rows: SheetRow[] = [];
  for (let r = 0; r < length; r++) rows.push(held.get(r) ?? EMPTY_ROW);
  return rows;
}

/**
 * What `tabsOfBook` gives for the tab `name`, as its length and the rows that are not
 * `EMPTY_ROW`, when only the rows at `indexes` (ascending, 0-based) can hold cells; undefined
 * without such a tab.
 */
export function sparseRowsOfTab(book: WorkBook, name: string, indexes: readonly number[]): SparseRows | undefined {
  if (!book.SheetNames.includes(name)) return undefined;
  return sparseRowsOfSheet(book.Sheets[name], bookUsesDate1904(book), indexes);
}

export interface SparseRows {
  readonly length: number;
  /** By index, every row that is not `EMPTY_ROW`. */
  readonly rows: ReadonlyMap<number, SheetRow>;
}

/**
 * The rows of a sheet as a length (its range's) and the rows that hold cells or start a merge;
 * with `indexes`, only those rows are looked at. The streaming fold decodes a few rows of a
 * sheet whose range still spans 100,001 on the main thread (fold-runner.ts), where a pass over
 * every row index took 2-11 ms (tabsOfBook) or 2-3 (SheetJS's rows, a sparse array 100,001 long).
 */
function sparseRowsOfSheet(sheet: WorkSheet | undefined, date1904: boolean, indexes?: readonly number[]): SparseRows {
  const ref = sheet?.['!ref'];
  if (sheet === undefined || ref === undefined) return { length: 0, rows: new Map() };
  const length = sheetJs().utils.decode_range(ref).e.r + 1;
  const data: (CellObject[] | undefined)[] = sheet['!data'] ?? [];
  const rows = new Map<number, SheetRow>();
  // A column of dates repeats a few hundred days: one SheetDate per day, not one per cell.
  const interner = createInterner();
  const add = (cells: CellObject[] | undefined, r: number): void => {
    if (cells !== undefined && r < length) rows.set(r, rowOfCells(cells, date1904, interner));
  };
  // forEach passes over holes: only the rows SheetJS made, in order.
  if (indexes === undefined) data.forEach(add);
  else for (const r of indexes) add(data[r], r);
  withMergesDown(rows, length, sheet['!merges'] ?? []);
  return { length, rows };
}

/** Marks each row where a merge starts that spans rows below it (`A1:A2`): how far down it reaches. */
function withMergesDown(rows: Map<number, SheetRow>, length: number, merges: readonly { s: { r: number }; e: { r: number } }[]): void {
  for (const merge of merges) {
    const r = merge.s.r;
    const row = rows.get(r) ?? (r >= 0 && r < length ? EMPTY_ROW : undefined);
    const down = merge.e.r - merge.s.r;
    if (row === undefined || down <= 0 || (row.mergedDown ?? 0) >= down) continue;
    rows.set(r, { ...row, mergedDown: down });
  }
}

export function rowOfCells(cells: Cells, date1904: boolean, interner: Interner = createInterner()): SheetRow {
  const text: string[] = [];
  const value: TypedValue[] = [];
  for (let c = 0; c < cells.length; c++) {
    const [cellText, cellValue] = readCell(cells[c], date1904);
    text.push(cellText);
    value.push(isSheetDate(cellValue) ? interner.date(cellValue.iso) : cellValue);
  }
  // A missing cell is empty, so trailing empty cells need not be carried.
  let end = text.length;
  while (end > 0 && text[end - 1] === '' && value[end - 1] === null) end--;
  text.length = end;
  value.length = end;
  return { text, value };
}

/** The displayed text and the typed value of one cell. */
export function readCell(cell: CellObject | undefined, date1904: boolean): [string, TypedValue] {
  if (cell === undefined || cell === null || cell.v === undefined || cell.v === null) return ['', null];
  switch (cell.t) {
    case 'n':
      return readNumber(cell, Number(cell.v), date1904);
    case 'b':
      return [cell.w ?? (cell.v ? 'TRUE' : 'FALSE'), Boolean(cell.v)];
    case 'e': {
      // An error shows its text (`#N/A`) and has no other value to give.
      const shown = cell.w ?? errorText(cell.v);
      return [shown, shown];
    }
    case 'd': {
      // Only with cellDates, which we do not ask for; SheetJS's Date objects are UTC-based.
      const serial = cell.v instanceof Date ? cell.v.getTime() / MS_PER_DAY + UNIX_EPOCH_SERIAL : Number.NaN;
      if (!Number.isFinite(serial)) return [cell.w ?? String(cell.v), String(cell.v)];
      const iso = serialToIso(serial, false);
      return [cell.w ?? iso.replace('T', ' '), { iso }];
    }
    default: {
      const text = String(cell.v);
      if (text === '') return ['', null];
      return [cell.w ?? text, text];
    }
  }
}

function readNumber(cell: CellObject, serial: number, date1904: boolean): [string, TypedValue] {
  const code = formatOf(cell);
  const shown = shownNumber(cell, code, serial, date1904);
  // `[$-F800]` is the system long date whatever follows it: a date, typed as one.
  const format = withSystemFormats(code);
  if (!Number.isFinite(serial)) return [shown, serial];
  // `[h]:mm:ss` is elapsed time (255:10:10), not a date in January 1900.
  if (formatIsDuration(format)) return [shown, daysToDuration(serial)];
  if (!isDateFormat(format)) return [shown, serial];
  return [shown, { iso: serialToIso(serial, date1904, serial < 1 && formatIsTimeOnly(format)) }];
}

/** SheetJS's text for the cell, unless the format is one it shows differently from Excel (number-format.ts). */
function shownNumber(cell: CellObject, format: string, serial: number, date1904: boolean): string {
  const formatter = excelFormatter(format);
  let shown: string | undefined;
  try {
    shown = formatter?.(serial, date1904);
  } catch {
    // A format our formatter cannot show either keeps SheetJS's text.
  }
  return shown ?? cell.w ?? formatValue(format, serial);
}

function formatOf(cell: CellObject): string {
  if (typeof cell.z === 'string') return cell.z;
  if (typeof cell.z === 'number') return String(sheetJs().SSF.get_table()[cell.z] ?? 'General');
  return 'General';
}

export function isDateFormat(format: string): boolean {
  try {
    return format !== 'General' && Boolean(sheetJs().SSF.is_date(format));
  } catch {
    return false;
  }
}

export function formatValue(format: string, value: number): string {
  try {
    return formatNumber(format, value);
  } catch {
    // A format SheetJS cannot render still has a value worth showing.
    return String(value);
  }
}

const ERROR_TEXT: Record<number, string> = {
  0x00: '#NULL!', 0x07: '#DIV/0!', 0x0f: '#VALUE!', 0x17: '#REF!', 0x1d: '#NAME?', 0x24: '#NUM!', 0x2a: '#N/A', 0x2b: '#GETTING_DATA',
};

function errorText(code: unknown): string {
  return typeof code === 'number' ? (ERROR_TEXT[code] ?? '#ERROR!') : String(code);
}
