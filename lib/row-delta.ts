// After POST /sheets/demo (one row appended) the tab is a new object, but all its other rows are
// the rows of the tab before. A row delta says how the data rows of an older version of a tab
// (the origin, whose column indexes were built) map onto the rows of a later version, so those
// indexes keep answering after writes: an index lists origin rows, the delta turns them into
// rows of now, and the rows a write touched since are checked directly.
import type { WritePlan } from './write-plan.ts';

export interface RowDelta {
  /** Data rows of the origin in this version (rows the origin counted, before any write). */
  readonly originRows: number;
  /** Origin rows deleted since, ascending. Rows below a deleted row move up. */
  readonly removed: readonly number[];
  /** Origin rows (not deleted) whose cells changed since, ascending: the origin's index is wrong for them. */
  readonly stale: readonly number[];
  /** Rows of this version that are not an unchanged origin row (written, appended), ascending. */
  readonly fresh: readonly number[];
}

export function emptyDelta(originRows: number): RowDelta {
  return { originRows, removed: [], stale: [], fresh: [] };
}

/** How many rows a delta names; past a limit the indexes are rebuilt rather than patched. */
export function deltaSize(delta: RowDelta): number {
  return delta.removed.length + delta.stale.length + delta.fresh.length;
}

/** The delta after one more write: `plan` applied to the version `delta` describes, giving a tab of `rowCount` data rows. */
export function composeDelta(delta: RowDelta, plan: WritePlan, rowCount: number): RowDelta {
  const removed = delta.removed.slice();
  const stale = delta.stale.slice();
  let fresh = delta.fresh.slice();
  const touch = (row: number): void => {
    if (hasSorted(fresh, row)) return;
    const origin = originRowAt(delta.originRows, removed, row);
    if (origin !== null) insertSorted(stale, origin);
    insertSorted(fresh, row);
  };
  // In the order applyPlanToTab applies a plan: cells replaced, rows removed, rows appended.
  for (const { index } of plan.replaced) touch(index);
  if (plan.removed.length > 0) {
    // A removed row's place was an origin row's (changed or not) or a row added past them.
    const origins = plan.removed.map((row) => originRowAt(delta.originRows, removed, row));
    for (const origin of origins) {
      if (origin === null) continue;
      insertSorted(removed, origin);
      removeSorted(stale, origin);
    }
    const gone = new Set(plan.removed);
    fresh = fresh.filter((row) => !gone.has(row)).map((row) => row - countBelow(plan.removed, row));
  }
  if (plan.appended !== null) {
    for (let row = plan.appended.start; row < plan.appended.start + plan.appended.rows.length; row++) touch(row);
  }
  // Every data row is an origin row or a fresh one: rows past the origin's (blank rows an append
  // stepped over) are fresh; fresh rows past the end are no rows at all.
  for (let row = delta.originRows - removed.length; row < rowCount; row++) if (!hasSorted(fresh, row)) insertSorted(fresh, row);
  while (fresh.length > 0 && fresh[fresh.length - 1] >= rowCount) fresh.pop();
  return { originRows: delta.originRows, removed, stale, fresh };
}

/**
 * The rows of this version that `keep` accepts among `originRows` (an index's ascending list of
 * origin rows, or null for every origin row), each asked with its origin row, and among the
 * fresh rows (asked with -1), ascending.
 */
export function deltaRows(delta: RowDelta, originRows: readonly number[] | null, rowCount: number, keep: (row: number, origin: number) => boolean): number[] {
  const { removed, stale, fresh } = delta;
  const rows: number[] = [];
  const count = originRows === null ? delta.originRows : originRows.length;
  let r = 0;
  let s = 0;
  let f = 0;
  for (let k = 0; k < count; k++) {
    const origin = originRows === null ? k : originRows[k];
    while (r < removed.length && removed[r] < origin) r++;
    if (r < removed.length && removed[r] === origin) continue;
    while (s < stale.length && stale[s] < origin) s++;
    if (s < stale.length && stale[s] === origin) continue;
    const row = origin - r;
    if (row >= rowCount) break;
    for (; f < fresh.length && fresh[f] < row; f++) if (keep(fresh[f], -1)) rows.push(fresh[f]);
    if (keep(row, origin)) rows.push(row);
  }
  for (; f < fresh.length && fresh[f] < rowCount; f++) if (keep(fresh[f], -1)) rows.push(fresh[f]);
  return rows;
}

/**
 * A per-row array of this version from the origin's (`origin[i]` for origin row i): unchanged
 * rows are copied in runs (slice and concat copy fast), fresh rows computed by `compute`.
 */
export function carryRows<T>(delta: RowDelta, origin: readonly T[], rowCount: number, compute: (row: number) => T): T[] {
  let rows: T[];
  if (delta.removed.length === 0) rows = origin.slice(0, rowCount);
  else {
    const runs: T[][] = [];
    let from = 0;
    for (const gone of delta.removed) {
      runs.push(origin.slice(from, gone));
      from = gone + 1;
    }
    runs.push(origin.slice(from));
    rows = ([] as T[]).concat(...runs);
    if (rows.length > rowCount) rows.length = rowCount;
  }
  // A stale origin row sits where a fresh row is: the fresh row wins.
  for (const row of delta.fresh) {
    if (row >= rowCount) break;
    while (rows.length < row) rows.push(compute(rows.length));
    rows[row] = compute(row);
  }
  while (rows.length < rowCount) rows.push(compute(rows.length));
  return rows;
}

/** The origin row at `row` of this version (removed rows skipped), or null past the origin's rows. */
function originRowAt(originRows: number, removed: readonly number[], row: number): number | null {
  let origin = row;
  for (const gone of removed) {
    if (gone <= origin) origin++;
    else break;
  }
  return origin < originRows ? origin : null;
}

function lowerBound(sorted: readonly number[], value: number): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (sorted[middle] < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

function countBelow(sorted: readonly number[], value: number): number {
  return lowerBound(sorted, value);
}

function hasSorted(sorted: readonly number[], value: number): boolean {
  const at = lowerBound(sorted, value);
  return at < sorted.length && sorted[at] === value;
}

function insertSorted(sorted: number[], value: number): void {
  const at = lowerBound(sorted, value);
  if (sorted[at] !== value) sorted.splice(at, 0, value);
}

function removeSorted(sorted: number[], value: number): void {
  const at = lowerBound(sorted, value);
  if (sorted[at] === value) sorted.splice(at, 1);
}
