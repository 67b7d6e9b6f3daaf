// GET /sheets/demo?_sort=City,-Age -> rows by City (case-insensitive), then Age descending.
// Numbers and dates by value, text case-insensitively, stable, empty cells last either way.
import { compareCodePoints, dateKey } from './compare.ts';
import { isApiError, type ApiError } from './errors.ts';
import type { SortKey } from './parse-request.ts';
import { columnOf } from './query.ts';
import type { Column, Table } from './table.ts';
import { isSheetDate, type TypedValue } from './workbook.ts';

/** Kinds in the order a mixed column sorts them; empty cells come after all of them. */
const NUMBER = 0;
const DATE = 1;
const BOOLEAN = 2;
const TEXT = 3;
const EMPTY = 4;

/** Sort keys of every data row of one column, kept with its table (`sortKeys`). */
interface SortKeys {
  readonly kinds: Uint8Array;
  readonly numbers: Float64Array;
  /** A date's key or a text's folded text, by row; null when the column holds neither. */
  readonly texts: readonly string[] | null;
}

interface SortColumn extends SortKeys {
  readonly descending: boolean;
}

/** Sorts `indexes` (data-row indexes) in place and returns them, or an error for an unknown column. */
export function sortRows(table: Table, indexes: number[], keys: readonly SortKey[]): number[] | ApiError {
  if (keys.length === 0) return indexes;
  if (keys.length === 1 && indexes.length * 4 >= table.rowCount && table.rowCount <= MAX_RANKED_ROWS) {
    const column = columnOf(table, keys[0].column);
    if (isApiError(column)) return column;
    // The first such sort of a table compares cells, as the ranks would cost it; from the second on, ranks.
    const sorts = table.columnWork('sorts', column, () => ({ count: 0 }));
    if (++sorts.count >= 2) return sortByRank(sortRanks(table, column), indexes, keys[0].descending, table.rowCount);
  }
  const columns: SortColumn[] = [];
  for (const key of keys) {
    const column = columnOf(table, key.column);
    if (isApiError(column)) return column;
    columns.push({ ...sortKeys(table, column), descending: key.descending });
  }
  // Array.prototype.sort is stable, so equal rows keep sheet order.
  return indexes.sort((a, b) => {
    for (let k = 0; k < columns.length; k++) {
      const order = compareCells(columns[k], a, b);
      if (order !== 0) return order;
    }
    return 0;
  });
}

/**
 * `_sort=Score` on a 1M-row tab: the column's sort keys (17 MB) are worked out once per table,
 * not per request, and shared by both directions.
 */
export function sortKeys(table: Table, column: Column): SortKeys {
  return table.columnWork('sort', column, () => sortKeysOf(table.values(column), table.folded(column)));
}

/**
 * Each row's place in the column's ascending order, equal cells sharing one (`ranks`), empty
 * cells at `empty`, after every other: worked out once per table by one sort of the whole
 * column, so `_sort=Score` on 1M rows is then a sort of numbers (`sortByRank`), not of rows
 * through a comparison callback.
 */
interface SortRanks {
  readonly ranks: Uint32Array;
  readonly empty: number;
}

/** Tabs up to this many rows sort by rank: rank * rows + row stays an exact integer in a double. */
const MAX_RANKED_ROWS = 1 << 26;

function sortRanks(table: Table, column: Column): SortRanks {
  return table.columnWork('sortRanks', column, () => {
    const keys = { ...sortKeys(table, column), descending: false };
    const count = keys.kinds.length;
    const order: number[] = [];
    for (let index = 0; index < count; index++) order.push(index);
    order.sort((a, b) => compareCells(keys, a, b));
    const ranks = new Uint32Array(count);
    let rank = 0;
    let empty = -1;
    for (let k = 0; k < count; k++) {
      const index = order[k];
      if (k > 0 && compareCells(keys, order[k - 1], index) !== 0) rank++;
      if (keys.kinds[index] === EMPTY && empty === -1) empty = rank;
      ranks[index] = rank;
    }
    return { ranks, empty: empty === -1 ? rank + 1 : empty };
  });
}

/**
 * `indexes` sorted in place by their ranks, descending if asked (empty cells still last), equal
 * ranks in sheet order: each row becomes the number rank * rowCount + row, and a typed array
 * of numbers sorts without calling back into JavaScript.
 */
function sortByRank({ ranks, empty }: SortRanks, indexes: number[], descending: boolean, rowCount: number): number[] {
  const sortable = new Float64Array(indexes.length);
  for (let i = 0; i < indexes.length; i++) {
    const index = indexes[i];
    const rank = ranks[index];
    sortable[i] = (descending && rank !== empty ? empty - 1 - rank : rank) * rowCount + index;
  }
  sortable.sort();
  for (let i = 0; i < sortable.length; i++) {
    indexes[i] = sortable[i] % rowCount;
  }
  return indexes;
}

function sortKeysOf(values: readonly TypedValue[], folded: readonly string[]): SortKeys {
  const kinds = new Uint8Array(values.length);
  const numbers = new Float64Array(values.length);
  // Made for the first date or text only: a column of numbers keeps no array of 1M holes.
  let texts: string[] | null = null;
  for (let index = 0; index < values.length; index++) {
    const value = values[index];
    if (typeof value === 'number') {
      kinds[index] = NUMBER;
      numbers[index] = value;
    } else if (isSheetDate(value)) {
      kinds[index] = DATE;
      (texts ??= new Array<string>(values.length))[index] = dateKey(value);
    } else if (typeof value === 'boolean') {
      kinds[index] = BOOLEAN;
      numbers[index] = value ? 1 : 0;
    } else if (folded[index] === '') {
      kinds[index] = EMPTY;
    } else {
      kinds[index] = TEXT;
      (texts ??= new Array<string>(values.length))[index] = folded[index];
    }
  }
  return { kinds, numbers, texts };
}

function compareCells(column: SortColumn, a: number, b: number): number {
  const kindA = column.kinds[a];
  const kindB = column.kinds[b];
  if (kindA === EMPTY || kindB === EMPTY) return kindA === kindB ? 0 : kindA === EMPTY ? 1 : -1;
  let order: number;
  if (kindA !== kindB) order = kindA - kindB;
  else if (kindA === NUMBER || kindA === BOOLEAN) order = column.numbers[a] - column.numbers[b];
  else order = compareCodePoints(column.texts![a], column.texts![b]);
  return column.descending ? -order : order;
}
