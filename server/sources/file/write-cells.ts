// Which cells of a written row are still the file's own. An .ods row remembers the cells it was
// read from (`sourceCells`, set by ods-read.ts), so the in-place writer (ods-package.ts) puts a
// row back with its cells' exact XML; a PATCH or PUT keeps those of the columns it did not change
// and leaves the rest to be built from the values. (.xlsx rows need none of this: its writer
// finds a written row's cells in the sheet's XML, xlsx/sheet.ts.)
import type { SheetRow, TypedValue } from '../../../lib/workbook.ts';

/** A row's cells as its decoder read them (ods-read.ts); a column with no kept cell is undefined. */
export type SourceCells = readonly (object | undefined)[];

/** The cells each decoded .ods row (or row written over one) stands for; rows the engine built have none. */
export const sourceCells = new WeakMap<SheetRow, SourceCells>();

/**
 * The cells of a row a PATCH or PUT replaced: the columns the write did not set, whose value and
 * text did not change, keep the source cell (its style, its formula); the rest have none.
 */
export function rememberReplacedCells(before: SheetRow, after: SheetRow, setColumns: readonly number[]): void {
  const old = sourceCells.get(before);
  if (old === undefined || sourceCells.has(after)) return;
  const set = new Set(setColumns);
  const cells: (object | undefined)[] = [];
  for (let c = 0; c < old.length; c++) {
    const unchanged = !set.has(c) && after.formula?.[c] === undefined && sameValue(before.value[c] ?? null, after.value[c] ?? null) && (before.text[c] ?? '') === (after.text[c] ?? '');
    cells.push(unchanged ? old[c] : undefined);
  }
  sourceCells.set(after, cells);
}

export function sameValue(a: TypedValue, b: TypedValue): boolean {
  if (typeof a === 'object' && a !== null) return typeof b === 'object' && b !== null && a.iso === b.iso;
  return a === b;
}
