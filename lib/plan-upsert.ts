// POST /sheets/crm?_upsert=Email [{"Email": "ann@x.org", "Age": 31}, {"Email": "zed@x.org", "Age": 20}]
// -> one write plan: the row whose Email is ann@x.org gets Age 31 (PATCH semantics), zed@x.org is
// appended; 201 (something was appended), `Sheetrest-Inserted: 1`, `Sheetrest-Updated: 1`. Keys
// compare as `__eq` without wildcards: the displayed text, case-insensitively, `*` a plain star.
import { coerceWritten } from './coerce.ts';
import { apiError, isApiError, type ApiError } from './errors.ts';
import { fold } from './match.ts';
import type { RowInput, WriteBody } from './parse-body.ts';
import { knownColumns, replacedRows, rowsJson, updatedRow, withIds, type PlannedWrite, type PlanOptions } from './plan-rows.ts';
import { unknownColumn } from './query.ts';
import type { RowIds } from './row-id.ts';
import { objectJson, type Column, type Table } from './table.ts';
import type { ReplacedRow } from './write-plan.ts';
import type { SheetRow } from './workbook.ts';

export function planUpsert(table: Table, body: WriteBody, key: string, ids: RowIds | null, options: PlanOptions): PlannedWrite | ApiError {
  const column = table.column(key);
  if (column === undefined) {
    const known = unknownColumn(table, key);
    return apiError('unknown_column', `_upsert=${key}: ${known.message}`);
  }
  const where = (i: number) => (body.single ? 'The body' : `Element ${i}`);
  // Every body row is checked before any row is looked up: a client error is a 400 whatever the tab holds.
  const keys: string[] = [];
  const first = new Map<string, number>();
  for (const [i, input] of body.rows.entries()) {
    const known = knownColumns(table, input, where(i));
    if (isApiError(known)) return known;
    const value = input.get(key);
    const text = value === undefined || value === null ? '' : coerceWritten(value, false).text;
    if (text.trim() === '') {
      return apiError('invalid_body', `${where(i)} gives no ${key}, the key of this upsert (_upsert=${key}): every row needs one to be matched or appended.`);
    }
    const folded = fold(text);
    const before = first.get(folded);
    if (before !== undefined) {
      return apiError('invalid_body', `Elements ${before} and ${i} have the same ${key} ${JSON.stringify(text)}; an upsert takes each key once (merge the two rows).`);
    }
    first.set(folded, i);
    keys.push(folded);
  }

  const updates: { element: number; index: number; input: RowInput }[] = [];
  const appends: number[] = [];
  const rowsOf = keyRows(table, column, keys);
  for (const [i, input] of body.rows.entries()) {
    const held = rowsOf(keys[i]);
    if (held.length > 1) {
      const shown = table.row(held[0]).text[column.position] ?? '';
      return apiError('conflict', `Rows ${held.join(', ')} of "${table.name}" all have the ${key} ${JSON.stringify(shown)}, so ${where(i).toLowerCase()} cannot tell which to update; make the key unique (or upsert by another column). Nothing was written.`);
    }
    if (held.length === 1) updates.push({ element: i, index: held[0], input });
    else appends.push(i);
  }

  const after = new Array<SheetRow>(body.rows.length);
  const replaced: ReplacedRow[] = [];
  for (const { element, index, input } of updates) {
    const rows = replacedRows(table, [index], input, false, ids, options, where(element));
    if (isApiError(rows)) return rows;
    replaced.push(rows[0]);
    after[element] = rows[0].row;
  }
  replaced.sort((a, b) => a.index - b.index);
  const inputs = appends.map((i) => body.rows[i]);
  const appendedInputs = ids === null ? inputs : withIds(table, ids, inputs, (n) => where(appends[n]));
  if (isApiError(appendedInputs)) return appendedInputs;
  const appended = appendedInputs.map((input) => updatedRow(table, { text: [], value: [] }, input, true, options).row);
  appends.forEach((element, n) => (after[element] = appended[n]));

  const json = body.single ? objectJson(table.columns, after[0], false) : rowsJson(table, after);
  const headers = { 'Sheetrest-Inserted': String(appended.length), 'Sheetrest-Updated': String(replaced.length) };
  const status = appended.length > 0 ? 201 : 200;
  if (replaced.length === 0 && appended.length === 0) return { status, body: json, plan: null, headers };
  const plan = {
    tab: table.name,
    replaced,
    removed: [],
    appended: appended.length === 0 ? null : { start: table.rowCount, rows: appended },
    // Which rows are appended depends on the keys there are: never planned on a stale copy.
    readsRows: true as const,
  };
  return { status, body: json, plan, headers };
}

/** Past this many keys, one pass over the column finds them all for less than a lookup each. */
const KEYS_PER_LOOKUP = 64;

/**
 * The rows holding each key (folded): a few keys through the column's exact index, many in one
 * scan of its folded text (1,000 lookups through an index patched by recent writes cost more
 * than reading 100k strings once).
 */
function keyRows(table: Table, column: Column, keys: readonly string[]): (key: string) => readonly number[] {
  if (keys.length <= KEYS_PER_LOOKUP) return (key) => table.exactRows(column, key);
  const found = new Map<string, number[]>(keys.map((key) => [key, []]));
  const folded = table.folded(column);
  for (let index = 0; index < table.rowCount; index++) found.get(folded[index])?.push(index);
  return (key) => found.get(key)!;
}
