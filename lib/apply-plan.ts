// `applyPlan` turns a write plan (write-plan.ts), decided by `planWrite` against the rows as they
// are when the write is applied, into the next workbook; a source that writes ranges (Google)
// turns the same plan into range writes instead.
import { deriveTable } from './table.ts';
import { deriveVersion } from './version.ts';
import { gridRows, headerRowOf, tabWithRows } from './rows.ts';
import type { SheetRow, Tab, Workbook } from './workbook.ts';
import type { WritePlan } from './write-plan.ts';

/**
 * The header row is row 1, so data row n is sheet row n + 2 (1-based), grid row n + 1 (0-based);
 * in a tab starting with empty rows, `headerRow` (`headerRowIndex`) rows lower.
 */
export function dataRowToSheetRow(index: number, headerRow = 0): number {
  return index + headerRow + 2;
}

/** Where data row `index` of a tab is in its rows (0-based grid row). */
export function gridRowOf(tab: Tab, index: number): number {
  return headerRowOf(gridRows(tab)) + 1 + index;
}

/**
 * Applies a plan to a tab, returning a new tab; the old one is left as it was. Its cost follows
 * the plan, not the tab: the new tab shares every chunk of rows the plan leaves alone (rows.ts).
 */
export function applyPlanToTab(tab: Tab, plan: WritePlan): Tab {
  const before = gridRows(tab);
  const rows = before.edit();
  const firstDataRow = headerRowOf(before) + 1;
  for (const { index, row } of plan.replaced) rows.set(firstDataRow + index, row);
  if (plan.removed.length > 0) rows.remove(plan.removed.map((index) => firstDataRow + index));
  if (plan.appended !== null) {
    let position = firstDataRow + plan.appended.start;
    while (rows.length < position) rows.push({ text: [], value: [] });
    // Rows below the table are empty up to the last header, but may hold cells right of it:
    // an appended row takes such a row's place and keeps those cells.
    for (const row of plan.appended.rows) {
      if (position < rows.length) rows.set(position, keepCellsBeyond(row, rows.at(position)!));
      else rows.push(row);
      position++;
    }
  }
  const next = tabWithRows(tab.name, rows.done(), tab.visibility);
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
