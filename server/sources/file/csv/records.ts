// The line a row is written as: `a,b,` read from the file and left alone by writes goes back as
// `a,b,` with its own line ending, though its row holds only `a` and `b` (trailing empty cells
// are no cells); a row a write made (POST, PATCH) is formatted (`a,b`). Only records that
// formatting would change keep their text (csv.ts finds them while parsing): trailing empty
// fields, quotes, a line ending other than the file's. A row keeps it for as long as it is the
// very row read: a PATCH makes a new row, which has none.
import type { SheetRow } from '../../../../lib/workbook.ts';
import { quoteField, type CsvStyle, type RecordSource } from './csv.ts';
import { csvFieldsOf } from './formulas.ts';

const sources = new WeakMap<SheetRow, RecordSource>();

/** The record as formatting writes it: each field quoted only where it must be. */
function formatted(row: SheetRow): string {
  return csvFieldsOf(row).map(quoteField).join(',');
}

/** Keeps a row's record as read, unless formatting the row gives back the same bytes (`"a, b"`). */
export function rememberSource(row: SheetRow, source: RecordSource): void {
  if (source.lineEnding === undefined && formatted(row) === source.text) return;
  sources.set(row, source);
}

/**
 * The text of `rows` from `start` to `end` (exclusive), each followed by its line ending: its
 * own, or the file's; none after the last row of a file that had no final newline.
 */
export function formatRecords(rows: readonly SheetRow[], style: CsvStyle, start = 0, end = rows.length): string {
  let text = '';
  for (let index = start; index < end; index++) {
    const row = rows[index];
    const source = sources.get(row);
    text += source === undefined ? formatted(row) : source.text;
    if (index < rows.length - 1 || style.finalNewline) text += source?.lineEnding ?? style.lineEnding;
  }
  return text;
}

/** The whole file of `rows` in `style`, byte order mark and all. */
export function formatCsvRows(rows: readonly SheetRow[], style: CsvStyle): string {
  return (style.byteOrderMark ? '\uFEFF' : '') + formatRecords(rows, style);
}
