// PATCH /sheets/demo/Name/ann {"Age": 31} -> a write plan replacing every row whose Name is
// "ann", with only Age changed, and the answer: those rows after the write. Planning reads the
// rows as they are when the write is applied; nothing here touches a source.
import type { ReplacedRow, WritePlan } from './write-plan.ts';
import { coerceWritten } from './coerce.ts';
import { apiError, isApiError, type ApiError } from './errors.ts';
import type { RowInput, WriteBody } from './parse-body.ts';
import type { ParsedRequest } from './parse-request.ts';
import { matchRows } from './select.ts';
import { objectJson, type Table } from './table.ts';
import type { SheetRow, TypedValue } from './workbook.ts';

export interface PlannedWrite {
  readonly status: number;
  /** The answer, JSON text: the written rows as strings. */
  readonly body: string;
  /** Null when nothing is written (`[]` posted, a filter matching nothing). */
  readonly plan: WritePlan | null;
}

export interface PlanOptions {
  readonly formulas: boolean;
}

export function planWrite(table: Table, request: ParsedRequest, options: PlanOptions): PlannedWrite | ApiError {
  if (request.action === 'append') return planAppend(table, request.body!, options);
  const targets = targetRows(table, request);
  if (isApiError(targets)) return targets;
  if (request.action === 'delete') {
    const body = rowsJson(table, targets.map((index) => table.row(index)));
    return { status: 200, body, plan: targets.length === 0 ? null : { tab: table.name, replaced: [], removed: targets, appended: null } };
  }
  const [input] = request.body!.rows;
  const known = knownColumns(table, input);
  if (isApiError(known)) return known;
  const blankOthers = request.action === 'put';
  const replaced: ReplacedRow[] = targets.map((index) => {
    const { row, columns } = updatedRow(table, table.row(index), input, blankOthers, options);
    return { index, row, columns };
  });
  const body = rowsJson(table, replaced.map(({ row }) => row));
  return { status: 200, body, plan: replaced.length === 0 ? null : { tab: table.name, replaced, removed: [], appended: null } };
}

function planAppend(table: Table, body: WriteBody, options: PlanOptions): PlannedWrite | ApiError {
  const rows: SheetRow[] = [];
  for (const [i, input] of body.rows.entries()) {
    const known = knownColumns(table, input, body.single ? undefined : i);
    if (isApiError(known)) return known;
    rows.push(updatedRow(table, { text: [], value: [] }, input, true, options).row);
  }
  const json = body.single ? objectJson(table.columns, rows[0], false) : rowsJson(table, rows);
  const plan = rows.length === 0 ? null : { tab: table.name, replaced: [], removed: [], appended: { start: table.rowCount, rows } };
  return { status: 201, body: json, plan };
}

/** `/{n}` or `/{Column}/{Value}`: the data rows a PATCH, PUT or DELETE addresses, ascending. */
function targetRows(table: Table, request: ParsedRequest): number[] | ApiError {
  const { target } = request;
  if (target.kind === 'index') {
    if (target.index >= table.rowCount) return rowNotFound(table, target.index);
    return [target.index];
  }
  return matchRows(table, target);
}

export function rowNotFound(table: Table, index: number): ApiError {
  const last = table.rowCount === 0 ? 'it has no data rows' : `its rows are 0 to ${table.rowCount - 1}`;
  return apiError('row_not_found', `The tab "${table.name}" has no row ${index}; ${last}.`);
}

/** A body must name at least one column, or a typo would write a blank row or change nothing. */
function knownColumns(table: Table, input: RowInput, element?: number): true | ApiError {
  for (const key of input.keys()) if (table.column(key) !== undefined) return true;
  const where = element === undefined ? 'The body' : `Element ${element}`;
  const names = table.columns.map((column) => JSON.stringify(column.name)).join(', ');
  const given = input.size === 0 ? 'no columns' : [...input.keys()].map((key) => JSON.stringify(key)).join(', ');
  return apiError('invalid_body', `${where} names none of the columns of "${table.name}" (${names || 'none'}); it gives ${given}.`);
}

function updatedRow(table: Table, old: SheetRow, input: RowInput, blankOthers: boolean, options: PlanOptions): { row: SheetRow; columns: number[] } {
  const length = Math.max(old.text.length, old.value.length, table.width);
  const text: string[] = new Array(length);
  const value: TypedValue[] = new Array(length);
  const formula: (string | undefined)[] = old.formula === undefined ? [] : [...old.formula];
  for (let position = 0; position < length; position++) {
    text[position] = old.text[position] ?? '';
    value[position] = old.value[position] ?? null;
  }
  const columns: number[] = [];
  for (const column of table.columns) {
    const given = input.has(column.name);
    if (!given && !blankOthers) continue;
    const cell = coerceWritten(given ? input.get(column.name)! : null, options.formulas);
    text[column.position] = cell.text;
    value[column.position] = cell.value;
    formula[column.position] = cell.formula;
    columns.push(column.position);
  }
  const row = formula.some((entry) => entry !== undefined) ? { text, value, formula } : { text, value };
  return { row, columns };
}

function rowsJson(table: Table, rows: readonly SheetRow[]): string {
  return '[' + rows.map((row) => objectJson(table.columns, row, false)).join(',') + ']';
}
