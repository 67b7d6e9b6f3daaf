// GET /sheets/demo/aggregate?_agg=count()&_group=City,Year -> which answer row each matched row
// counts in: one group per distinct combination of the group columns' displayed values, in the
// order they are first met, folded (case-insensitive) unless the request is case-sensitive.
// Each column's values are numbered once per table (`columnCodes`), so a request groups by
// looking numbers up, never by hashing text.
import type { Column, Table } from '../table.ts';
import { cellText } from '../workbook.ts';

/** A column's distinct values as numbers 0, 1, 2... (in row order), one per data row. */
export interface ColumnCodes {
  readonly codes: Int32Array;
  readonly distinct: number;
  /** The code of the empty cell, -1 when the column has none. */
  readonly empty: number;
}

export function columnCodes(table: Table, column: Column, caseSensitive: boolean): ColumnCodes {
  return table.columnWork(caseSensitive ? 'codes:sensitive' : 'codes', column, () => {
    const texts = caseSensitive ? null : table.folded(column);
    const codes = new Int32Array(table.rowCount);
    const numbering = new Map<string, number>();
    for (let index = 0; index < table.rowCount; index++) {
      const text = texts === null ? cellText(table.row(index), column.position) : texts[index];
      let code = numbering.get(text);
      if (code === undefined) {
        code = numbering.size;
        numbering.set(text, code);
      }
      codes[index] = code;
    }
    return { codes, distinct: numbering.size, empty: numbering.get('') ?? -1 };
  });
}

export interface Groups {
  readonly count: number;
  /** The group of each matched row, by its place in the matched rows. */
  readonly of: Int32Array;
  /** The first data row met in each group: the one whose values the group shows. */
  readonly first: readonly number[];
}

/** Groups the matched rows (data-row indexes, ascending) by `columns`; no column: one group of them all. */
export function groupRows(table: Table, columns: readonly Column[], matched: readonly number[], caseSensitive: boolean): Groups {
  const of = new Int32Array(matched.length);
  if (columns.length === 0) return { count: 1, of, first: [matched[0] ?? -1] };
  // The first column numbers the groups through an array indexed by its codes.
  const { codes, distinct } = columnCodes(table, columns[0], caseSensitive);
  const numbered = new Int32Array(distinct).fill(-1);
  let first: number[] = [];
  for (let k = 0; k < matched.length; k++) {
    const row = matched[k];
    const code = codes[row];
    let group = numbered[code];
    if (group === -1) {
      group = numbered[code] = first.length;
      first.push(row);
    }
    of[k] = group;
  }
  // Each further column splits the groups so far: group g and code c make the key g * distinct + c
  // (below 2^53: both are below the row count).
  for (let step = 1; step < columns.length; step++) {
    const { codes, distinct } = columnCodes(table, columns[step], caseSensitive);
    const keys = new Map<number, number>();
    const next: number[] = [];
    for (let k = 0; k < matched.length; k++) {
      const row = matched[k];
      const key = of[k] * distinct + codes[row];
      let group = keys.get(key);
      if (group === undefined) {
        keys.set(key, (group = next.length));
        next.push(row);
      }
      of[k] = group;
    }
    first = next;
  }
  return { count: first.length, of, first };
}

/** The text a case-insensitive request compares: folded (`fold`), or as displayed. */
export function comparedText(table: Table, column: Column, caseSensitive: boolean): (row: number) => string {
  if (!caseSensitive) {
    const folded = table.folded(column);
    return (row) => folded[row];
  }
  return (row) => cellText(table.row(row), column.position);
}
