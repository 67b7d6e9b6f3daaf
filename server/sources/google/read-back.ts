// A segment whose answer was lost (a timeout, a reset connection, a 5xx after sending) may or
// may not have been applied. The tab is read again and compared: with what it would be had the
// segment landed (`after`), and with what it was before (`before`). Only a segment shown not to
// have landed is sent again; one that landed is answered as written; anything else (the tab
// changed in a way neither explains: someone else wrote meanwhile) is answered 503 "may or may
// not", never sent blindly a second time.
// 40 appended rows, the answer lost: the fresh read holds them from the expected row on ->
// 'applied'; it ends where they would start -> 'absent', send again.
import { headerRowIndex, type SheetRow, type Tab } from '../../../lib/workbook.ts';
import type { PlannedStep, SegmentKind } from './segments.ts';

export type Landing = 'applied' | 'absent' | 'unknown';

export function landing(kind: SegmentKind, steps: readonly PlannedStep[], before: Tab | undefined, after: Tab | undefined, now: Tab | undefined): Landing {
  if (before === undefined || after === undefined || now === undefined) return 'unknown';
  if (kind === 'append') return appendLanding(steps, before, now);
  if (kind === 'values') return valuesLanding(steps, before, after, now);
  if (kind === 'delete' || kind === 'cells') {
    if (sameRows(dataRows(now), dataRows(after))) return 'applied';
    return sameRows(dataRows(now), dataRows(before)) ? 'absent' : 'unknown';
  }
  return 'unknown';
}

/**
 * The appended rows as one block at (or, when someone appended meanwhile, below) where they were
 * to go: applied. Not there, and the rows above that place as they were: absent. Else unknown.
 */
function appendLanding(steps: readonly PlannedStep[], before: Tab, now: Tab): Landing {
  const block = steps.flatMap((step) => step.plan.appended?.rows ?? []);
  const first = steps[0].plan.appended;
  if (first === null || block.length === 0) return 'unknown';
  const headerRow = headerRowIndex(before.rows);
  const start = headerRow + 1 + first.start;
  for (let at = start; at + block.length <= now.rows.length; at++) {
    if (block.every((row, i) => sameRow(now.rows[at + i], row))) return 'applied';
  }
  const above = (rows: readonly SheetRow[]) => rows.slice(0, start);
  return sameRows(above(now.rows), above(before.rows)) ? 'absent' : 'unknown';
}

function valuesLanding(steps: readonly PlannedStep[], before: Tab, after: Tab, now: Tab): Landing {
  const headerRow = headerRowIndex(before.rows);
  const cells = steps.flatMap((step) => step.plan.replaced.flatMap(({ index, columns }) => columns.map((column) => [headerRow + 1 + index, column] as const)));
  const match = (tab: Tab) => cells.every(([row, column]) => cellKey(now.rows[row], column) === cellKey(tab.rows[row], column));
  if (match(after)) return 'applied';
  return match(before) ? 'absent' : 'unknown';
}

function dataRows(tab: Tab): readonly SheetRow[] {
  return tab.rows.slice(headerRowIndex(tab.rows) + 1);
}

function sameRows(a: readonly SheetRow[], b: readonly SheetRow[]): boolean {
  const trimmed = (rows: readonly SheetRow[]) => {
    let length = rows.length;
    while (length > 0 && width(rows[length - 1]) === 0) length--;
    return length;
  };
  const length = trimmed(a);
  return length === trimmed(b) && a.slice(0, length).every((row, i) => sameRow(row, b[i]));
}

function sameRow(a: SheetRow | undefined, b: SheetRow | undefined): boolean {
  const columns = Math.max(width(a), width(b));
  for (let column = 0; column < columns; column++) if (cellKey(a, column) !== cellKey(b, column)) return false;
  return true;
}

function width(row: SheetRow | undefined): number {
  if (row === undefined) return 0;
  let columns = Math.max(row.text.length, row.value.length);
  while (columns > 0 && cellKey(row, columns - 1) === '') columns--;
  return columns;
}

/** A cell by its stored value (Google's displayed text may differ from the engine's: `1.50` shows `1.5`). */
function cellKey(row: SheetRow | undefined, column: number): string {
  if (row === undefined) return '';
  const value = row.value[column] ?? null;
  if (value === null) return row.text[column] ?? '';
  if (typeof value === 'object') return `d:${value.iso}`;
  return `${typeof value}:${String(value)}`;
}
