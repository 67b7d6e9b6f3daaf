// Re-applying journaled writes on a workbook that changed behind the server's back (someone
// saved it from a spreadsheet program). A write is re-applied only where it cannot clobber what
// it has not seen: the rows it replaces or removes must still hold what they held when it was
// planned; its appended rows go after whatever the tab ends with now, unless the plan chose to
// append by reading the rows (an upsert, an increment id) and the tab's length changed.
import { applyPlan, gridRowOf } from '../../../lib/apply-plan.ts';
import type { WritePlan } from '../../../lib/write-plan.ts';
import { gridRows } from '../../../lib/rows.ts';
import { tableOf } from '../../../lib/table.ts';
import type { SheetRow, Tab, TypedValue, Workbook } from '../../../lib/workbook.ts';
import type { Expected, JournalEntry } from './journal.ts';
import { keepVerbatim } from './csv/formulas.ts';
import { rememberReplacedCells, sameValue } from './write-cells.ts';

/** Data rows in a tab, counted as the engine counts them (below the header row, to the last row with a value). */
export function dataRowCount(tab: Tab): number {
  return tableOf(tab).rowCount;
}

/** What a plan's target rows hold before it is applied to `workbook`. */
export function expectationOf(workbook: Workbook, plan: WritePlan): Expected {
  const tab = workbook.tabs.find((candidate) => candidate.name === plan.tab);
  if (tab === undefined) return { dataRows: 0, rows: [] };
  const indexes = [...new Set([...plan.replaced.map((replaced) => replaced.index), ...plan.removed])].sort((a, b) => a - b);
  return { dataRows: dataRowCount(tab), rows: indexes.map((index) => [index, trimmedValues(gridRows(tab).at(gridRowOf(tab, index)))] as const) };
}

function trimmedValues(row: SheetRow | undefined): TypedValue[] {
  const values = row === undefined ? [] : row.value.slice();
  while (values.length > 0 && (values[values.length - 1] ?? null) === null) values.pop();
  return values.map((value) => value ?? null);
}

function sameRow(a: readonly TypedValue[], b: readonly TypedValue[]): boolean {
  return a.length === b.length && a.every((value, column) => sameValue(value, b[column]));
}

/**
 * The plan as it applies to `workbook` now, or null when it would overwrite or remove rows that
 * changed since it was planned (or its tab is gone).
 */
export function replan(workbook: Workbook, entry: JournalEntry): WritePlan | null {
  const { plan, expected } = entry;
  const tab = workbook.tabs.find((candidate) => candidate.name === plan.tab);
  if (tab === undefined) return null;
  for (const [index, values] of expected.rows) {
    if (!sameRow(trimmedValues(gridRows(tab).at(gridRowOf(tab, index))), values)) return null;
  }
  if (plan.appended === null) return plan;
  const shift = dataRowCount(tab) - expected.dataRows;
  // An upsert chose to append because no row held its key (an increment id, from the largest
  // there was): on a tab that has gained or lost rows since, that choice may no longer hold.
  if (plan.readsRows === true && shift !== 0) return null;
  return { ...plan, appended: { start: plan.appended.start + shift, rows: plan.appended.rows } };
}

export interface Rebased {
  readonly workbook: Workbook;
  /** The entries re-applied, each re-planned and re-checked against the new base. */
  readonly applied: readonly JournalEntry[];
  readonly conflicts: readonly JournalEntry[];
}

/** Applies each entry that still fits, in order; the ones that do not are handed back. */
export function rebase(base: Workbook, entries: readonly JournalEntry[], apply: (workbook: Workbook, plan: WritePlan) => Workbook = applyPlan): Rebased {
  let workbook = base;
  const applied: JournalEntry[] = [];
  const conflicts: JournalEntry[] = [];
  for (const entry of entries) {
    const plan = replan(workbook, entry);
    if (plan === null) {
      conflicts.push(entry);
      continue;
    }
    applied.push({ plan, expected: expectationOf(workbook, plan) });
    workbook = apply(workbook, plan);
  }
  return { workbook, applied, conflicts };
}

/** `applyPlan`, remembering which cells of a replaced row kept their source cell (format, formula). */
export function applyKeepingCells(workbook: Workbook, plan: WritePlan): Workbook {
  keepCells(workbook, plan);
  return applyPlan(workbook, plan);
}

/** Remembers, for each row a plan replaces, which cells kept their source cell (format, formula) or CSV field. */
export function keepCells(workbook: Workbook, plan: WritePlan): void {
  const tab = workbook.tabs.find((candidate) => candidate.name === plan.tab);
  if (tab === undefined) return;
  for (const replaced of plan.replaced) {
    const before = gridRows(tab).at(gridRowOf(tab, replaced.index));
    if (before === undefined) continue;
    rememberReplacedCells(before, replaced.row, replaced.columns);
    keepVerbatim(before, replaced.row, replaced.columns);
  }
}
