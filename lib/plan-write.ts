// PATCH /sheets/demo/Name/ann {"Age": 31} -> a write plan replacing every row whose Name is
// "ann", with only Age changed, and the answer: those rows after the write. Planning reads the
// rows as they are when the write is applied; nothing here touches a source. An upsert
// (`POST ?_upsert=Email`) is planned in plan-upsert.ts, a batch update (PATCH on the tab) in
// plan-batch.ts, both with the helpers below.
import { isApiError, type ApiError } from './errors.ts';
import type { WriteBody } from './parse-body.ts';
import type { ParsedRequest } from './parse-request.ts';
import { planBatch } from './plan-batch.ts';
import { knownColumns, readsRowsIf, replacedRows, rowNotFound, rowsJson, unknownColumns, unknownKeys, updatedRow, withIds, withIgnored, type PlannedWrite, type PlanOptions } from './plan-rows.ts';
import { planUpsert } from './plan-upsert.ts';
import { duplicateIds, rowIdsOf, type RowIds } from './row-id.ts';
import { matchRows } from './select.ts';
import { objectJson, type Table } from './table.ts';
import type { Tab } from './workbook.ts';

export { rowNotFound, type PlannedWrite, type PlanOptions } from './plan-rows.ts';

export function planWrite(tab: Tab, table: Table, request: ParsedRequest, options: PlanOptions): PlannedWrite | ApiError {
  const found = rowIdsOf(table, options);
  // A tab missing its configured id column takes no write that could need an id; a DELETE needs none.
  if (isApiError(found) && request.action !== 'delete') return found;
  const ids = isApiError(found) ? null : found;
  if (request.batch !== undefined) return planBatch(tab, table, request.batch, ids, options);
  const inputs = request.body?.rows ?? [];
  const unknown = unknownKeys(table, inputs);
  if (unknown.length > 0 && options.unknownColumns === 'reject') return unknownColumns(table, 'The body', unknown);
  const planned = plan(table, request, ids, options);
  return isApiError(planned) ? planned : withIgnored(planned, unknown);
}

function plan(table: Table, request: ParsedRequest, ids: RowIds | null, options: PlanOptions): PlannedWrite | ApiError {
  if (request.upsert !== undefined) return planUpsert(table, request.body!, request.upsert, ids, options);
  if (request.action === 'append') return planAppend(table, request.body!, ids, options);
  const targets = targetRows(table, request, ids);
  if (isApiError(targets)) return targets;
  if (request.action === 'delete') {
    const body = rowsJson(table, targets.map((index) => table.row(index)));
    return { status: 200, body, plan: targets.length === 0 ? null : { tab: table.name, replaced: [], removed: targets, appended: null } };
  }
  const [input] = request.body!.rows;
  const known = knownColumns(table, input);
  if (isApiError(known)) return known;
  const replaced = replacedRows(table, targets, input, request.action === 'put', ids, options, 'The body');
  if (isApiError(replaced)) return replaced;
  const body = rowsJson(table, replaced.map(({ row }) => row));
  return { status: 200, body, plan: replaced.length === 0 ? null : { tab: table.name, replaced, removed: [], appended: null } };
}

function planAppend(table: Table, body: WriteBody, ids: RowIds | null, options: PlanOptions): PlannedWrite | ApiError {
  for (const [i, input] of body.rows.entries()) {
    const known = knownColumns(table, input, body.single ? undefined : i);
    if (isApiError(known)) return known;
  }
  const inputs = ids === null ? body.rows : withIds(table, ids, body.rows, (i) => (body.single ? 'The body' : `Element ${i}`));
  if (isApiError(inputs)) return inputs;
  const rows = inputs.map((input) => updatedRow(table, { text: [], value: [] }, input, true, options).row);
  const json = body.single ? objectJson(table.columns, rows[0], false) : rowsJson(table, rows);
  const plan = rows.length === 0 ? null : { tab: table.name, replaced: [], removed: [], appended: { start: table.rowCount, rows }, ...readsRowsIf(ids) };
  return { status: 201, body: json, plan };
}

/** `/{n}` or `/{Column}/{Value}`: the data rows a PATCH, PUT or DELETE addresses, ascending. */
function targetRows(table: Table, request: ParsedRequest, ids: RowIds | null): number[] | ApiError {
  const { target } = request;
  if (target.kind === 'index') {
    if (target.index >= table.rowCount) return rowNotFound(table, target.index);
    return [target.index];
  }
  const rows = matchRows(table, target);
  if (isApiError(rows) || ids === null || target.kind !== 'match' || target.column !== ids.column.name) return rows;
  return duplicateIds(table, ids, rows) ?? rows;
}

