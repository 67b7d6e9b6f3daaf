// A write plan is what a PATCH, PUT, POST or DELETE changes: `PATCH /sheets/demo/Name/Ann` with
// `{"Age": 31}` -> the rows whose Name is Ann in `replaced`, each naming Age's column in `columns`.
// `planWrite` (plan-write.ts) decides it, `applyPlan` (apply-plan.ts) turns it into the next
// workbook, and table.ts, version.ts, row-delta.ts and column-text.ts follow it to update what they
// derive from the rows; a source that writes ranges (Google) encodes it as range writes instead.
import type { SheetRow } from './workbook.ts';

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
  /**
   * The plan depends on the rows already there even when it only appends (an upsert that found no
   * key, an increment id): a source must plan it on the tab as it is, never on a stale copy.
   */
  readonly readsRows?: true;
}

export function isEmptyPlan(plan: WritePlan): boolean {
  return plan.replaced.length === 0 && plan.removed.length === 0 && (plan.appended === null || plan.appended.rows.length === 0);
}
