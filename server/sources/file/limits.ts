// What each file format can store, checked before a write is journaled: a POST to an .xlsx
// connection with a 1 MB `Note` answers 400 invalid_body ("an .xlsx cell holds at most 32,767
// characters") instead of a 201 whose fold can never succeed. CSV stores anything.
import type { WritePlan } from '../../../lib/write-plan.ts';
import { apiError, type ApiError } from '../../../lib/errors.ts';
import { gridRows } from '../../../lib/rows.ts';
import { headerBlock, type SheetRow, type Workbook } from '../../../lib/workbook.ts';
import type { FileFormat } from './format.ts';
import type { JournalEntry } from './journal.ts';

export interface FormatLimits {
  /** Grid rows per sheet, the header row included. */
  readonly rows: number;
  readonly columns: number;
  /** Characters in one text cell (or formula). */
  readonly cellText: number;
}

/**
 * Excel's specifications and limits for .xlsx (SheetJS refuses longer text and silently cuts a
 * larger range). For .ods, LibreOffice Calc's grid since 7.4 (older versions open at most 1,024
 * columns of it); the OpenDocument format has no cell text limit and neither has SheetJS's
 * writer, so the request body limit is the only one. CSV has none.
 */
export const FORMAT_LIMITS: Readonly<Record<FileFormat, FormatLimits | null>> = {
  xlsx: { rows: 1_048_576, columns: 16_384, cellText: 32_767 },
  ods: { rows: 1_048_576, columns: 16_384, cellText: Number.POSITIVE_INFINITY },
  csv: null,
};

/**
 * The most a workbook file may declare when it is loaded, so that a small hostile file cannot
 * exhaust memory or time: an .ods file of 1.1 KB can declare a million rows of 16,384 filled
 * cells through repeat counts. Rows and columns are LibreOffice's grid; cells up to each row's
 * last value are counted across all tabs before any is built (16.7 million is about 2 GB of
 * rows in memory); a zip part may unpack to at most 500 MiB (JavaScript strings end near 512).
 */
export const LOAD_LIMITS = {
  rows: 1_048_576,
  columns: 16_384,
  cells: 16_777_216,
  partBytes: 500 * 1_048_576,
} as const;

/** The 400 for a write `format` cannot store, or null when it fits. `after` is the workbook with the plan applied. */
export function refuseUnstorable(format: FileFormat, plan: WritePlan, after: Workbook): ApiError | null {
  const limits = FORMAT_LIMITS[format];
  if (limits === null) return null;
  const tab = after.tabs.find((candidate) => candidate.name === plan.tab);
  // Through the tab's chunks: its `rows` array would be built for this alone (lib/rows.ts).
  const rows = tab === undefined ? undefined : gridRows(tab);
  if (rows !== undefined && rows.length > limits.rows) {
    return apiError('invalid_body', `The tab "${plan.tab}" would have ${count(rows.length)} rows; an .${format} sheet holds at most ${count(limits.rows)}. Nothing was written.`);
  }
  const headers = rows === undefined ? [] : (rows.at(headerBlock(rows).first)?.text ?? []);
  for (const [index, row] of writtenRows(plan)) {
    const problem = unstorableCell(row, limits);
    if (problem === null) continue;
    const column = headers[problem.column] ? `"${headers[problem.column]}"` : `column ${problem.column + 1}`;
    if (problem.length === null) {
      return apiError('invalid_body', `Row ${index} would reach column ${count(problem.column + 1)}; an .${format} sheet holds at most ${count(limits.columns)} columns. Nothing was written.`);
    }
    return apiError('invalid_body', `The value for ${column} in row ${index} has ${count(problem.length)} characters; an .${format} cell holds at most ${count(limits.cellText)}. Nothing was written.`);
  }
  return null;
}

/** Journaled writes holding a cell `format` cannot store (acknowledged by a version that did not check). */
export function unstorableEntries(format: FileFormat, entries: readonly JournalEntry[]): JournalEntry[] {
  const limits = FORMAT_LIMITS[format];
  if (limits === null) return [];
  return entries.filter(({ plan }) => writtenRows(plan).some(([, row]) => unstorableCell(row, limits) !== null));
}

/** The rows a plan writes, each with its data-row index: the replaced ones, then the appended. */
function writtenRows(plan: WritePlan): [number, SheetRow][] {
  const written: [number, SheetRow][] = plan.replaced.map(({ index, row }) => [index, row]);
  plan.appended?.rows.forEach((row, offset) => written.push([plan.appended!.start + offset, row]));
  return written;
}

/** The first cell of a row the format cannot store: too long (length) or too far right (length null). */
export function unstorableCell(row: SheetRow, limits: FormatLimits): { column: number; length: number | null } | null {
  const width = Math.max(row.text.length, row.value.length, row.formula?.length ?? 0);
  if (width > limits.columns) return { column: width - 1, length: null };
  for (let column = 0; column < width; column++) {
    const value = row.value[column];
    const length = Math.max(row.text[column]?.length ?? 0, typeof value === 'string' ? value.length : 0, row.formula?.[column]?.length ?? 0);
    if (length > limits.cellText) return { column, length };
  }
  return null;
}

function count(n: number): string {
  return n.toLocaleString('en-US');
}
