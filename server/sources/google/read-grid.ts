// Google's grid data -> the workbook model. One `spreadsheets.get` answer holds, per cell, the
// displayed text (formattedValue), the stored value (effectiveValue) and its number format,
// so `_raw` and plain reads come from the same request. `{numberValue: 45352.395833}` with a
// DATE_TIME format -> `{ iso: '2024-03-01T09:30:00' }`, shown as Google formatted it.
import { createInterner, type Interner, type SheetRow, type Tab, type TypedValue, type Workbook } from '../../../lib/workbook.ts';

/** The fields of `spreadsheets.get` the source needs, and no more: Google sends less, and faster. */
export const GRID_FIELDS =
  'sheets(properties(sheetId,title,index,sheetType,hidden,gridProperties(rowCount,columnCount)),merges(startRowIndex,endRowIndex),' +
  'data(startRow,startColumn,rowData(values(formattedValue,effectiveValue,effectiveFormat(numberFormat(type))))))';

/** The tabs without their cells: which is first, writes' sheet ids, and each grid's size. */
export const METADATA_FIELDS = 'sheets(properties(sheetId,title,index,sheetType,hidden,gridProperties(rowCount,columnCount)))';

/** The parts of Google's Spreadsheet resource read here (a subset of sheets_v4.Schema$Spreadsheet). */
export interface GoogleSpreadsheet {
  readonly sheets?: readonly GoogleSheet[] | null;
}

interface GoogleSheet {
  readonly properties?: {
    readonly sheetId?: number | null;
    readonly title?: string | null;
    readonly index?: number | null;
    readonly sheetType?: string | null;
    readonly hidden?: boolean | null;
    readonly gridProperties?: { readonly rowCount?: number | null; readonly columnCount?: number | null } | null;
  } | null;
  readonly data?: readonly GoogleGridData[] | null;
  /** Merged ranges; Google leaves out an index that is 0. */
  readonly merges?: readonly { readonly startRowIndex?: number | null; readonly endRowIndex?: number | null }[] | null;
}

interface GoogleGridData {
  readonly startRow?: number | null;
  readonly startColumn?: number | null;
  readonly rowData?: readonly { readonly values?: readonly (GoogleCell | null)[] | null }[] | null;
}

export interface GoogleCell {
  readonly formattedValue?: string | null;
  readonly effectiveValue?: { readonly numberValue?: number | null; readonly stringValue?: string | null; readonly boolValue?: boolean | null; readonly errorValue?: { readonly type?: string | null } | null } | null;
  readonly effectiveFormat?: { readonly numberFormat?: { readonly type?: string | null } | null } | null;
  readonly userEnteredValue?: { readonly formulaValue?: string | null } | null;
}

/** A workbook as read, with what writes need to address each tab. */
export interface ReadSpreadsheet {
  readonly workbook: Workbook;
  /** Tab name -> Google's numeric sheetId (deleteDimension addresses rows by sheetId). */
  readonly sheetIds: ReadonlyMap<string, number>;
}

export function readSpreadsheet(spreadsheet: GoogleSpreadsheet): ReadSpreadsheet {
  const interner = createInterner();
  const sheets = (spreadsheet.sheets ?? [])
    // Chart sheets and data-source sheets hold no grid: they are not tabs of rows.
    .filter((sheet) => (sheet.properties?.sheetType ?? 'GRID') === 'GRID')
    .slice()
    .sort((a, b) => (a.properties?.index ?? 0) - (b.properties?.index ?? 0));
  const tabs: Tab[] = [];
  const sheetIds = new Map<string, number>();
  for (const sheet of sheets) {
    const name = sheet.properties?.title ?? '';
    sheetIds.set(name, sheet.properties?.sheetId ?? 0);
    const rows = withMergesDown(readRows(sheet.data ?? [], interner), sheet.merges ?? []);
    // Google has one kind of hidden sheet (Excel's very hidden has no counterpart).
    tabs.push(sheet.properties?.hidden === true ? { name, rows, visibility: 'hidden' } : { name, rows });
  }
  return { workbook: { tabs }, sheetIds };
}

/**
 * Each grid tab's size as Google gives it (rows x columns of the grid, filled or not: a new
 * Google tab is 1,000 x 26): an upper bound of the cells a read of the tab can bring.
 */
export function gridCells(spreadsheet: GoogleSpreadsheet): Map<string, number> {
  const cells = new Map<string, number>();
  for (const sheet of spreadsheet.sheets ?? []) {
    const properties = sheet.properties;
    if ((properties?.sheetType ?? 'GRID') !== 'GRID') continue;
    cells.set(properties?.title ?? '', (properties?.gridProperties?.rowCount ?? 0) * (properties?.gridProperties?.columnCount ?? 0));
  }
  return cells;
}

/**
 * Marks each row where a merge starts that spans rows below it (`A1:A3`: 2), so the header block
 * (lib/workbook.ts `headerBlock`) reaches below headers merged down, as in the file source.
 */
function withMergesDown(rows: SheetRow[], merges: NonNullable<GoogleSheet['merges']>): SheetRow[] {
  for (const merge of merges) {
    const start = merge.startRowIndex ?? 0;
    const down = (merge.endRowIndex ?? 0) - start - 1;
    const row = rows[start];
    if (row === undefined || down <= 0 || (row.mergedDown ?? 0) >= down) continue;
    rows[start] = { ...row, mergedDown: down };
  }
  return rows;
}

function readRows(grids: readonly GoogleGridData[], interner: Interner): SheetRow[] {
  return readRowsInto([], grids, interner);
}

/**
 * One page of a tab read in pages (`ranges='People'!10001:60000`): its rows go into `rows` at
 * their places (each grid says where it starts), so the page's JSON can go before the next one
 * is read. Answers the tab's properties as the page gave them.
 */
export function readPage(rows: SheetRow[], page: GoogleSpreadsheet, name: string, interner: Interner): { sheetId: number; hidden: boolean; rowCount: number } | null {
  const sheet = (page.sheets ?? []).find((candidate) => (candidate.properties?.title ?? '') === name);
  if (sheet === undefined) return null;
  readRowsInto(rows, sheet.data ?? [], interner);
  withMergesDown(rows, sheet.merges ?? []);
  const properties = sheet.properties;
  return { sheetId: properties?.sheetId ?? 0, hidden: properties?.hidden === true, rowCount: properties?.gridProperties?.rowCount ?? 0 };
}

function readRowsInto(rows: SheetRow[], grids: readonly GoogleGridData[], interner: Interner): SheetRow[] {
  for (const grid of grids) {
    const startRow = grid.startRow ?? 0;
    const startColumn = grid.startColumn ?? 0;
    // Google leaves trailing empty rows and cells out: a short or missing row is simply empty.
    (grid.rowData ?? []).forEach((rowData, offset) => {
      const cells = rowData?.values ?? [];
      const text: string[] = new Array(startColumn).fill('');
      const value: TypedValue[] = new Array(startColumn).fill(null);
      for (const cell of cells) {
        const read = readCell(cell ?? {}, interner);
        text.push(read.text);
        value.push(read.value);
      }
      trimTrailingEmpty(text, value);
      while (rows.length < startRow + offset) rows.push({ text: [], value: [] });
      rows[startRow + offset] = { text, value };
    });
  }
  return rows;
}

export function readCell(cell: GoogleCell, interner: Interner): { text: string; value: TypedValue } {
  const effective = cell.effectiveValue;
  const text = interner.text(cell.formattedValue ?? '');
  if (effective === null || effective === undefined) return { text, value: null };
  if (typeof effective.numberValue === 'number') {
    const type = cell.effectiveFormat?.numberFormat?.type;
    if (type === 'DATE' || type === 'DATE_TIME' || type === 'TIME') {
      return { text, value: interner.date(serialToIso(effective.numberValue, type === 'TIME')) };
    }
    return { text, value: effective.numberValue };
  }
  if (typeof effective.boolValue === 'boolean') return { text, value: effective.boolValue };
  if (typeof effective.stringValue === 'string') return { text, value: effective.stringValue === '' ? null : interner.text(effective.stringValue) };
  // An error value (#DIV/0!, #REF!) has no typed value but what it shows.
  return { text, value: text === '' ? null : text };
}

function trimTrailingEmpty(text: string[], value: TypedValue[]): void {
  while (text.length > 0 && text[text.length - 1] === '' && value[value.length - 1] === null) {
    text.pop();
    value.pop();
  }
}

const MS_PER_DAY = 86_400_000;
/** Google counts days from 1899-12-30, with no 1900 leap-year bug: serial 25569 is 1970-01-01. */
const UNIX_EPOCH_SERIAL = 25_569;

/** `45352.395833...` -> `2024-03-01T09:30:00`; a date without time -> `2024-03-01`; TIME -> `09:30:00`. No time zone: sheets have none. */
export function serialToIso(serial: number, timeOnly = false): string {
  const at = new Date(Math.round((serial - UNIX_EPOCH_SERIAL) * MS_PER_DAY));
  const date = `${pad(at.getUTCFullYear(), 4)}-${pad(at.getUTCMonth() + 1, 2)}-${pad(at.getUTCDate(), 2)}`;
  const millis = at.getUTCMilliseconds();
  const time = `${pad(at.getUTCHours(), 2)}:${pad(at.getUTCMinutes(), 2)}:${pad(at.getUTCSeconds(), 2)}${millis === 0 ? '' : `.${pad(millis, 3).replace(/0+$/, '')}`}`;
  if (timeOnly) return time;
  return time === '00:00:00' ? date : `${date}T${time}`;
}

/** `2024-03-01T09:30:00` -> 45352.395833...; the inverse of serialToIso for dates and date-times. */
export function isoToSerial(iso: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?$/.exec(iso);
  if (match === null) return null;
  const [, year, month, day, hours = '0', minutes = '0', seconds = '0', fraction = ''] = match;
  const ms = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hours), Number(minutes), Number(seconds)) + Math.round(Number(`0${fraction}`) * 1000);
  return ms / MS_PER_DAY + UNIX_EPOCH_SERIAL;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, '0');
}
