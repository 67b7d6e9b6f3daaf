// What every kind of write plans with: a row as a body leaves it (`updatedRow`), the checks a
// body passes (it names a column; keys that are not columns are told or refused; an id never
// changes), fresh ids for appended rows, and the answer's JSON. plan-write.ts, plan-upsert.ts
// and plan-batch.ts build their plans from these.
import type { ReplacedRow, WritePlan } from './write-plan.ts';
import { coerceWritten } from './coerce.ts';
import { apiError, type ApiError } from './errors.ts';
import type { RowInput } from './parse-body.ts';
import type { UnknownColumns } from './parse-request.ts';
import { freshIds, sameId, type RowIds, type RowIdSettings } from './row-id.ts';
import { objectJson, type Table } from './table.ts';
import type { SheetRow, TypedValue } from './workbook.ts';

export interface PlannedWrite {
  readonly status: number;
  /** The answer, JSON text: the written rows as strings. */
  readonly body: string;
  /** Null when nothing is written (`[]` posted, a filter matching nothing). */
  readonly plan: WritePlan | null;
  /** Headers the answer adds: `Sheetrest-Ignored-Columns`, an upsert's counts. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface PlanOptions extends RowIdSettings {
  readonly formulas: boolean;
  readonly unknownColumns?: UnknownColumns;
}

/** An increment id counts on from the rows there are: such a plan cannot be made on a stale copy of the tab. */
export function readsRowsIf(ids: RowIds | null): { readsRows?: true } {
  return ids?.generate === 'increment' ? { readsRows: true } : {};
}

/**
 * Rows to append with their ids: one given (not empty) is kept, unless the column or the body
 * already holds it (409); the others get fresh ones.
 */
export function withIds(table: Table, ids: RowIds, inputs: readonly RowInput[], where: (i: number) => string): RowInput[] | ApiError {
  const name = ids.column.name;
  const given = new Map<string, number>();
  const missing: number[] = [];
  for (const [i, input] of inputs.entries()) {
    const value = input.get(name);
    const text = value === undefined || value === null ? '' : coerceWritten(value, false).text;
    if (text.trim() === '') {
      missing.push(i);
      continue;
    }
    const folded = text.toLowerCase();
    const twice = given.get(folded);
    if (twice !== undefined) return apiError('conflict', `${where(twice)} and ${where(i).toLowerCase()} both give the ${name} ${JSON.stringify(text)}; ids are unique. Nothing was written.`);
    given.set(folded, i);
    const held = table.exactRows(ids.column, folded);
    if (held.length > 0) return apiError('conflict', `${where(i)} gives the ${name} ${JSON.stringify(text)}, which row ${held[0]} of "${table.name}" already has; ids are unique (leave ${name} out to get a fresh one). Nothing was written.`);
  }
  if (missing.length === 0) return [...inputs];
  const fresh = freshIds(table, ids, missing.length, [...given.keys()]);
  const rows = [...inputs];
  missing.forEach((i, n) => {
    const row = new Map(inputs[i]);
    row.set(name, fresh[n]);
    rows[i] = row;
  });
  return rows;
}

/**
 * PATCH (or PUT: `blankOthers`) of `targets` with `input`; an id column keeps its value (PUT
 * leaving it out does not blank it) and may not be changed (400, `where` naming the body).
 */
export function replacedRows(table: Table, targets: readonly number[], input: RowInput, blankOthers: boolean, ids: RowIds | null, options: PlanOptions, where: string): ReplacedRow[] | ApiError {
  const replaced: ReplacedRow[] = [];
  for (const index of targets) {
    const old = table.row(index);
    const { row, columns } = updatedRow(table, old, input, blankOthers, options, ids?.column.position);
    if (ids !== null && input.has(ids.column.name)) {
      const position = ids.column.position;
      const before = old.text[position] ?? '';
      if (!sameId(before, row.text[position] ?? '')) {
        return apiError('invalid_body', `${where} changes the ${ids.column.name} of row ${index} from ${JSON.stringify(before)} to ${JSON.stringify(row.text[position] ?? '')}; a row's id never changes (leave ${ids.column.name} out).`);
      }
    }
    replaced.push({ index, row, columns });
  }
  return replaced;
}

export function rowNotFound(table: Table, index: number): ApiError {
  const last = table.rowCount === 0 ? 'it has no data rows' : `its rows are 0 to ${table.rowCount - 1}`;
  return apiError('row_not_found', `The tab "${table.name}" has no row ${index}; ${last}.`);
}

/** A body must name at least one column, or a typo would write a blank row or change nothing. */
export function knownColumns(table: Table, input: RowInput, element?: number | string): true | ApiError {
  for (const key of input.keys()) if (table.column(key) !== undefined) return true;
  const where = element === undefined ? 'The body' : typeof element === 'string' ? element : `Element ${element}`;
  const names = table.columns.map((column) => JSON.stringify(column.name)).join(', ');
  const given = input.size === 0 ? 'no columns' : [...input.keys()].map((key) => JSON.stringify(key)).join(', ');
  return apiError('invalid_body', `${where} names none of the columns of "${table.name}" (${names || 'none'}); it gives ${given}.`);
}

/** The keys of `inputs` that are not columns, each once, in the order the body first gives them. */
export function unknownKeys(table: Table, inputs: readonly RowInput[]): string[] {
  const unknown = new Set<string>();
  for (const input of inputs) for (const key of input.keys()) if (table.column(key) === undefined) unknown.add(key);
  return [...unknown];
}

/** `"unknownColumns": "reject"`: 400 naming the keys that are not columns, and the columns there are. */
export function unknownColumns(table: Table, where: string, unknown: readonly string[]): ApiError {
  const names = table.columns.map((column) => JSON.stringify(column.name)).join(', ');
  const keys = unknown.map((key) => JSON.stringify(key)).join(', ');
  return apiError('unknown_column', `${where} names ${unknown.length === 1 ? 'a column' : 'columns'} the tab "${table.name}" does not have: ${keys}; its columns are ${names || '(none)'}. Nothing was written.`);
}

/** The most names `Sheetrest-Ignored-Columns` lists; a body with more ends the list with `...`. */
const MAX_IGNORED_NAMED = 100;

/**
 * `Sheetrest-Ignored-Columns: Cty, Emial`. A header holds visible ASCII only, and the list is
 * comma-separated: a name with anything else (`Città`, `a,b`, `%`) is percent-encoded
 * (`Citt%C3%A0`), as `decodeURIComponent` reads it back.
 */
export function ignoredColumnsHeader(unknown: readonly string[]): string {
  const named = unknown.slice(0, MAX_IGNORED_NAMED).map((name) => (/^[\x21-\x7e]+(?: [\x21-\x7e]+)*$/.test(name) && !/[,%]/.test(name) ? name : encodeURIComponent(name)));
  if (unknown.length > MAX_IGNORED_NAMED) named.push('...');
  return named.join(', ');
}

export function withIgnored(planned: PlannedWrite, unknown: readonly string[]): PlannedWrite {
  if (unknown.length === 0) return planned;
  return { ...planned, headers: { ...planned.headers, 'Sheetrest-Ignored-Columns': ignoredColumnsHeader(unknown) } };
}

/** `keep`: a column PUT does not blank when the body leaves it out (the row id). */
export function updatedRow(table: Table, old: SheetRow, input: RowInput, blankOthers: boolean, options: PlanOptions, keep?: number): { row: SheetRow; columns: number[] } {
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
    if (!given && (!blankOthers || column.position === keep)) continue;
    const cell = coerceWritten(given ? input.get(column.name)! : null, options.formulas);
    text[column.position] = cell.text;
    value[column.position] = cell.value;
    formula[column.position] = cell.formula;
    columns.push(column.position);
  }
  const row = formula.some((entry) => entry !== undefined) ? { text, value, formula } : { text, value };
  return { row, columns };
}

export function rowsJson(table: Table, rows: readonly SheetRow[]): string {
  return '[' + rows.map((row) => objectJson(table.columns, row, false)).join(',') + ']';
}
