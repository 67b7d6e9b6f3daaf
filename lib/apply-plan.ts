// A write plan is what a PATCH, PUT, POST or DELETE changes, decided by `planWrite` against the
// rows as they are when the write is applied. `applyPlan` turns it into the next workbook;
// a source that writes ranges (Google) turns the same plan into range writes instead.
import { deriveTable } from './table.ts';
import { deriveVersion } from './version.ts';
import { headerRowIndex, type SheetRow, type Tab, type Workbook } from './workbook.ts';

export interface ReplacedRow {
  /** Zero-based data-row index (sheet row index + 2 when the header row is row 1). */
  readonly index: number;
  /** The whole new row, hidden columns and cells right of the headers carried over unchanged. */
  readonly row: SheetRow;
  /** The sheet columns the write sets (every visible column for PUT, the body's for PATCH). */
  readonly columns: readonly number[];
}

export interface WritePlan {
  readonly tab: string;
  /** Rows whose cells change, ascending by index. */
  readonly replaced: readonly ReplacedRow[];
  /** Data-row indexes to remove, ascending, as they are before the write; rows below move up. */
  readonly removed: readonly number[];
  /** Rows added after the last data row; `start` is the data-row index of the first one. */
  readonly appended: { readonly start: number; readonly rows: readonly SheetRow[] } | null;
}

/**
 * The header row is row 1, so data row n is sheet row n + 2 (1-based), grid row n + 1 (0-based);
 * in a tab starting with empty rows, `headerRow` (`headerRowIndex`) rows lower.
 */
export function dataRowToSheetRow(index: number, headerRow = 0): number {
  return index + headerRow + 2;
}

/** Where data row `index` of a tab is in its rows (0-based grid row). */
export function gridRowOf(tab: Tab, index: number): number {
  return headerRowIndex(tab.rows) + 1 + index;
}

export function isEmptyPlan(plan: WritePlan): boolean {
  return plan.replaced.length === 0 && plan.removed.length === 0 && (plan.appended === null || plan.appended.rows.length === 0);
}

/** Applies a plan to a tab, returning a new tab; the old one is left as it was. */
export function applyPlanToTab(tab: Tab, plan: WritePlan): Tab {
  const rows: SheetRow[] = tab.rows.slice();
  const firstDataRow = headerRowIndex(tab.rows) + 1;
  for (const { index, row } of plan.replaced) rows[firstDataRow + index] = row;
  if (plan.removed.length > 0) {
    const removed = new Set(plan.removed.map((index) => firstDataRow + index));
    let kept = 0;
    for (let position = 0; position < rows.length; position++) {
      if (!removed.has(position)) rows[kept++] = rows[position];
    }
    rows.length = kept;
  }
  if (plan.appended !== null) {
    let position = firstDataRow + plan.appended.start;
    while (rows.length < position) rows.push({ text: [], value: [] });
    // Rows below the table are empty up to the last header, but may hold cells right of it:
    // an appended row takes such a row's place and keeps those cells.
    for (const row of plan.appended.rows) {
      rows[position] = position < rows.length ? keepCellsBeyond(row, rows[position]) : row;
      position++;
    }
  }
  const next: Tab = tab.visibility === undefined ? { name: tab.name, rows } : { name: tab.name, rows, visibility: tab.visibility };
  // The next tab's table starts from this one's column indexes rather than from nothing.
  deriveTable(tab, next, plan);
  deriveVersion(tab, next, plan);
  return next;
}

/** Applies a plan to the workbook it was planned against, returning the next workbook. */
export function applyPlan(workbook: Workbook, plan: WritePlan): Workbook {
  return {
    tabs: workbook.tabs.map((tab) => (tab.name === plan.tab ? applyPlanToTab(tab, plan) : tab)),
  };
}

function keepCellsBeyond(row: SheetRow, below: SheetRow): SheetRow {
  if (below.text.length <= row.text.length && below.value.length <= row.value.length) return row;
  const text = [...row.text, ...below.text.slice(row.text.length)];
  const value = [...row.value, ...below.value.slice(row.value.length)];
  while (text.length < value.length) text.push('');
  while (value.length < text.length) value.push(null);
  return row.formula === undefined ? { text, value } : { text, value, formula: row.formula };
}
