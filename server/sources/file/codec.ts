// Workbook file bytes <-> the workbook model, for `.xlsx`, `.ods` and `.csv`. Decoding keeps
// what encoding needs to write the file back in its own format with as little change as
// possible: tabs the writes never touched go back as SheetJS read them.
import * as XLSX from '@e965/xlsx';
import type { WorkBook, WorkSheet } from '@e965/xlsx';
import { coerceText } from '../../../lib/coerce.ts';
import { createInterner, isSheetDate, type Interner, type SheetRow, type TypedValue, type Workbook } from '../../../lib/workbook.ts';
import { DEFAULT_CSV_STYLE, formatCsv, parseCsv, type CsvStyle } from './csv.ts';
import { csvFieldsOf, rememberVerbatim, unquoteFormula } from './csv-formulas.ts';
import { bookUsesDate1904, readBook, tabsOfBook } from './read-cells.ts';
import { buildSheet, odsSafeSheet, xlsxSafeSheet } from './write-cells.ts';
import { decodeOds, encodeOds, type OdsPackage } from './ods-package.ts';

export type FileFormat = 'xlsx' | 'ods' | 'csv';

export function formatOfPath(path: string): FileFormat | null {
  const match = /\.(xlsx|ods|csv)$/i.exec(path);
  return match === null ? null : (match[1].toLowerCase() as FileFormat);
}

/** The basename without its extension: a CSV file's one tab is named after it. */
export function csvTabName(path: string): string {
  const base = path.split(/[\\/]/).pop() ?? path;
  return base.replace(/\.[^.]*$/, '');
}

export interface Decoded {
  readonly format: FileFormat;
  readonly workbook: Workbook;
  /** What SheetJS read (xlsx, ods); null for CSV, which we parse ourselves. */
  readonly book: WorkBook | null;
  readonly csvStyle: CsvStyle;
  /** Each tab's rows as decoded: a tab still holding this very array is written back untouched. */
  readonly decodedRows: ReadonlyMap<string, readonly SheetRow[]>;
  /** An .ods file's parts and content.xml, which writes edit in place (ods-package.ts). */
  readonly ods?: OdsPackage;
}

/** Throws an Error saying what is wrong with the bytes (the caller adds the path). */
export function decodeWorkbook(bytes: Uint8Array, format: FileFormat, tabName: string): Decoded {
  if (format === 'csv') {
    const { records, style } = parseCsv(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    const interner = createInterner();
    const rows = records.map((fields) => csvRow(fields, interner));
    return { format, workbook: { tabs: [{ name: tabName, rows }] }, book: null, csvStyle: style, decodedRows: new Map([[tabName, rows]]) };
  }
  // SheetJS reads almost anything (plain text becomes a sheet): insist on the zip an .xlsx or .ods is.
  if (bytes[0] !== 0x50 || bytes[1] !== 0x4b || bytes[2] !== 0x03 || bytes[3] !== 0x04) throw new Error(`the file is not a zip-packaged .${format} workbook`);
  if (format === 'ods') {
    const { tabs, hidden, ods } = decodeOds(bytes);
    // SheetJS is not used for .ods; this stands in for what the rest of the source asks of a book.
    const names = tabs.map((tab) => tab.name);
    const book: WorkBook = { SheetNames: names, Sheets: {}, Workbook: { Sheets: names.map((name, n) => ({ name, Hidden: hidden[n] ? 1 : 0 })), WBProps: { date1904: false } } };
    return { format, workbook: { tabs }, book, csvStyle: DEFAULT_CSV_STYLE, decodedRows: new Map(tabs.map((tab) => [tab.name, tab.rows])), ods };
  }
  const book = readBook(bytes, format);
  if (book.SheetNames.length === 0) throw new Error('the workbook has no sheets');
  const tabs = tabsOfBook(book);
  return { format, workbook: { tabs }, book, csvStyle: DEFAULT_CSV_STYLE, decodedRows: new Map(tabs.map((tab) => [tab.name, tab.rows])) };
}

/**
 * Every field displays exactly as written, but for the quote sheetrest puts before written text
 * that would run as a formula (csv-formulas.ts); its value is read as if typed (`007` stays text).
 */
function csvRow(fields: readonly string[], interner: Interner): SheetRow {
  // A CSV column of codes, ages or dates repeats itself: share equal texts and dates.
  const text = fields.map((field) => interner.text(unquoteFormula(field)));
  while (text.length > 0 && text[text.length - 1] === '') text.pop();
  const row = { text, value: text.map((field) => internDate(coerceText(field), interner)) };
  rememberVerbatim(row, fields);
  return row;
}

function internDate(value: TypedValue, interner: Interner): TypedValue {
  return isSheetDate(value) ? interner.date(value.iso) : value;
}

export interface Encoded {
  readonly bytes: Uint8Array;
  /** The state to encode the next version from, as if the new bytes had just been read. */
  readonly decoded: Decoded;
}

export function encodeWorkbook(workbook: Workbook, previous: Decoded): Encoded {
  const decodedRows = new Map(workbook.tabs.map((tab) => [tab.name, tab.rows]));
  if (previous.format === 'csv' || previous.book === null) {
    const rows = workbook.tabs[0]?.rows ?? [];
    const csv = formatCsv(rows.map(csvFieldsOf), previous.csvStyle);
    return { bytes: new TextEncoder().encode(csv), decoded: { ...previous, workbook, decodedRows } };
  }
  if (previous.ods !== undefined) {
    const { bytes, ods } = encodeOds(workbook, previous.decodedRows, previous.ods);
    return { bytes, decoded: { ...previous, workbook, decodedRows, ods } };
  }
  const old = previous.book;
  const date1904 = bookUsesDate1904(old);
  const sheets: Record<string, WorkSheet> = {};
  for (const tab of workbook.tabs) {
    const untouched = previous.decodedRows.get(tab.name) === tab.rows && old.Sheets[tab.name] !== undefined;
    sheets[tab.name] = untouched ? old.Sheets[tab.name] : buildSheet(tab.rows, old.Sheets[tab.name], date1904);
  }
  // SheetJS adds bookkeeping to the object it writes: hand it a fresh one each time.
  const book: WorkBook = { ...old, SheetNames: workbook.tabs.map((tab) => tab.name), Sheets: sheets };
  const toWrite: WorkBook = { ...book, Sheets: mapSheets(sheets, previous.format === 'ods' ? odsSafeSheet : xlsxSafeSheet) };
  // Shared strings, as Excel writes them: SheetJS decodes inline (`str`) cells' entities twice
  // when reading, so `a&amp;b` written inline would come back as `a&b`.
  const written: unknown = XLSX.write(toWrite, { type: 'array', bookType: previous.format, compression: true, bookSST: previous.format === 'xlsx' });
  const bytes = new Uint8Array(written as ArrayBuffer);
  return { bytes, decoded: { ...previous, workbook, book, decodedRows } };
}

function mapSheets(sheets: Record<string, WorkSheet>, change: (sheet: WorkSheet) => WorkSheet): Record<string, WorkSheet> {
  return Object.fromEntries(Object.entries(sheets).map(([name, sheet]) => [name, change(sheet)]));
}
