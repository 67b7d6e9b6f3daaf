// The line a row is written as: `a,b,` read from the file and left alone by writes goes back as
// `a,b,` with its own line ending, though its row holds only `a` and `b` (trailing empty cells
// are no cells); a row a write made (POST, PATCH) is formatted (`a,b`). Only records that
// formatting would change are kept (csv.ts finds them while parsing): trailing empty fields,
// quotes, a line ending other than the file's; most as a count rather than their text. A row
// keeps its record for as long as it is the very row read: a PATCH makes a new row, which has none.
import type { SheetRow } from '../../../../lib/workbook.ts';
import { quoteField, type CsvStyle, type RecordSource, type RecordText } from './csv.ts';
import { csvFieldsOf } from './formulas.ts';

/** A row's record as the file had it (csv.ts's RecordText), or with its own line ending too. */
type Kept = RecordText | { readonly record: RecordText; readonly lineEnding: NonNullable<RecordSource['lineEnding']> };

const sources = new WeakMap<SheetRow, Kept>();

/** The record as formatting writes it: each field quoted only where it must be. */
function formatted(row: SheetRow): string {
  return csvFieldsOf(row).map(quoteField).join(',');
}

/** The record of a row whose `fields` fields are each quoted: its cells, then empty fields. */
function quotedEach(row: SheetRow, fields: number): string {
  const cells = csvFieldsOf(row);
  let text = '';
  for (let column = 0; column < Math.max(fields, cells.length); column++) {
    text += `${column === 0 ? '' : ','}"${(cells[column] ?? '').replaceAll('"', '""')}"`;
  }
  return text;
}

/** Keeps a row's record as read, unless formatting the row gives back the same bytes (`"a, b"`). */
export function rememberSource(row: SheetRow, source: RecordSource): void {
  const record = source.text;
  // A record ending in an empty field is never what formatting gives (which writes no empty cells at the end).
  if (source.lineEnding === undefined && typeof record === 'string' && !record.endsWith(',') && formatted(row) === record) return;
  sources.set(row, source.lineEnding === undefined ? record : { record, lineEnding: source.lineEnding });
}

/** The record a row was read from, as it was. */
function recordOf(row: SheetRow, record: RecordText): string {
  if (typeof record === 'string') return record;
  if (typeof record === 'number') return quotedEach(row, record);
  return formatted(row) + ','.repeat(record.commas);
}

/** A row's line: its record and its line ending (its own, kept from the file, or the file's). */
export function formatLine(row: SheetRow, style: CsvStyle): string {
  const kept = sources.get(row);
  if (typeof kept === 'object' && 'lineEnding' in kept) return recordOf(row, kept.record) + kept.lineEnding;
  return (kept === undefined ? formatted(row) : recordOf(row, kept)) + style.lineEnding;
}

/** The line ending `formatLine` ends a row's line with. */
export function lineEndingOf(row: SheetRow, style: CsvStyle): string {
  const kept = sources.get(row);
  return typeof kept === 'object' && 'lineEnding' in kept ? kept.lineEnding : style.lineEnding;
}

/**
 * The text of `rows` from `start` to `end` (exclusive), each followed by its line ending: its
 * own, or the file's; none after the last row of a file that had no final newline.
 */
export function formatRecords(rows: readonly SheetRow[], style: CsvStyle, start = 0, end = rows.length): string {
  let text = '';
  for (let index = start; index < end; index++) {
    const line = formatLine(rows[index], style);
    text += index < rows.length - 1 || style.finalNewline ? line : line.slice(0, line.length - lineEndingOf(rows[index], style).length);
  }
  return text;
}

/** The whole file of `rows` in `style`, byte order mark and all. */
export function formatCsvRows(rows: readonly SheetRow[], style: CsvStyle): string {
  return (style.byteOrderMark ? '\uFEFF' : '') + formatRecords(rows, style);
}
