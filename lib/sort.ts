// GET /sheets/demo?_sort=City,-Age -> rows by City (case-insensitive), then Age descending.
// Numbers and dates by value, text case-insensitively, stable, empty cells last either way.
import { compareCodePoints, dateKey } from './compare.ts';
import { isApiError, type ApiError } from './errors.ts';
import type { SortKey } from './parse-request.ts';
import { columnOf } from './query.ts';
import type { Table } from './table.ts';
import { isSheetDate, type TypedValue } from './workbook.ts';

/** Kinds in the order a mixed column sorts them; empty cells come after all of them. */
const NUMBER = 0;
const DATE = 1;
const BOOLEAN = 2;
const TEXT = 3;
const EMPTY = 4;

interface SortColumn {
  readonly kinds: Uint8Array;
  readonly numbers: Float64Array;
  readonly texts: readonly string[];
  readonly descending: boolean;
}

/** Sorts `indexes` (data-row indexes) in place and returns them, or an error for an unknown column. */
export function sortRows(table: Table, indexes: number[], keys: readonly SortKey[]): number[] | ApiError {
  if (keys.length === 0) return indexes;
  const columns: SortColumn[] = [];
  for (const key of keys) {
    const column = columnOf(table, key.column);
    if (isApiError(column)) return column;
    columns.push(sortColumn(table.values(column), table.folded(column), key.descending));
  }
  // Array.prototype.sort is stable, so equal rows keep sheet order.
  return indexes.sort((a, b) => {
    for (const column of columns) {
      const order = compareCells(column, a, b);
      if (order !== 0) return order;
    }
    return 0;
  });
}

/** Sort keys of every data row of one column, computed once per request. */
function sortColumn(values: readonly TypedValue[], folded: readonly string[], descending: boolean): SortColumn {
  const kinds = new Uint8Array(values.length);
  const numbers = new Float64Array(values.length);
  const texts: string[] = new Array(values.length);
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (typeof value === 'number') {
      kinds[index] = NUMBER;
      numbers[index] = value;
    } else if (isSheetDate(value)) {
      kinds[index] = DATE;
      texts[index] = dateKey(value);
    } else if (typeof value === 'boolean') {
      kinds[index] = BOOLEAN;
      numbers[index] = value ? 1 : 0;
    } else if (folded[index] === '') {
      kinds[index] = EMPTY;
    } else {
      kinds[index] = TEXT;
      texts[index] = folded[index];
    }
  }
  return { kinds, numbers, texts, descending };
}

function compareCells(column: SortColumn, a: number, b: number): number {
  const kindA = column.kinds[a];
  const kindB = column.kinds[b];
  if (kindA === EMPTY || kindB === EMPTY) return kindA === kindB ? 0 : kindA === EMPTY ? 1 : -1;
  let order: number;
  if (kindA !== kindB) order = kindA - kindB;
  else if (kindA === NUMBER || kindA === BOOLEAN) order = column.numbers[a] - column.numbers[b];
  else order = compareCodePoints(column.texts[a], column.texts[b]);
  return column.descending ? -order : order;
}
