// `count()`, `count(Col)`, `count_distinct(Col)`, `sum(Col)`, `avg(Col)`, `min(Col)`, `max(Col)`
// over grouped rows: each call runs once over the matched rows and answers one cell per group,
// as an answer row's cell (displayed text and typed value). Counts are numbers, 0 over no rows;
// sum and avg take numeric cells only (numbers and numeric text, `Table.numbers`); min and max
// compare as `__lt` does (numbers with numbers, dates with dates, text with text), and a
// column holding several kinds answers with its numbers if the matched rows have any, else its
// dates, else its text.
// Any other call over no cells is an empty cell.
import { parseIsoDate } from '../coerce.ts';
import { compareCodePoints, dateKey } from '../compare.ts';
import type { Column, Table } from '../table.ts';
import { isSheetDate, type TypedValue } from '../workbook.ts';
import type { AggregateCall } from './parse.ts';
import { columnCodes, comparedText, type Groups } from './groups.ts';

/** One cell of an answer row. */
export interface AnswerCell {
  readonly text: string;
  readonly value: TypedValue;
}

const EMPTY: AnswerCell = { text: '', value: null };

/**
 * The cells of `call` for each group, `column` being its column (null for `count()`). `sums`
 * holds the sums worked out by this request's calls so far, by column, so that `sum(Amount)`
 * and `avg(Amount)` add the column up once.
 */
export function callCells(table: Table, call: AggregateCall, column: Column | null, matched: readonly number[], groups: Groups, caseSensitive: boolean, sums: Map<number, Sums>): AnswerCell[] {
  if (column === null) {
    const totals = new Float64Array(groups.count);
    for (let k = 0; k < matched.length; k++) totals[groups.of[k]]++;
    return Array.from(totals, numberCell);
  }
  switch (call.fn) {
    case 'count': {
      const folded = table.folded(column);
      const totals = new Float64Array(groups.count);
      for (let k = 0; k < matched.length; k++) if (folded[matched[k]] !== '') totals[groups.of[k]]++;
      return Array.from(totals, numberCell);
    }
    case 'count_distinct':
      return distinctCounts(table, column, matched, groups, caseSensitive);
    case 'sum':
    case 'avg': {
      let added = sums.get(column.position);
      if (added === undefined) sums.set(column.position, (added = addUp(table.numbers(column), matched, groups)));
      return sumCells(added, call.fn === 'avg');
    }
    case 'min':
    case 'max':
      return extremes(table, column, matched, groups, caseSensitive, call.fn === 'min' ? -1 : 1);
  }
}

/** Distinct non-empty values, compared as the groups are (folded unless case-sensitive). */
function distinctCounts(table: Table, column: Column, matched: readonly number[], groups: Groups, caseSensitive: boolean): AnswerCell[] {
  const { codes, distinct, empty } = columnCodes(table, column, caseSensitive);
  const totals = new Float64Array(groups.count);
  // Group g and code c are seen once: key g * distinct + c (below 2^53).
  const seen = new Set<number>();
  for (let k = 0; k < matched.length; k++) {
    const code = codes[matched[k]];
    if (code === empty) continue;
    const key = groups.of[k] * distinct + code;
    if (seen.has(key)) continue;
    seen.add(key);
    totals[groups.of[k]]++;
  }
  return Array.from(totals, numberCell);
}

/** Each group's sum of its numeric cells, and how many there were. */
export interface Sums {
  readonly totals: Float64Array;
  readonly counts: Float64Array;
}

/** Neumaier's compensated summation, so that the order of the rows does not show in the digits. */
function addUp(numbers: Float64Array, matched: readonly number[], groups: Groups): Sums {
  const totals = new Float64Array(groups.count);
  const compensations = new Float64Array(groups.count);
  const counts = new Float64Array(groups.count);
  const of = groups.of;
  for (let k = 0; k < matched.length; k++) {
    const number = numbers[matched[k]];
    if (number !== number) continue; // NaN: not a number
    const group = of[k];
    const total = totals[group];
    const sum = total + number;
    compensations[group] += Math.abs(total) >= Math.abs(number) ? total - sum + number : number - sum + total;
    totals[group] = sum;
    counts[group]++;
  }
  for (let group = 0; group < groups.count; group++) totals[group] += compensations[group];
  return { totals, counts };
}

/** The sums, or their averages; empty for a group without a numeric cell. */
function sumCells({ totals, counts }: Sums, average: boolean): AnswerCell[] {
  const cells = new Array<AnswerCell>(totals.length);
  for (let group = 0; group < totals.length; group++) cells[group] = counts[group] === 0 ? EMPTY : numberCell(average ? totals[group] / counts[group] : totals[group]);
  return cells;
}

/** The dates of a column by row, as text that sorts as they do (date cells and ISO date text); undefined elsewhere. */
function dateKeys(table: Table, column: Column): readonly (string | undefined)[] {
  return table.columnWork('dateKeys', column, () => {
    const values = table.values(column);
    const keys = new Array<string | undefined>(values.length);
    for (let index = 0; index < values.length; index++) {
      const value = values[index];
      const date = isSheetDate(value) ? value : typeof value === 'string' ? parseIsoDate(value) : null;
      if (date !== null) keys[index] = dateKey(date);
    }
    return keys;
  });
}

/**
 * min (`sign` -1) or max (1) per group, comparing as `__lt` does. The kind compared is the
 * column's over the matched rows: its numbers if it has any, else its dates, else its text, so
 * that every group answers the same kind (a group holding none of it answers an empty cell).
 */
function extremes(table: Table, column: Column, matched: readonly number[], groups: Groups, caseSensitive: boolean, sign: number): AnswerCell[] {
  const numbers = table.numbers(column);
  const cells = new Array<AnswerCell>(groups.count).fill(EMPTY);
  if (matched.some((row) => numbers[row] === numbers[row])) {
    const best = new Float64Array(groups.count);
    const found = new Uint8Array(groups.count);
    for (let k = 0; k < matched.length; k++) {
      const number = numbers[matched[k]];
      if (number !== number) continue;
      const group = groups.of[k];
      // Ties keep the first met.
      if (found[group] === 0 || (number - best[group]) * sign > 0) {
        found[group] = 1;
        best[group] = number;
      }
    }
    // A cell's own number, unrounded: min and max compute nothing that could carry binary noise.
    for (let group = 0; group < groups.count; group++) if (found[group] === 1) cells[group] = ownNumberCell(best[group]);
    return cells;
  }
  const dates = dateKeys(table, column);
  const folded = table.folded(column);
  const hasDates = matched.some((row) => dates[row] !== undefined);
  const texts = comparedText(table, column, caseSensitive);
  const keyOf = hasDates ? (row: number) => dates[row] : (row: number) => (folded[row] === '' ? undefined : texts(row));
  const bestKey: (string | undefined)[] = new Array(groups.count);
  const bestRow = new Int32Array(groups.count);
  for (let k = 0; k < matched.length; k++) {
    const row = matched[k];
    const key = keyOf(row);
    if (key === undefined) continue;
    const group = groups.of[k];
    const best = bestKey[group];
    if (best === undefined || compareCodePoints(key, best) * sign > 0) {
      bestKey[group] = key;
      bestRow[group] = row;
    }
  }
  for (let group = 0; group < groups.count; group++) {
    if (bestKey[group] === undefined) continue;
    // A date or a text answers as its cell shows it.
    const row = table.row(bestRow[group]);
    cells[group] = { text: row.text[column.position] ?? '', value: row.value[column.position] ?? null };
  }
  return cells;
}

/**
 * A computed number (a sum, an average) as an answer cell: its shortest text (`String`), after
 * rounding away binary noise to 15 significant digits, as a spreadsheet shows it (0.1 + 0.2 is
 * `0.3`, not `0.30000000000000004`). Whole numbers up to 2^53 stay exact.
 */
export function numberCell(number: number): AnswerCell {
  return ownNumberCell(Number.isSafeInteger(number) || !Number.isFinite(number) ? number : Number(number.toPrecision(15)));
}

/** A cell's own number (min, max) as an answer cell, as it is: nothing computed, nothing to round. */
function ownNumberCell(number: number): AnswerCell {
  const value = number === 0 ? 0 : number;
  return { text: String(value), value };
}
