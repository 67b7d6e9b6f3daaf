// GET /sheets/demo/query?City=__in(Lisbon,Porto)&Age=__between(18,65) -> rows whose City is
// Lisbon or Porto and whose Age is 18 to 65. The `/query` operators, one table: what each
// takes (its form, checked by query.ts) and the row filter it builds on the tab's indexes.
import { compareCodePoints, dateKey, numericText, operandDate, operandNumber } from './compare.ts';
import { parseIsoDate } from './coerce.ts';
import { fold } from './match.ts';
import { anyOf, containsFilter, displayedText, indexedTextFilter, patternFilter, type RowFilter, type RowTest } from './row-filter.ts';
import type { Column, Table } from './table.ts';
import { isSheetDate } from './workbook.ts';

/** What an operator takes between its parentheses. */
export type Operands =
  /** A pattern, the whole text, commas and all (`__eq(Smith, Ann)`, `__eq()` for empty cells). */
  | 'pattern'
  /** A value to compare with, the whole text, not blank. */
  | 'value'
  /** Literal text to look for, the whole text, not empty. */
  | 'text'
  /** Comma-separated items, at least one (`\,` is a comma in an item). */
  | 'list'
  /** Exactly two comma-separated items. */
  | 'two'
  /** Nothing: `__empty()`. */
  | 'none';

export interface OperatorSpec {
  readonly operands: Operands;
  /** How to write it, for error messages: `__between(low,high)`. */
  readonly form: string;
  readonly filter: (table: Table, column: Column, operands: readonly string[], caseSensitive: boolean) => RowFilter;
}

/** Every operator, in the order error messages and the docs list them. */
export const OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte', 'between', 'in', 'nin', 'contains', 'startswith', 'endswith', 'empty', 'filled'] as const;
export type Operator = (typeof OPERATORS)[number];

const OPERATOR_SPECS: Readonly<Record<Operator, OperatorSpec>> = {
  eq: { operands: 'pattern', form: '__eq(value)', filter: (table, column, [value], caseSensitive) => patternFilter(table, column, value, caseSensitive) },
  ne: { operands: 'pattern', form: '__ne(value)', filter: (table, column, [value], caseSensitive) => not(patternFilter(table, column, value, caseSensitive)) },
  lt: { operands: 'value', form: '__lt(value)', filter: (table, column, [value], caseSensitive) => orderFilter(table, column, caseSensitive, [value, (order) => order < 0]) },
  lte: { operands: 'value', form: '__lte(value)', filter: (table, column, [value], caseSensitive) => orderFilter(table, column, caseSensitive, [value, (order) => order <= 0]) },
  gt: { operands: 'value', form: '__gt(value)', filter: (table, column, [value], caseSensitive) => orderFilter(table, column, caseSensitive, [value, (order) => order > 0]) },
  gte: { operands: 'value', form: '__gte(value)', filter: (table, column, [value], caseSensitive) => orderFilter(table, column, caseSensitive, [value, (order) => order >= 0]) },
  between: {
    operands: 'two',
    form: '__between(low,high)',
    filter: (table, column, [low, high], caseSensitive) => orderFilter(table, column, caseSensitive, [low, (order) => order >= 0], [high, (order) => order <= 0]),
  },
  in: { operands: 'list', form: '__in(a,b,...)', filter: inFilter },
  nin: { operands: 'list', form: '__nin(a,b,...)', filter: (table, column, items, caseSensitive) => not(inFilter(table, column, items, caseSensitive)) },
  contains: { operands: 'text', form: '__contains(text)', filter: (table, column, [text], caseSensitive) => literalFilter(table, column, text, caseSensitive, 'contains') },
  startswith: { operands: 'text', form: '__startswith(text)', filter: (table, column, [text], caseSensitive) => literalFilter(table, column, text, caseSensitive, 'startswith') },
  endswith: { operands: 'text', form: '__endswith(text)', filter: (table, column, [text], caseSensitive) => literalFilter(table, column, text, caseSensitive, 'endswith') },
  empty: { operands: 'none', form: '__empty()', filter: (table, column) => patternFilter(table, column, '') },
  filled: { operands: 'none', form: '__filled()', filter: (table, column) => not(patternFilter(table, column, '')) },
};

export function isOperator(name: string): name is Operator {
  return Object.hasOwn(OPERATOR_SPECS, name);
}

export function operatorSpec(operator: Operator): OperatorSpec {
  return OPERATOR_SPECS[operator];
}

function not({ test }: RowFilter): RowFilter {
  return { test: (index) => !test(index) };
}

/** `__in(a,b)`: any item matches as `__eq` would; items without `*` are looked up in the column's index. */
function inFilter(table: Table, column: Column, items: readonly string[], caseSensitive: boolean): RowFilter {
  if (!caseSensitive && items.every((item) => !item.includes('*'))) {
    // One lookup per row instead of one test per item.
    const wanted = new Set(items.map(fold));
    let folded: readonly string[] | undefined;
    const test: RowTest = (index) => wanted.has((folded ??= table.folded(column))[index]);
    const rows = anyOf([...wanted].map((value) => ({ test, rows: table.exactRows(column, value) })), table.rowCount).rows!;
    return { test, rows };
  }
  return anyOf(items.map((item) => patternFilter(table, column, item, caseSensitive)), table.rowCount);
}

type Literal = 'contains' | 'startswith' | 'endswith';

const LITERAL_TESTS: Record<Literal, (text: string, needle: string) => boolean> = {
  contains: (text, needle) => text.includes(needle),
  startswith: (text, needle) => text.startsWith(needle),
  endswith: (text, needle) => text.endsWith(needle),
};

/** `__contains(x)`, `__startswith(x)`, `__endswith(x)`: literal text (a `*` is a star). */
function literalFilter(table: Table, column: Column, text: string, caseSensitive: boolean, how: Literal): RowFilter {
  const holds = LITERAL_TESTS[how];
  if (caseSensitive) {
    const textAt = displayedText(table, column);
    return { test: (index) => holds(textAt(index), text) };
  }
  const needle = fold(text);
  if (how === 'contains') return containsFilter(table, column, needle);
  return indexedTextFilter(table, column, needle, (folded) => holds(folded, needle));
}

/** An operand of an order comparison and what its order to the cell must be. */
type Bound = readonly [operand: string, accepts: (order: number) => boolean];

/** The kind of an order comparison's operand, which decides the cells it can hold for. */
export type OperandKind = 'number' | 'date' | 'text';

export function operandKind(operand: string): OperandKind {
  if (operandNumber(operand) !== null) return 'number';
  if (operandDate(operand) !== null) return 'date';
  return 'text';
}

/**
 * `__between(260,10)` -> true: the low bound comes after the high one, compared as the cells
 * will be (numbers by value, dates by date, text by code point, folded unless case-sensitive),
 * so no cell could ever lie between. The bounds are of one kind (query.ts checks that first).
 */
export function boundsReversed(low: string, high: string, caseSensitive: boolean): boolean {
  switch (operandKind(low)) {
    case 'number':
      return operandNumber(low)! > operandNumber(high)!;
    case 'date':
      return compareCodePoints(operandDate(low)!, operandDate(high)!) > 0;
    case 'text':
      return caseSensitive ? compareCodePoints(low, high) > 0 : compareCodePoints(fold(low), fold(high)) > 0;
  }
}

/**
 * `__lt`..`__gte` and `__between`, typed as a spreadsheet's filter is: a number operand holds
 * only for numbers and numeric text (`503.60`), a date operand only for dates and ISO date
 * text, a text operand only for text; so `n/a` is never `__gt(260)`. An empty cell never
 * holds. The bounds of `__between` are of one kind (query.ts checks).
 */
function orderFilter(table: Table, column: Column, caseSensitive: boolean, ...bounds: readonly Bound[]): RowFilter {
  const values = table.values(column);
  const kind = operandKind(bounds[0][0]);
  if (kind === 'number') {
    const [first, second] = bounds.map(([operand, accepts]) => [operandNumber(operand)!, accepts] as const);
    const holds = second === undefined
      ? (cell: number) => first[1](order(cell, first[0]))
      : (cell: number) => first[1](order(cell, first[0])) && second[1](order(cell, second[0]));
    return {
      test: (index) => {
        const value = values[index];
        // Numeric text (`503.60` in a CSV file) compares by value too: `amount=__gt(4999)` means
        // an amount, whatever the file stored it as.
        const cell = typeof value === 'number' ? value : typeof value === 'string' ? numericText(value) : null;
        return cell !== null && holds(cell);
      },
    };
  }
  if (kind === 'date') {
    const keys = bounds.map(([operand, accepts]) => [operandDate(operand)!, accepts] as const);
    return {
      test: (index) => {
        const value = values[index];
        const date = isSheetDate(value) ? value : typeof value === 'string' ? parseIsoDate(value) : null;
        if (date === null) return false;
        const key = dateKey(date);
        return keys.every(([operand, accepts]) => accepts(compareCodePoints(key, operand)));
      },
    };
  }
  const texts = bounds.map(([operand, accepts]) => [caseSensitive ? operand : fold(operand), accepts] as const);
  const textAt = caseSensitive ? displayedText(table, column) : undefined;
  const folded = caseSensitive ? undefined : table.folded(column);
  return {
    test: (index) => {
      if (typeof values[index] !== 'string') return false;
      const text = textAt === undefined ? folded![index] : textAt(index);
      // An empty cell never satisfies an order comparison.
      return text !== '' && texts.every(([operand, accepts]) => accepts(compareCodePoints(text, operand)));
    },
  };
}

function order(cell: number, operand: number): number {
  return cell < operand ? -1 : cell > operand ? 1 : 0;
}
