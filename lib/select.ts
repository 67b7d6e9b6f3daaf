// GET /sheets/demo/search?City=lisbon&Name=*an*&_sort=Age&_offset=10&_limit=10 -> the rows to
// answer. Order of work: match, sort, offset, limit. `total` is X-Total-Count: the matching rows
// before offset and limit.
import { isApiError, type ApiError } from './errors.ts';
import type { ConditionSet, ReadParameters, Target } from './parse-request.ts';
import { columnOf, conditionFilters, matchTest, type ConditionMode, type RowFilter, type RowTest } from './query.ts';
import { sortRows } from './sort.ts';
import type { Column, Table } from './table.ts';

export interface Selection {
  /** Data-row indexes, in answer order. */
  readonly indexes: readonly number[];
  readonly total: number;
}

/** The rows a target addresses, in sheet order, before sort and slicing. */
export function matchRows(table: Table, target: Target): number[] | ApiError {
  const filters = rowFilters(table, target);
  if (isApiError(filters)) return filters;
  return rowsPassing(table, filters);
}

/**
 * The rows passing a set of `/search` or `/query` conditions (with its `_or` groups and
 * `_case`), in sheet order: the one entry point for any target that carries conditions.
 */
export function conditionRows(table: Table, mode: ConditionMode, set: ConditionSet): number[] | ApiError {
  const filters = conditionFilters(table, mode, set);
  if (isApiError(filters)) return filters;
  return rowsPassing(table, filters);
}

function rowsPassing(table: Table, filters: readonly RowFilter[]): number[] {
  // A filter its column's index answers gives the candidates; the fewest are checked against the rest.
  let indexed: RowFilter | undefined;
  for (const filter of filters) {
    if (filter.rows !== undefined && (indexed === undefined || filter.rows.length < indexed.rows!.length)) indexed = filter;
  }
  const tests = filters.filter((filter) => filter !== indexed).map((filter) => filter.test);
  if (indexed !== undefined) {
    const candidates = indexed.rows!;
    if (tests.length === 0) return [...candidates];
    const passed = scratch(candidates.length);
    let count = 0;
    if (tests.length === 1) {
      const [test] = tests;
      for (let k = 0; k < candidates.length; k++) if (test(candidates[k])) passed[count++] = candidates[k];
    } else {
      for (let k = 0; k < candidates.length; k++) if (passesAll(tests, candidates[k])) passed[count++] = candidates[k];
    }
    return rowList(passed, count);
  }
  if (tests.length === 0) {
    // Every row (a `/query` or an aggregate without conditions): filled in place, not grown.
    const all = new Array<number>(table.rowCount);
    for (let index = 0; index < table.rowCount; index++) all[index] = index;
    return all;
  }
  const passed = scratch(table.rowCount);
  let count = 0;
  if (tests.length === 1) {
    const [test] = tests;
    for (let index = 0; index < table.rowCount; index++) if (test(index)) passed[count++] = index;
  } else {
    for (let index = 0; index < table.rowCount; index++) if (passesAll(tests, index)) passed[count++] = index;
  }
  return rowList(passed, count);
}

/** Every test passes row `index` (a loop, not `every` with a closure made per row). */
function passesAll(tests: readonly RowTest[], index: number): boolean {
  for (let t = 0; t < tests.length; t++) if (!tests[t](index)) return false;
  return true;
}

/**
 * Where a scan writes the rows it keeps, reused by every scan: `*ann*` keeping 250k of 1M rows
 * grew an array by `push` through some 30 copies (about three times the answer's size in
 * garbage, most of it too large for the young generation); now one array of the kept count.
 */
let scratchRows = new Int32Array(0);

function scratch(rows: number): Int32Array {
  if (scratchRows.length < rows) scratchRows = new Int32Array(rows);
  return scratchRows;
}

/** The first `count` rows of `passed`, as a list of exactly that length. */
function rowList(passed: Int32Array, count: number): number[] {
  const rows = new Array<number>(count);
  for (let k = 0; k < count; k++) rows[k] = passed[k];
  return rows;
}

/** Every row, in sheet order: plain reads, indexes and slices (`/search` and `/query` test conditions). */
export function isWholeTable(target: Target): boolean {
  return target.kind === 'rows' || target.kind === 'index' || target.kind === 'slice';
}

function rowFilters(table: Table, target: Target): RowFilter[] | ApiError {
  switch (target.kind) {
    case 'match': {
      const test = matchTest(table, target.column, target.pattern);
      return isApiError(test) ? test : [test];
    }
    case 'search':
    case 'query':
      return conditionFilters(table, target.kind, target);
    default:
      return [];
  }
}

export function selectRows(table: Table, target: Target, read: ReadParameters): Selection | ApiError {
  if (isWholeTable(target) && read.sort.length === 0) {
    // Nothing to match or sort: only the rows of the page are listed.
    const end = read.limit === null ? table.rowCount : Math.min(table.rowCount, read.offset + read.limit);
    const indexes: number[] = [];
    for (let index = read.offset; index < end; index++) indexes.push(index);
    return { indexes, total: table.rowCount };
  }
  const matched = matchRows(table, target);
  if (isApiError(matched)) return matched;
  const sorted = sortRows(table, matched, read.sort);
  if (isApiError(sorted)) return sorted;
  const end = read.limit === null ? undefined : read.offset + read.limit;
  const indexes = read.offset === 0 && end === undefined ? sorted : sorted.slice(read.offset, end);
  return { indexes, total: sorted.length };
}

/** `_select=Name,Age`: those columns, in that order; the table's own list when there is no `_select`. */
export function selectedColumns(table: Table, select: readonly string[] | null): readonly Column[] | ApiError {
  if (select === null) return table.columns;
  const columns: Column[] = [];
  for (const name of select) {
    const column = columnOf(table, name);
    if (isApiError(column)) return column;
    columns.push(column);
  }
  return columns;
}
