// A write plan as `spreadsheets.batchUpdate` requests, so that a batch mixing POST, PATCH and
// DELETE on one tab goes as ONE atomic request (group-commit.ts): cells as `updateCells`, row
// removals as `deleteDimension`, new rows as `insertDimension` then `updateCells`. Values go as
// ExtendedValue, typed as the engine typed them (the values API's USER_ENTERED typing is not
// available there): text as `stringValue` (stored as text, so `007` stays text), numbers and
// booleans as such, a formula as `formulaValue`, and a date as its serial number plus the number
// format typing `2024-03-01` would give it (DATE `yyyy-mm-dd`, DATE_TIME `yyyy-mm-dd hh:mm:ss`).
// PATCH of row 3's Age to 31 on sheet 0 -> {updateCells: {start: {sheetId: 0, rowIndex: 4,
// columnIndex: 1}, rows: [{values: [{userEnteredValue: {numberValue: 31}}]}], fields: "userEnteredValue"}}.
import type { WritePlan } from '../../../lib/write-plan.ts';
import type { SheetRow } from '../../../lib/workbook.ts';
import { deleteRequests, type DeleteDimensionRequest } from './encode-plan.ts';

export interface InsertDimensionRequest {
  readonly insertDimension: { readonly range: { readonly sheetId: number; readonly dimension: 'ROWS'; readonly startIndex: number; readonly endIndex: number }; readonly inheritFromBefore: boolean };
}

interface CellData {
  userEnteredValue?: { stringValue: string } | { numberValue: number } | { boolValue: boolean } | { formulaValue: string };
  userEnteredFormat?: { numberFormat: { type: string; pattern: string } };
}

export interface UpdateCellsRequest {
  readonly updateCells: {
    readonly start: { readonly sheetId: number; readonly rowIndex: number; readonly columnIndex: number };
    // Mutable, as the client library's Schema$RowData wants them.
    readonly rows: { values: CellData[] }[];
    readonly fields: 'userEnteredValue' | 'userEnteredFormat.numberFormat';
  };
}

/** Any request a write sends through spreadsheets.batchUpdate. */
export type SheetRequest = DeleteDimensionRequest | InsertDimensionRequest | UpdateCellsRequest;

/**
 * One plan's requests, in the order its parts apply (replaced, removed, appended, as
 * `applyPlanToTab`). `headerRow`: the header's grid row; `rowsBefore`: how many grid rows the tab
 * held as the plan saw it (an appended row beyond them needs a new grid row; one within takes the
 * row's place, keeping cells right of the table, as the kept tab does).
 */
export function cellRequests(sheetId: number, plan: WritePlan, headerRow: number, rowsBefore: number): SheetRequest[] {
  const requests: SheetRequest[] = [];
  const firstDataRow = headerRow + 1;
  for (const { index, row, columns } of plan.replaced) requests.push(...rowRequests(sheetId, firstDataRow + index, row, columns));
  if (plan.removed.length > 0) requests.push(...deleteRequests(sheetId, plan.removed, headerRow));
  const appended = plan.appended;
  if (appended !== null && appended.rows.length > 0) {
    const at = firstDataRow + appended.start;
    const firstNew = Math.max(at, rowsBefore - plan.removed.length);
    const end = at + appended.rows.length;
    if (end > firstNew) requests.push({ insertDimension: { range: { sheetId, dimension: 'ROWS', startIndex: firstNew, endIndex: end }, inheritFromBefore: firstNew > 0 } });
    appended.rows.forEach((row, i) => requests.push(...rowRequests(sheetId, at + i, row, rowColumns(row))));
  }
  return requests;
}

/** The columns an appended row writes: up to its last non-empty cell. */
function rowColumns(row: SheetRow): number[] {
  let width = Math.max(row.text.length, row.value.length, row.formula?.length ?? 0);
  while (width > 0 && cellOf(row, width - 1).userEnteredValue === undefined) width--;
  return Array.from({ length: width }, (_, column) => column);
}

/** One updateCells per run of adjacent columns (a column the write does not set is left alone), and one per date cell for its format. */
function rowRequests(sheetId: number, rowIndex: number, row: SheetRow, columns: readonly number[]): UpdateCellsRequest[] {
  const requests: UpdateCellsRequest[] = [];
  const sorted = [...new Set(columns)].sort((a, b) => a - b);
  let run: number[] = [];
  const flush = () => {
    if (run.length === 0) return;
    requests.push({ updateCells: { start: { sheetId, rowIndex, columnIndex: run[0] }, rows: [{ values: run.map((column) => withoutFormat(cellOf(row, column))) }], fields: 'userEnteredValue' } });
    run = [];
  };
  for (const column of sorted) {
    if (run.length > 0 && column !== run[run.length - 1] + 1) flush();
    run.push(column);
  }
  flush();
  for (const column of sorted) {
    const format = cellOf(row, column).userEnteredFormat;
    if (format !== undefined) requests.push({ updateCells: { start: { sheetId, rowIndex, columnIndex: column }, rows: [{ values: [{ userEnteredFormat: format }] }], fields: 'userEnteredFormat.numberFormat' } });
  }
  return requests;
}

function withoutFormat(cell: CellData): CellData {
  return cell.userEnteredValue === undefined ? {} : { userEnteredValue: cell.userEnteredValue };
}

/** One cell as typed by the engine; `{}` empties it. */
export function cellOf(row: SheetRow, column: number): CellData {
  const formula = row.formula?.[column];
  if (formula !== undefined && formula !== '') return { userEnteredValue: { formulaValue: formula } };
  const value = row.value[column] ?? null;
  const text = row.text[column] ?? '';
  if (value === null) return text === '' ? {} : { userEnteredValue: { stringValue: text } };
  if (typeof value === 'string') return { userEnteredValue: { stringValue: value } };
  if (typeof value === 'number') return { userEnteredValue: { numberValue: value } };
  if (typeof value === 'boolean') return { userEnteredValue: { boolValue: value } };
  const serial = serialOf(value.iso);
  if (serial !== null) {
    const pattern = value.iso.includes('T') ? { type: 'DATE_TIME', pattern: 'yyyy-mm-dd hh:mm:ss' } : { type: 'DATE', pattern: 'yyyy-mm-dd' };
    return { userEnteredValue: { numberValue: serial }, userEnteredFormat: { numberFormat: pattern } };
  }
  // A time alone (`09:30:00`): the fraction of a day.
  const time = /^(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?$/.exec(value.iso);
  if (time === null) return { userEnteredValue: { stringValue: value.iso } };
  const seconds = Number(time[1]) * 3600 + Number(time[2]) * 60 + Number(time[3] ?? 0) + Number(`0${time[4] ?? ''}`);
  return { userEnteredValue: { numberValue: seconds / 86_400 }, userEnteredFormat: { numberFormat: { type: 'TIME', pattern: 'hh:mm:ss' } } };
}

/** Days since 1899-12-30 as one division (what typing the date gives, to the last bit): `2024-03-01T09:30:00` -> 45352.395833333336. */
function serialOf(iso: string): number | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?$/.exec(iso);
  if (match === null) return null;
  const [, year, month, day, hours = '0', minutes = '0', seconds = '0', fraction = ''] = match;
  const ms = Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hours), Number(minutes), Number(seconds)) + Math.round(Number(`0${fraction}`) * 1000);
  return (ms - Date.UTC(1899, 11, 30)) / 86_400_000;
}
