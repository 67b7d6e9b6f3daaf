// A write plan -> the Sheets API requests that carry it out, values encoded for USER_ENTERED
// so that a cell reads back exactly as the contract's coercion typed it. PATCH /sheets/crm/3
// {"Age": 31, "Code": "007"} -> values.batchUpdate [{range: "'People'!B5:C5", values: [[31, "'007"]]}].
import type { ReplacedRow, WritePlan } from '../../../lib/write-plan.ts';
import type { SheetRow, TypedValue } from '../../../lib/workbook.ts';

/** What one cell is sent as: null leaves a cell as it is, '' empties it. */
export type UserEnteredValue = string | number | boolean | null;

/**
 * One cell as a person would type it so that Google stores the typed value the engine chose.
 * Text always gets a leading apostrophe, which Google keeps out of the cell: without it `007`
 * would become 7, `TRUE` a boolean, `2024-03-01` a date and `=A1` a formula. Dates go as
 * `2024-03-01 09:30:00`, which Google parses as a date-time. A formula goes as written, and
 * only the engine puts one there (a connection with `formulas: true`).
 */
export function encodeCell(row: SheetRow, column: number): UserEnteredValue {
  const formula = row.formula?.[column];
  if (formula !== undefined && formula !== '') return formula;
  return encodeValue(row.value[column] ?? null, row.text[column] ?? '');
}

export function encodeValue(value: TypedValue, text: string): UserEnteredValue {
  if (value === null) return text === '' ? '' : `'${text}`;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value === 'string') return `'${value}`;
  return value.iso.replace('T', ' ');
}

/** `People` -> `'People'`; a quote inside is doubled (`Bob's` -> `'Bob''s'`), as A1 notation wants. */
export function quoteSheetName(name: string): string {
  return `'${name.replaceAll("'", "''")}'`;
}

/** Zero-based column -> letters: 0 -> A, 25 -> Z, 26 -> AA. */
export function columnLetters(column: number): string {
  let letters = '';
  for (let n = column + 1; n > 0; n = Math.floor((n - 1) / 26)) letters = String.fromCharCode(65 + ((n - 1) % 26)) + letters;
  return letters;
}

/** Row 1 holds the headers, so data row n is sheet row n + 2; `headerRow` rows lower in a tab starting with empty rows. */
export function sheetRowOf(dataRow: number, headerRow = 0): number {
  return dataRow + headerRow + 2;
}

export interface ValueRange {
  readonly range: string;
  readonly values: UserEnteredValue[][];
}

/**
 * One range per replaced row, spanning the columns the write sets; columns in between that it
 * does not set are sent as null, which Google skips, so a PATCH never touches other cells.
 */
export function replacedRanges(tab: string, replaced: readonly ReplacedRow[], headerRow = 0): ValueRange[] {
  const ranges: ValueRange[] = [];
  for (const { index, row, columns } of replaced) {
    if (columns.length === 0) continue;
    const first = Math.min(...columns);
    const last = Math.max(...columns);
    const written = new Set(columns);
    const values: UserEnteredValue[] = [];
    for (let column = first; column <= last; column++) values.push(written.has(column) ? encodeCell(row, column) : null);
    const sheetRow = sheetRowOf(index, headerRow);
    ranges.push({ range: `${quoteSheetName(tab)}!${columnLetters(first)}${sheetRow}:${columnLetters(last)}${sheetRow}`, values: [values] });
  }
  return ranges;
}

/** The appended rows from column A, each as long as it needs to be (trailing empty cells left out). */
export function appendedValues(rows: readonly SheetRow[]): UserEnteredValue[][] {
  return rows.map((row) => {
    const width = Math.max(row.text.length, row.value.length, row.formula?.length ?? 0);
    const values: UserEnteredValue[] = [];
    for (let column = 0; column < width; column++) values.push(encodeCell(row, column));
    while (values.length > 0 && values[values.length - 1] === '') values.pop();
    return values;
  });
}

/** Whether the kept tab can take a row as the engine wrote it: a formula's result is only known to Google. */
export function hasFormula(plan: WritePlan): boolean {
  const rows = [...plan.replaced.map((replaced) => replaced.row), ...(plan.appended?.rows ?? [])];
  return rows.some((row) => row.formula?.some((formula) => formula !== undefined && formula !== '') ?? false);
}

export interface DeleteDimensionRequest {
  readonly deleteDimension: { readonly range: { readonly sheetId: number; readonly dimension: 'ROWS'; readonly startIndex: number; readonly endIndex: number } };
}

/**
 * The removed data rows as deleteDimension requests, bottom-up so each index still means the
 * row it meant, adjacent rows merged into one range. Data row n is grid row n + 1 (0-based),
 * `headerRow` rows lower in a tab starting with empty rows.
 */
export function deleteRequests(sheetId: number, removed: readonly number[], headerRow = 0): DeleteDimensionRequest[] {
  const sorted = [...new Set(removed)].sort((a, b) => b - a);
  const requests: DeleteDimensionRequest[] = [];
  let end = -1;
  let start = -1;
  const flush = () => {
    if (start >= 0) requests.push({ deleteDimension: { range: { sheetId, dimension: 'ROWS', startIndex: headerRow + start + 1, endIndex: headerRow + end + 2 } } });
  };
  for (const index of sorted) {
    if (start >= 0 && index === start - 1) {
      start = index;
      continue;
    }
    flush();
    start = end = index;
  }
  flush();
  return requests;
}
