// GET /sheets/demo/City/lisbon -> the rows whose City is "Lisbon" in any case, looked up in the
// column's index rather than scanned. A row filter is a test of one row plus, when an index
// answers it without a scan, exactly the rows that pass; conditions (query.ts, operators.ts)
// are built from the filters here, and `_or` groups and `__in` lists are unions of them.
import { compileMatcher, containedText, exactValue, fold } from './match.ts';
import type { Column, Table } from './table.ts';
import { cellText } from './workbook.ts';

/** A test of one data row, by index. */
export type RowTest = (index: number) => boolean;

export interface RowFilter {
  readonly test: RowTest;
  /** Exactly the rows that pass, ascending, when the column's index gives them without a scan. */
  readonly rows?: readonly number[];
}

/** The displayed text of a column's cell, as written (`_case=sensitive` compares it unfolded). */
export function displayedText(table: Table, column: Column): (index: number) => string {
  return (index) => cellText(table.row(index), column.position);
}

/**
 * `/{Column}/{Value}`, `/search` and `__eq`: the displayed text matches the pattern (`*` any
 * run of characters). Case-insensitively, unless `caseSensitive`: then the folded index gives
 * the candidates of a pattern without `*` (equal texts fold alike), and the text as written
 * decides; a pattern with `*` is a scan.
 */
export function patternFilter(table: Table, column: Column, pattern: string, caseSensitive = false): RowFilter {
  if (caseSensitive) return exactCasePatternFilter(table, column, pattern);
  // Folded only if a row is tested: an index may answer alone (after a write, carrying the
  // column's folded text over costs a copy of it).
  let folded: readonly string[] | undefined;
  const textAt = (index: number): string => (folded ??= table.folded(column))[index];
  const exact = exactValue(pattern);
  if (exact !== null) return { test: (index) => textAt(index) === exact, rows: table.exactRows(column, exact) };
  const needle = containedText(pattern);
  if (needle !== null) return containsFilter(table, column, needle);
  const matches = compileMatcher(pattern);
  const rows = table.scanRows(column, matches);
  return rows === null ? { test: (index) => matches(textAt(index)) } : { test: (index) => matches(textAt(index)), rows };
}

function exactCasePatternFilter(table: Table, column: Column, pattern: string): RowFilter {
  const textAt = displayedText(table, column);
  if (!pattern.includes('*')) {
    const test: RowTest = (index) => textAt(index) === pattern;
    return { test, rows: table.exactRows(column, fold(pattern)).filter(test) };
  }
  const matches = compileMatcher(pattern, true);
  return { test: (index) => matches(textAt(index)) };
}

/**
 * `*text*` and `__contains(text)`: the folded text holds `needle` (already folded). The
 * column's index of three-character runs gives the candidates once built; until then, a scan.
 */
export function containsFilter(table: Table, column: Column, needle: string): RowFilter {
  // indexedTextFilter's, with the test written out: a scan of 1M rows makes one call a row, not two.
  let folded: readonly string[] | undefined;
  const test: RowTest = (index) => (folded ??= table.folded(column))[index].includes(needle);
  // The index's rows are checked against the needle already (containingRows).
  const containing = needle.length >= 3 ? table.containingRows(column, needle) : null;
  if (containing !== null) return { test, rows: containing };
  const rows = table.scanRows(column, (text) => text.includes(needle));
  return rows === null ? { test } : { test, rows };
}

/**
 * A test on the folded text `keep` that only rows containing `needle` (already folded) can
 * pass (`__startswith`, `__endswith`): the candidates come from the `*needle*` index when
 * the needle is long enough and the index is built, else from a scan.
 */
export function indexedTextFilter(table: Table, column: Column, needle: string, keep: (folded: string) => boolean, containingIsExact = false): RowFilter {
  let folded: readonly string[] | undefined;
  const test: RowTest = (index) => keep((folded ??= table.folded(column))[index]);
  const containing = needle.length >= 3 ? table.containingRows(column, needle) : null;
  if (containing !== null) return { test, rows: containingIsExact ? containing : containing.filter(test) };
  const rows = table.scanRows(column, keep);
  return rows === null ? { test } : { test, rows };
}

/** The rows at least one of `filters` keeps: a union of their rows when each has them, else a test. */
export function anyOf(filters: readonly RowFilter[], rowCount: number): RowFilter {
  if (filters.length === 1) return filters[0];
  const tests = filters.map((filter) => filter.test);
  const test: RowTest = (index) => {
    for (const each of tests) if (each(index)) return true;
    return false;
  };
  const lists: (readonly number[])[] = [];
  for (const filter of filters) {
    if (filter.rows === undefined) return { test };
    lists.push(filter.rows);
  }
  return { test, rows: unionRows(lists, rowCount) };
}

/** The rows of any of `lists` (each ascending, of a tab of `rowCount` rows), ascending, each once. */
export function unionRows(lists: readonly (readonly number[])[], rowCount: number): readonly number[] {
  const nonEmpty = lists.filter((rows) => rows.length > 0);
  if (nonEmpty.length <= 1) return nonEmpty[0] ?? [];
  let total = 0;
  for (const rows of nonEmpty) total += rows.length;
  // Few rows: sort them (a typed array sorts numbers without a comparison callback). Many:
  // mark them on a map of the tab, which costs one byte a row and no sorting.
  if (total * 16 < rowCount) {
    const all = new Uint32Array(total);
    let at = 0;
    for (const rows of nonEmpty) for (const row of rows) all[at++] = row;
    all.sort();
    const union: number[] = [];
    for (let k = 0; k < all.length; k++) if (k === 0 || all[k] !== all[k - 1]) union.push(all[k]);
    return union;
  }
  const marked = new Uint8Array(rowCount);
  for (const rows of nonEmpty) for (const row of rows) marked[row] = 1;
  const union: number[] = [];
  for (let row = 0; row < rowCount; row++) if (marked[row] === 1) union.push(row);
  return union;
}
