// Workbook file bytes <-> the workbook model, for `.xlsx`, `.ods` and `.csv`. Decoding keeps
// what encoding needs to write the file back in its own format with as little change as
// possible: an .xlsx is read by SheetJS and edited in place (xlsx/write.ts: only the written
// sheets' parts change); an .ods is read and edited in place by ods-read.ts and ods-package.ts.
import type { WorkBook } from '@e965/xlsx';
import { coerceText } from '../../../lib/coerce.ts';
import { createInterner, isSheetDate, type Interner, type SheetRow, type TypedValue, type Workbook } from '../../../lib/workbook.ts';
import { DEFAULT_CSV_STYLE, parseCsv, type CsvStyle } from './csv/csv.ts';
import { rememberVerbatim, unquoteFormula } from './csv/formulas.ts';
import { formatCsvRows, rememberSource } from './csv/records.ts';
import { bookUsesDate1904, readBook, tabsOfBook } from './xlsx/read-cells.ts';
import type { WritePlan } from '../../../lib/write-plan.ts';
import { notAPackage } from './xlsx/mend-package.ts';
import { readPackage, type XlsxPackage } from './xlsx/package.ts';
import { foldIntoXlsx } from './xlsx/write.ts';
import { decodeOds, encodeOds, type OdsPackage } from './ods/write.ts';
import { LOAD_LIMITS } from './limits.ts';
import { readZip } from './zip.ts';
import type { FileFormat } from './format.ts';
import type { AlterPart } from './xml/well-formed.ts';

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
  /** An .xlsx file's zip parts and where each tab lives; null for other formats or when unreadable. */
  readonly xlsx: XlsxPackage | null;
  /** An .ods file's parts and content.xml, which writes edit in place (ods-package.ts). */
  readonly ods?: OdsPackage;
  /** Why sheetrest cannot write this file back (said to clients), or null when it can. */
  readonly cannotWrite: string | null;
  /** Tabs that are not worksheets (a chart sheet), with what they are: writes to them are refused. */
  readonly readOnlyTabs: ReadonlyMap<string, string>;
}

/** Throws an Error saying what is wrong with the bytes (the caller adds the path). */
export function decodeWorkbook(bytes: Uint8Array, format: FileFormat, tabName: string): Decoded {
  if (format === 'csv') {
    // ignoreBOM: the byte order mark reaches parseCsv, which keeps it for writing back (a decoder
    // that took it off lost it at the first fold).
    const { records, sources, style } = parseCsv(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes));
    const interner = createInterner();
    const rows = records.map((fields) => csvRow(fields, interner));
    // After every row's verbatim fields are known: they decide what formatting a row gives.
    for (const [index, source] of sources) rememberSource(rows[index], source);
    return { format, workbook: { tabs: [{ name: tabName, rows }] }, book: null, csvStyle: style, decodedRows: new Map([[tabName, rows]]), ...WRITABLE };
  }
  const problem = notAPackage(bytes, format);
  if (problem !== null) throw new Error(problem);
  if (format === 'ods') {
    const { tabs, hidden, ods } = decodeOds(bytes);
    // SheetJS is not used for .ods; this stands in for what the rest of the source asks of a book.
    const names = tabs.map((tab) => tab.name);
    const book: WorkBook = { SheetNames: names, Sheets: {}, Workbook: { Sheets: names.map((name, n) => ({ name, Hidden: hidden[n] ? 1 : 0 })), WBProps: { date1904: false } } };
    return { format, workbook: { tabs }, book, csvStyle: DEFAULT_CSV_STYLE, decodedRows: new Map(tabs.map((tab) => [tab.name, tab.rows])), ...WRITABLE, ods };
  }
  refuseOversizedParts(bytes);
  const book = readBook(bytes);
  if (book.SheetNames.length === 0) throw new Error('the workbook has no sheets');
  const tabs = tabsOfBook(book);
  const decodedRows = new Map(tabs.map((tab) => [tab.name, tab.rows]));
  return { format, workbook: { tabs }, book, csvStyle: DEFAULT_CSV_STYLE, decodedRows, ...(format === 'xlsx' ? xlsxWritability(bytes, book) : WRITABLE) };
}

/**
 * SheetJS unpacks every part of an .xlsx with no limit: a part whose directory entry declares
 * more than a part may hold is refused before it starts (a few KB of deflate can declare
 * gigabytes). A part lying about its size still reaches SheetJS; the in-place writer's own reads
 * stop at the limit whatever is declared (zip.ts).
 */
function refuseOversizedParts(bytes: Uint8Array): void {
  const oversized = readZip(bytes).find((entry) => entry.size > LOAD_LIMITS.partBytes);
  if (oversized !== undefined) {
    throw new Error(`its part ${oversized.name} unpacks to ${Math.ceil(oversized.size / 1_048_576)} MiB, more than the ${LOAD_LIMITS.partBytes / 1_048_576} MiB a part may hold`);
  }
}

const WRITABLE = { xlsx: null, cannotWrite: null, readOnlyTabs: new Map<string, string>() } as const;

/**
 * Whether the in-place writer can fold writes into this package, decided at open so that no
 * write is acknowledged that could never reach the file: its zip and its workbook's parts must
 * read, and name the tabs SheetJS read.
 */
function xlsxWritability(bytes: Uint8Array, book: WorkBook): Pick<Decoded, 'xlsx' | 'cannotWrite' | 'readOnlyTabs'> {
  let pack: XlsxPackage;
  try {
    pack = readPackage(bytes);
  } catch (error) {
    return { xlsx: null, cannotWrite: error instanceof Error ? error.message : String(error), readOnlyTabs: new Map() };
  }
  const names = pack.sheets.map((sheet) => sheet.name);
  if (names.length !== book.SheetNames.length || names.some((name, index) => name !== book.SheetNames[index])) {
    return { xlsx: null, cannotWrite: 'its workbook part lists its tabs differently from how they read', readOnlyTabs: new Map() };
  }
  const readOnlyTabs = new Map(pack.sheets.filter((sheet) => sheet.kind !== 'worksheet').map((sheet) => [sheet.name, sheet.kind === 'unknown' ? 'not a worksheet' : `a ${sheet.kind.replace('sheet', ' sheet')}`]));
  return { xlsx: pack, cannotWrite: null, readOnlyTabs };
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

/**
 * The file holding `workbook`, which is `previous` with `plans` applied in order. An .xlsx or
 * .ods throws rather than write a part that is not well-formed XML (`alterPart`: the tests' seam).
 */
export function encodeWorkbook(workbook: Workbook, previous: Decoded, plans: readonly WritePlan[], alterPart?: AlterPart): Encoded {
  const decodedRows = new Map(workbook.tabs.map((tab) => [tab.name, tab.rows]));
  if (previous.format === 'csv' || previous.book === null) {
    const rows = workbook.tabs[0]?.rows ?? [];
    const csv = formatCsvRows(rows, previous.csvStyle);
    return { bytes: new TextEncoder().encode(csv), decoded: { ...previous, workbook, decodedRows } };
  }
  if (previous.format === 'ods') {
    if (previous.ods === undefined) throw new Error('sheetrest cannot write this file back: its package did not read');
    const { bytes, ods } = encodeOds(workbook, previous.decodedRows, previous.ods, alterPart);
    return { bytes, decoded: { ...previous, workbook, decodedRows, ods } };
  }
  if (previous.xlsx === null) throw new Error(`sheetrest cannot write this file back: ${previous.cannotWrite ?? 'its package did not read'}`);
  const { bytes, pack } = foldIntoXlsx(previous.xlsx, workbook, previous.decodedRows, plans, bookUsesDate1904(previous.book), alterPart);
  return { bytes, decoded: { ...previous, workbook, decodedRows, xlsx: pack } };
}
