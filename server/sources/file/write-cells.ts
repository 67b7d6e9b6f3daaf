// sheetrest rows -> SheetJS cells for writing the workbook back. A row that came from the file
// (or from an earlier write) keeps the very cells it was read from; a row the engine built gets
// cells from its values: 42 -> a number cell, true -> a boolean cell, `{ iso: '2024-03-01' }` ->
// a date serial with a date format, `=A2*2` in `formula` -> a formula cell.
import type { CellObject } from '@e965/xlsx';
import type { SheetRow, TypedValue } from '../../../lib/workbook.ts';
import { DATE_FORMAT, DATE_TIME_FORMAT, TIME_FORMAT, isoHasTime, isoIsTimeOnly, isoToSerial } from './dates.ts';
import { formatValue, sourceCells, type Cells } from './read-cells.ts';

/** The cells a row is written as: its source cells when it has them, else cells built from its values. */
export function cellsOfRow(row: SheetRow, date1904: boolean): Cells {
  const known = sourceCells.get(row);
  if (known !== undefined) return known;
  const width = Math.max(row.text.length, row.value.length, row.formula?.length ?? 0);
  const cells: (CellObject | undefined)[] = [];
  for (let c = 0; c < width; c++) cells.push(buildCell(row.text[c] ?? '', row.value[c] ?? null, row.formula?.[c], date1904));
  sourceCells.set(row, cells);
  return cells;
}

export function buildCell(text: string, value: TypedValue, formula: string | undefined, date1904: boolean): CellObject | undefined {
  if (formula !== undefined && formula !== '') {
    // SheetJS cannot compute formulas: the cell goes out without a cached value and the
    // spreadsheet program computes it on opening.
    return { t: 's', v: '', f: formula.replace(/^=/, '') };
  }
  if (value === null) return text === '' ? undefined : { t: 's', v: text, w: text };
  if (typeof value === 'number') return { t: 'n', v: value, w: text };
  if (typeof value === 'boolean') return { t: 'b', v: value, w: text };
  if (typeof value === 'string') return { t: 's', v: value, w: value };
  const serial = isoToSerial(value.iso, date1904);
  // A date before the workbook's first day (1900-01-01, or 1904-01-01 in a 1904 workbook) has no
  // serial a spreadsheet program shows as a date: it is kept as its ISO text instead.
  if (serial === null || (!isoIsTimeOnly(value.iso) && serial < (date1904 ? 0 : 1))) return { t: 's', v: value.iso, w: value.iso };
  const format = isoIsTimeOnly(value.iso) ? TIME_FORMAT : isoHasTime(value.iso) ? DATE_TIME_FORMAT : DATE_FORMAT;
  // `w` is what an ODS file stores as the shown text, so make it what the format shows.
  return { t: 'n', v: serial, z: format, w: formatValue(format, serial) };
}

/**
 * The cells of a row a PATCH or PUT replaced: cells of columns the write did not set and whose
 * value did not change keep the source cell (its format, its formula); the rest are built.
 */
export function rememberReplacedCells(before: SheetRow, after: SheetRow, setColumns: readonly number[], date1904: boolean): void {
  const old = sourceCells.get(before);
  if (old === undefined || sourceCells.has(after)) return;
  const set = new Set(setColumns);
  const built = cellsOfRow({ text: after.text, value: after.value, formula: after.formula }, date1904);
  const width = Math.max(built.length, old.length);
  const cells: (CellObject | undefined)[] = [];
  for (let c = 0; c < width; c++) {
    const unchanged = !set.has(c) && after.formula?.[c] === undefined && sameValue(before.value[c] ?? null, after.value[c] ?? null) && (before.text[c] ?? '') === (after.text[c] ?? '');
    cells.push(unchanged ? old[c] : built[c]);
  }
  sourceCells.set(after, cells);
}

export function sameValue(a: TypedValue, b: TypedValue): boolean {
  if (typeof a === 'object' && a !== null) return typeof b === 'object' && b !== null && a.iso === b.iso;
  return a === b;
}
