// Reading and writing a range's values, shared by every values.* method:
// `GET .../values/Sheet1!A1:D` -> {"range": "Sheet1!A1:D1000", "majorDimension": "ROWS", "values": [...]}
// with trailing empty rows and cells left out, as the ValueRange reference documents.
import { columnLetters, formatA1, type GridBox } from './a1.ts';
import { badRequest } from './errors.ts';
import type { Dimension, ReadOptions } from './options.ts';
import { SheetReader } from './render.ts';
import { clampToGrid, getCell, mergesAfterInsert, setCell, usedExtent, type ResolvedRange, type Sheet } from './store.ts';
import { cellFromInput, type InputValue, type ValueInputOption } from './user-entered.ts';

export interface ValueRange {
  range: string;
  majorDimension: Dimension;
  values?: (string | number | boolean)[][];
}

export interface UpdateValuesResponse {
  spreadsheetId: string;
  updatedRange: string;
  updatedRows: number;
  updatedColumns: number;
  updatedCells: number;
  updatedData?: ValueRange;
}

export function readValues(resolved: ResolvedRange, options: ReadOptions): ValueRange {
  const box = clampToGrid(resolved);
  const { sheet } = resolved;
  const reader = new SheetReader(sheet);
  const used = usedExtent(sheet);
  // Cells past the used area are empty, so the grid is built only up to it.
  const rows: (string | number | boolean | undefined)[][] = [];
  for (let r = box.startRow; r < Math.min(box.endRow, used.rows); r++) {
    const row: (string | number | boolean | undefined)[] = [];
    for (let c = box.startColumn; c < Math.min(box.endColumn, used.columns); c++) {
      row.push(getCell(sheet, r, c) === undefined ? undefined : reader.render(r, c, options.valueRenderOption, options.dateTimeRenderOption));
    }
    rows.push(row);
  }
  const major = options.majorDimension === 'COLUMNS' ? transpose(rows) : rows;
  const values = trimTrailing(major);
  const range = formatA1(sheet.title, box);
  return values.length === 0 ? { range, majorDimension: options.majorDimension } : { range, majorDimension: options.majorDimension, values };
}

/** Drops empty cells at the end of each line and empty lines at the end; inner gaps read as "". */
function trimTrailing(lines: readonly (readonly (string | number | boolean | undefined)[])[]): (string | number | boolean)[][] {
  const trimmed = lines.map((line) => {
    let end = line.length;
    while (end > 0 && line[end - 1] === undefined) end--;
    return line.slice(0, end).map((value) => value ?? '');
  });
  while (trimmed.length > 0 && trimmed[trimmed.length - 1].length === 0) trimmed.pop();
  return trimmed;
}

function transpose<T>(rows: readonly (readonly (T | undefined)[])[]): (T | undefined)[][] {
  // A loop, not Math.max(...rows): a spread of 200,000 rows overflows the stack.
  const width = rows.reduce((widest, row) => Math.max(widest, row.length), 0);
  return Array.from({ length: width }, (_, c) => rows.map((row) => row[c]));
}

export type WriteValue = InputValue | null;

/** The most characters one cell holds (Sheets' documented limit). */
export const MAX_CELL_CHARACTERS = 50_000;

/** The body's `values` checked: arrays of arrays of bool, string, double or null. */
export function checkValues(values: unknown, where = 'values'): WriteValue[][] {
  if (values === undefined) return [];
  if (!Array.isArray(values)) throw badRequest(`Invalid value at '${where}': expected a list of lists`);
  return values.map((line, i) => {
    if (!Array.isArray(line)) throw badRequest(`Invalid value at '${where}[${i}]': expected a list`);
    return line.map((value, j) => {
      // Google's documented limit: 50,000 characters in one cell; the whole request is refused.
      if (typeof value === 'string' && value.length > MAX_CELL_CHARACTERS) throw badRequest(`Your input contains more than the maximum of ${MAX_CELL_CHARACTERS} characters in a single cell.`);
      if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
      if (typeof value === 'number' && Number.isFinite(value)) return value;
      throw badRequest(`Invalid value at '${where}[${i}][${j}]': only bool, string, double and null are allowed`);
    });
  });
}

/** Rows of input, whatever the body's majorDimension. */
export function inputRows(values: WriteValue[][], majorDimension: Dimension): WriteValue[][] {
  return majorDimension === 'COLUMNS' ? transpose(values).map((row) => row.map((value) => value ?? null)) : values;
}

/**
 * Writes rows at the range's top-left. null skips a cell and "" clears it, as documented for
 * ValueRange.values. A bounded range refuses values that would spill out of it.
 */
export function writeRows(spreadsheetId: string, { sheet, box }: ResolvedRange, rows: WriteValue[][], option: ValueInputOption, bounded: boolean): UpdateValuesResponse {
  // A loop, not Math.max(...rows): a spread of 200,000 rows overflows the stack.
  const width = rows.reduce((widest, row) => Math.max(widest, row.length), 0);
  if (bounded && rows.length > box.endRow - box.startRow) {
    throw badRequest(`Requested writing within range [${formatA1(sheet.title, box)}], but tried writing to row [${box.startRow + rows.length}]`);
  }
  if (bounded && width > box.endColumn - box.startColumn) {
    throw badRequest(`Requested writing within range [${formatA1(sheet.title, box)}], but tried writing to column [${columnLetters(box.startColumn + width - 1)}]`);
  }
  let cells = 0;
  const touchedRows = new Set<number>();
  const touchedColumns = new Set<number>();
  rows.forEach((row, i) =>
    row.forEach((value, j) => {
      if (value === null) return;
      const [r, c] = [box.startRow + i, box.startColumn + j];
      setCell(sheet, r, c, cellFromInput(value, option, getCell(sheet, r, c)));
      cells++;
      touchedRows.add(r);
      touchedColumns.add(c);
    }),
  );
  const written: GridBox = { startRow: box.startRow, endRow: box.startRow + Math.max(rows.length, 1), startColumn: box.startColumn, endColumn: box.startColumn + Math.max(width, 1) };
  return { spreadsheetId, updatedRange: formatA1(sheet.title, written), updatedRows: touchedRows.size, updatedColumns: touchedColumns.size, updatedCells: cells };
}

/**
 * The "table" values.append extends: from the first non-empty cell inside the range, the block of
 * cells connected to it (sideways, up, down or diagonally) by non-empty cells, the way a
 * spreadsheet finds the current region. A fully empty row or column ends it, so data below a
 * gap is a different table. Undefined when the range holds no data.
 */
export function findTable(sheet: Sheet, box: GridBox): GridBox | undefined {
  const used = usedExtent(sheet);
  const filled = (r: number, c: number) => r >= 0 && c >= 0 && getCell(sheet, r, c) !== undefined;
  let seed: { r: number; c: number } | undefined;
  for (let r = box.startRow; r < Math.min(box.endRow, used.rows) && seed === undefined; r++) {
    for (let c = box.startColumn; c < Math.min(box.endColumn, used.columns); c++) {
      if (filled(r, c)) {
        seed = { r, c };
        break;
      }
    }
  }
  if (seed === undefined) return undefined;
  let [top, bottom, left, right] = [seed.r, seed.r + 1, seed.c, seed.c + 1];
  const rowHas = (r: number) => Array.from({ length: right - left + 2 }, (_, k) => left - 1 + k).some((c) => filled(r, c));
  const columnHas = (c: number) => Array.from({ length: bottom - top + 2 }, (_, k) => top - 1 + k).some((r) => filled(r, c));
  for (let grown = true; grown; ) {
    grown = false;
    if (top > 0 && rowHas(top - 1)) [top, grown] = [top - 1, true];
    if (bottom < used.rows && rowHas(bottom)) [bottom, grown] = [bottom + 1, true];
    if (left > 0 && columnHas(left - 1)) [left, grown] = [left - 1, true];
    if (right < used.columns && columnHas(right)) [right, grown] = [right + 1, true];
  }
  return { startRow: top, endRow: bottom, startColumn: left, endColumn: right };
}

/** Inserts empty rows before `at`, shifting the rows below down (INSERT_ROWS, insertDimension). */
export function insertRows(sheet: Sheet, at: number, count: number): void {
  if (at < sheet.rows.length) sheet.rows.splice(at, 0, ...new Array<undefined>(count));
  sheet.rowCount += count;
  mergesAfterInsert(sheet, at, count);
}
