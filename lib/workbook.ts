// The workbook model: tabs in order, each a grid of sheet rows; a cell is the text the
// spreadsheet displays plus its typed value. Sources build it, the engine reads it and
// `applyPlan` (plan.ts) derives the next one. Nothing here mutates a tab in place, so a
// read in flight keeps the snapshot it started with.

/** A date or date-time cell's value: ISO 8601 without a time zone (`2024-03-01`, `2024-03-01T09:30:00`). */
export interface SheetDate {
  readonly iso: string;
}

/** The stored value of a cell: what `_raw=1` answers (a SheetDate answers its `iso`). */
export type TypedValue = string | number | boolean | SheetDate | null;

/**
 * One row of the sheet. The arrays are indexed by sheet column (0 is column A) and may be
 * shorter than the header row: a missing cell is empty. `text[c]` is what the spreadsheet
 * displays ('' when empty), `value[c]` the stored value (null when empty).
 */
export interface SheetRow {
  readonly text: readonly string[];
  readonly value: readonly TypedValue[];
  /** The formula of each cell written as one (only where the connection allows formulas). */
  readonly formula?: readonly (string | undefined)[];
  /**
   * How many rows below this one a merged cell starting in it reaches (a merge over A1:A3 on
   * row 1: 2); absent when none does. Sources set it, so that the header block
   * (`headerBlock`) is found from the rows alone.
   */
  readonly mergedDown?: number;
}

export interface Tab {
  readonly name: string;
  /** Every row of the sheet from row 1; trailing empty rows may be present. */
  readonly rows: readonly SheetRow[];
  /** A tab the spreadsheet hides: `hidden` (the user can show it) or `veryHidden` (only a macro can). */
  readonly visibility?: TabVisibility;
}

export type TabVisibility = 'hidden' | 'veryHidden';

export interface Workbook {
  readonly tabs: readonly Tab[];
}

export const EMPTY_ROW: SheetRow = Object.freeze({ text: Object.freeze([]), value: Object.freeze([]) });

export function isSheetDate(value: TypedValue | undefined): value is SheetDate {
  return typeof value === 'object' && value !== null;
}

export function sheetDate(iso: string): SheetDate {
  return { iso };
}

export function cellText(row: SheetRow, column: number): string {
  return row.text[column] ?? '';
}

export function cellValue(row: SheetRow, column: number): TypedValue {
  return row.value[column] ?? null;
}

export function isEmptyCell(row: SheetRow, column: number): boolean {
  return cellText(row, column) === '' && cellValue(row, column) === null;
}

/** Rows read by index: a tab's array, or its chunks as a write keeps them (lib/rows.ts). */
export interface RowList {
  readonly length: number;
  at(index: number): SheetRow | undefined;
}

/**
 * The header block of a tab, as indexes into its rows: `first` names the columns, data starts
 * below `last`. `first` is row 1 (index 0), or when a tab starts with empty rows, the first row
 * holding any text (a table placed lower down, as people do); 0 for a tab with no text at all.
 * The block runs down as far as the merged cells of its rows reach: a header `Name` merged over
 * rows 1-2 makes rows 1-2 the block, so data row 0 is row 3, never a cell the merge covers
 * (where a write would be invisible in every spreadsheet program).
 */
export function headerBlock(rows: RowList): { readonly first: number; readonly last: number } {
  let first = 0;
  for (let index = 0; index < rows.length; index++) {
    if (rows.at(index)!.text.some((text) => text.trim() !== '')) {
      first = index;
      break;
    }
  }
  let last = first;
  // A merge starting lower in the block (a sub-header over rows 2-3) stretches it further.
  for (let index = first; index <= last && index < rows.length; index++) last = Math.max(last, index + (rows.at(index)!.mergedDown ?? 0));
  return { first, last };
}

/**
 * The last row of the header block (`headerBlock`), as an index into its rows: row 1 (index 0)
 * for most tabs. Data row n is `rows[headerRowIndex(rows) + 1 + n]`.
 */
export function headerRowIndex(rows: RowList): number {
  return headerBlock(rows).last;
}

/** True when any cell before `width` holds something; cells right of the last header do not count. */
export function rowHasValue(row: SheetRow, width: number): boolean {
  const end = Math.min(width, Math.max(row.text.length, row.value.length));
  for (let column = 0; column < end; column++) {
    if (!isEmptyCell(row, column)) return true;
  }
  return false;
}

/**
 * Shares equal short texts and equal dates between the cells of a workbook being built, as a
 * source reads it: a column of ages or dates then holds a few dozen strings instead of one per
 * row. Values are immutable, so sharing them is invisible to every reader.
 */
export interface Interner {
  text(text: string): string;
  date(iso: string): SheetDate;
}

/** Texts longer than this are rarely repeated (names, notes) and are kept as they come. */
const INTERNED_TEXT_LENGTH = 24;
/** A bound, so that a tab of distinct values cannot grow the tables without limit. */
const INTERNED_ENTRIES = 65_536;

export function createInterner(): Interner {
  const texts = new Map<string, string>();
  const dates = new Map<string, SheetDate>();
  return {
    text(text) {
      if (text.length > INTERNED_TEXT_LENGTH) return text;
      const shared = texts.get(text);
      if (shared !== undefined) return shared;
      if (texts.size < INTERNED_ENTRIES) texts.set(text, text);
      return text;
    },
    date(iso) {
      let date = dates.get(iso);
      if (date === undefined) {
        date = sheetDate(iso);
        if (dates.size < INTERNED_ENTRIES) dates.set(iso, date);
      }
      return date;
    },
  };
}
