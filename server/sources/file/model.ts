// The rows the server keeps of a decoded file: what the engine reads (each cell's text and
// value, and a written formula) and nothing else. A decoded row may also carry what writing the
// file back needs (an .ods row its cells' XML, write-cells.ts; a .csv row its verbatim fields,
// csv/formulas.ts, and its record as the file had it, csv/records.ts), and an .xlsx decode holds SheetJS's whole parsed book: for a 100k x 10 .xlsx
// several times the rows themselves. An .xlsx or .ods fold decodes the file afresh for that (fold.ts), so the
// server drops it: the rows here are new objects, which the decoder's per-row tables (weak
// maps) do not know. A .csv fold writes the rows held here (fold-csv.ts).
import type { FileFormat } from './format.ts';
import { createInterner, type Interner, type SheetRow, type Tab, type TypedValue, type Workbook } from '../../../lib/workbook.ts';

/**
 * `workbook` with rows of text and values only; equal short texts shared, arrays exactly as long
 * as their cells. A CSV file's rows are that already (codec.ts builds them from the fields, and
 * keeps aside only the few fields that look like formulas): they are kept as they are, rather
 * than copied while the file's text and every record are still in memory.
 */
export function rowsOnly(workbook: Workbook, format: FileFormat): Workbook {
  if (format === 'csv') return workbook;
  return { ...workbook, tabs: workbook.tabs.map(tabRowsOnly) };
}

function tabRowsOnly(tab: Tab): Tab {
  // Each tab its own interner: a column of codes or cities is shared within a tab.
  const interner = createInterner();
  return { ...tab, rows: tab.rows.map((row) => rowOnly(row, interner)) };
}

function rowOnly(row: SheetRow, interner: Interner): SheetRow {
  const text = new Array<string>(row.text.length);
  for (let c = 0; c < text.length; c++) text[c] = interner.text(row.text[c] ?? '');
  const value = new Array<TypedValue>(row.value.length);
  for (let c = 0; c < value.length; c++) value[c] = valueOnly(row.value[c] ?? null, interner);
  const kept: SheetRow = row.formula === undefined ? { text, value } : { text, value, formula: row.formula.slice() };
  // A header merged down marks its row: the header block (lib/workbook.ts) is found from it.
  return row.mergedDown === undefined ? kept : { ...kept, mergedDown: row.mergedDown };
}

function valueOnly(value: TypedValue, interner: Interner): TypedValue {
  if (typeof value === 'string') return interner.text(value);
  if (typeof value === 'object' && value !== null) return interner.date(value.iso);
  return value;
}
