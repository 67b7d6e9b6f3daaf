// The emulator's spreadsheets in memory: what `GET /v4/spreadsheets/{id}/values/Sheet1!A1:C3`
// reads and `:append` writes. A cell keeps what was entered (ExtendedValue), the cached result a
// seeded formula came with, and its number format; effective and formatted values are derived.
import { formatA1, parseA1, type GridBox } from './a1.ts';
import { badRequest, notFound } from './errors.ts';

export type Role = 'writer' | 'reader';

/** Google's ExtendedValue: exactly one field set. */
export interface ExtendedValue {
  numberValue?: number;
  stringValue?: string;
  boolValue?: boolean;
  formulaValue?: string;
  errorValue?: { type: string; message: string };
}

export interface NumberFormat {
  readonly type: string;
  readonly pattern?: string;
}

export interface Cell {
  readonly entered: ExtendedValue;
  /** A formula's result as seeded by `createSpreadsheet`; absent means "evaluate on read". */
  readonly cached?: ExtendedValue;
  readonly format?: NumberFormat;
}

export interface Sheet {
  sheetId: number;
  title: string;
  index: number;
  rowCount: number;
  columnCount: number;
  /** Sparse: rows[r][c], undefined for an empty cell or row. */
  rows: ((Cell | undefined)[] | undefined)[];
  /** Merged ranges (GridRange, end exclusive), as `sheets[].merges` gives them; moved with rows deleted or inserted. */
  merges: GridRange[];
}

export interface GridRange {
  startRowIndex: number;
  endRowIndex: number;
  startColumnIndex: number;
  endColumnIndex: number;
}

/** Rows [start, end) deleted: merges below move up, merges over them shrink, a merge left one cell goes. */
export function mergesAfterDelete(sheet: Sheet, start: number, end: number): void {
  const at = (row: number): number => (row <= start ? row : row >= end ? row - (end - start) : start);
  sheet.merges = sheet.merges.map((merge) => ({ ...merge, startRowIndex: at(merge.startRowIndex), endRowIndex: at(merge.endRowIndex) })).filter(isMerge);
}

/** `count` rows inserted before row `at`: merges below move down, a merge across it grows. */
export function mergesAfterInsert(sheet: Sheet, at: number, count: number): void {
  sheet.merges = sheet.merges.map((merge) => ({
    ...merge,
    startRowIndex: merge.startRowIndex >= at ? merge.startRowIndex + count : merge.startRowIndex,
    endRowIndex: merge.endRowIndex > at ? merge.endRowIndex + count : merge.endRowIndex,
  }));
}

function isMerge(merge: GridRange): boolean {
  return (merge.endRowIndex - merge.startRowIndex) * (merge.endColumnIndex - merge.startColumnIndex) > 1;
}

export interface Spreadsheet {
  readonly spreadsheetId: string;
  title: string;
  sheets: Sheet[];
  readonly access: Map<string, Role>;
  publicAccess: Role | null;
  /** When a write last changed it (ms since the epoch): Drive's `modifiedTime`. */
  modifiedTime: number;
}

// A new sheet in Google Sheets has 1000 rows and 26 columns.
export const DEFAULT_ROWS = 1000;
export const DEFAULT_COLUMNS = 26;

export function newSheet(sheetId: number, title: string, index: number, rows: (Cell | undefined)[][] = []): Sheet {
  // A loop, not Math.max(...rows): a spread of 200,000 rows overflows the stack.
  const width = rows.reduce((widest, row) => Math.max(widest, row.length), 0);
  return { sheetId, title, index, rowCount: Math.max(DEFAULT_ROWS, rows.length), columnCount: Math.max(DEFAULT_COLUMNS, width), rows, merges: [] };
}

export function getCell(sheet: Sheet, row: number, column: number): Cell | undefined {
  return sheet.rows[row]?.[column];
}

/** Writes (or clears, with undefined) one cell, growing the grid as Google does for writes past its edge. */
export function setCell(sheet: Sheet, row: number, column: number, cell: Cell | undefined): void {
  if (cell === undefined && sheet.rows[row] === undefined) return;
  sheet.rows[row] ??= [];
  sheet.rows[row][column] = cell;
  sheet.rowCount = Math.max(sheet.rowCount, row + 1);
  sheet.columnCount = Math.max(sheet.columnCount, column + 1);
}

/** The used area: one past the last row holding a cell, and one past the last such column. */
export function usedExtent(sheet: Sheet): { rows: number; columns: number } {
  let rows = 0;
  let columns = 0;
  sheet.rows.forEach((row, r) => {
    const last = lastFilled(row);
    if (last >= 0) {
      rows = r + 1;
      columns = Math.max(columns, last + 1);
    }
  });
  return { rows, columns };
}

function lastFilled(row: readonly (Cell | undefined)[] | undefined): number {
  if (row === undefined) return -1;
  for (let c = row.length - 1; c >= 0; c--) if (row[c] !== undefined) return c;
  return -1;
}

export interface ResolvedRange {
  readonly sheet: Sheet;
  /** The requested range with open ends filled in from the grid (not clamped to it). */
  readonly box: GridBox;
  /** Both corners were given, so a write must fit inside the box. */
  readonly bounded: boolean;
}

/** A1 text -> sheet and box; 400 "Unable to parse range" as Google answers for unknown sheets. */
export function resolveRange(spreadsheet: Spreadsheet, text: string): ResolvedRange {
  const range = parseA1(text);
  const byTitle = (title: string) => spreadsheet.sheets.find((sheet) => sheet.title === title);
  const unparsable = () => badRequest(`Unable to parse range: ${text}`);
  if (range === undefined) throw unparsable();
  const whole = range.orSheet === undefined ? undefined : byTitle(range.orSheet);
  const sheet = whole ?? (range.sheet === undefined ? firstSheet(spreadsheet) : byTitle(range.sheet));
  if (sheet === undefined) throw unparsable();
  if (whole !== undefined) return { sheet, bounded: false, box: { startRow: 0, endRow: sheet.rowCount, startColumn: 0, endColumn: sheet.columnCount } };
  return {
    sheet,
    bounded: range.bounded === true,
    box: {
      startRow: range.startRow ?? 0,
      endRow: range.endRow ?? sheet.rowCount,
      startColumn: range.startColumn ?? 0,
      endColumn: range.endColumn ?? sheet.columnCount,
    },
  };
}

function firstSheet(spreadsheet: Spreadsheet): Sheet | undefined {
  return [...spreadsheet.sheets].sort((a, b) => a.index - b.index)[0];
}

/** For reads: the box cut to the grid; 400 when it starts outside, as Google refuses such reads. */
export function clampToGrid({ sheet, box }: ResolvedRange): GridBox {
  if (box.startRow >= sheet.rowCount || box.startColumn >= sheet.columnCount) {
    throw badRequest(`Range (${formatA1(sheet.title, { ...box, endRow: box.startRow + 1, endColumn: box.startColumn + 1 })}) exceeds grid limits. Max rows: ${sheet.rowCount}, max columns: ${sheet.columnCount}`);
  }
  return { ...box, endRow: Math.min(box.endRow, sheet.rowCount), endColumn: Math.min(box.endColumn, sheet.columnCount) };
}

export function findSpreadsheet(spreadsheets: ReadonlyMap<string, Spreadsheet>, spreadsheetId: string): Spreadsheet {
  const spreadsheet = spreadsheets.get(spreadsheetId);
  if (spreadsheet === undefined) throw notFound();
  return spreadsheet;
}

/** A deep copy, so a batch can be applied to it and swapped in only when every request succeeded. */
export function cloneSpreadsheet(spreadsheet: Spreadsheet): Spreadsheet {
  return {
    ...spreadsheet,
    sheets: spreadsheet.sheets.map((sheet) => ({ ...sheet, rows: sheet.rows.map((row) => (row === undefined ? row : [...row])) })),
  };
}
