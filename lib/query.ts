// GET /sheets/demo/query?Age=__gte(18)&Age=__lt(65) -> rows whose Age is in [18, 65).
// Turns `/{Column}/{Value}`, `/search` and `/query` conditions into row tests, checking every
// column and operator first: a typo is an error, never "every row" or "none".
import { compareCodePoints, dateKey, numericText, operandDate, operandNumber } from './compare.ts';
import { apiError, isApiError, type ApiError } from './errors.ts';
import { compileMatcher, containedText, exactValue, fold } from './match.ts';
import type { Condition } from './parse-request.ts';
import type { Column, Table } from './table.ts';
import { isSheetDate } from './workbook.ts';

export const OPERATORS = ['eq', 'ne', 'lt', 'lte', 'gt', 'gte'] as const;
export type Operator = (typeof OPERATORS)[number];

export function isOperator(name: string): name is Operator {
  return (OPERATORS as readonly string[]).includes(name);
}

/** A test of one data row, by index. */
export type RowTest = (index: number) => boolean;

export interface RowFilter {
  readonly test: RowTest;
  /** Exactly the rows that pass, ascending, when the column's index gives them without a scan. */
  readonly rows?: readonly number[];
}

export function unknownColumn(table: Table, name: string): ApiError {
  const names = table.columns.map((column) => JSON.stringify(column.name)).join(', ');
  return apiError('unknown_column', `The tab "${table.name}" has no column "${name}"; its columns are ${names || '(none)'}.`);
}

export function columnOf(table: Table, name: string): Column | ApiError {
  return table.column(name) ?? unknownColumn(table, name);
}

/** `/{Column}/{Value}` and `/search`: the displayed text matches the pattern, case-insensitively. */
export function matchTest(table: Table, columnName: string, pattern: string): RowFilter | ApiError {
  const column = columnOf(table, columnName);
  if (isApiError(column)) return column;
  return patternFilter(table, column, pattern);
}

function patternFilter(table: Table, column: Column, pattern: string): RowFilter {
  // Folded only if a row is tested: an index may answer alone (after a write, carrying the
  // column's folded text over costs a copy of it).
  let folded: readonly string[] | undefined;
  const textAt = (index: number): string => (folded ??= table.folded(column))[index];
  const exact = exactValue(pattern);
  if (exact !== null) return { test: (index) => textAt(index) === exact, rows: table.exactRows(column, exact) };
  const needle = containedText(pattern);
  if (needle !== null) {
    const test: RowTest = (index) => textAt(index).includes(needle);
    const rows = (needle.length >= 3 ? table.containingRows(column, needle) : null) ?? table.scanRows(column, (text) => text.includes(needle));
    return rows === null ? { test } : { test, rows };
  }
  const matches = compileMatcher(pattern);
  const rows = table.scanRows(column, matches);
  return rows === null ? { test: (index) => matches(textAt(index)) } : { test: (index) => matches(textAt(index)), rows };
}

export function searchTests(table: Table, conditions: readonly Condition[]): RowFilter[] | ApiError {
  const tests: RowFilter[] = [];
  for (const { key, value } of conditions) {
    const test = matchTest(table, key, value);
    if (isApiError(test)) return test;
    tests.push(test);
  }
  return tests;
}

const OPERATOR_CALL = /^__([A-Za-z]+)\((.*)\)$/s;

export function queryTests(table: Table, conditions: readonly Condition[]): RowFilter[] | ApiError {
  const tests: RowFilter[] = [];
  for (const condition of conditions) {
    const parsed = parseQueryCondition(table, condition);
    if (!('operator' in parsed)) return parsed;
    tests.push(comparisonTest(table, parsed.column, parsed.operator, parsed.operand));
  }
  return tests;
}

interface QueryCondition {
  readonly column: Column;
  readonly operator: Operator;
  readonly operand: string;
}

/** `Col=__op(value)`, `Col__op=value`, or `Col=value` (equality). */
function parseQueryCondition(table: Table, { key, value }: Condition): QueryCondition | ApiError {
  let column = table.column(key);
  let operator: string = 'eq';
  let operand = value;
  if (column === undefined) {
    const split = /^(.+)__([A-Za-z]+)$/s.exec(key);
    if (split === null) return unknownColumn(table, key);
    column = table.column(split[1]);
    if (column === undefined) return unknownColumn(table, split[1]);
    operator = split[2];
  } else if (value.startsWith('__') && /^__[A-Za-z]/.test(value)) {
    const call = OPERATOR_CALL.exec(value);
    if (call === null) {
      return apiError('invalid_operator', `"${value}" is not an operator call; write ${key}=__op(value) with op one of ${OPERATORS.join(', ')}.`);
    }
    operator = call[1];
    operand = call[2];
  }
  if (!isOperator(operator)) {
    return apiError('invalid_operator', `"__${operator}" is not an operator; use one of ${OPERATORS.map((name) => '__' + name).join(', ')}.`);
  }
  // Every filled cell sorts after "" (and nearly every one after " "), so `__gt()` would match them
  // all: a missing value, not a question. `__eq()` and `__ne()` keep their meaning: an empty cell, a filled cell.
  if (operand.trim() === '' && operator !== 'eq' && operator !== 'ne') {
    return apiError('invalid_parameter', `__${operator} needs a value to compare with; write ${column.name}=__${operator}(value).`);
  }
  return { column, operator, operand };
}

function comparisonTest(table: Table, column: Column, operator: Operator, operand: string): RowFilter {
  if (operator === 'eq') return patternFilter(table, column, operand);
  if (operator === 'ne') {
    const { test } = patternFilter(table, column, operand);
    return { test: (index) => !test(index) };
  }
  const accepts = ORDER_TESTS[operator];
  const number = operandNumber(operand);
  const date = operandDate(operand);
  const text = fold(operand);
  const folded = table.folded(column);
  const values = table.values(column);
  const test: RowTest = (index) => {
    const value = values[index];
    if (number !== null) {
      // Numeric text (`503.60` in a CSV file) compares by value too: `amount=__gt(4999)` means
      // an amount, whatever the file stored it as.
      const cellNumber = typeof value === 'number' ? value : typeof value === 'string' ? numericText(value) : null;
      if (cellNumber !== null) return accepts(cellNumber < number ? -1 : cellNumber > number ? 1 : 0);
    }
    if (isSheetDate(value) && date !== null) return accepts(compareCodePoints(dateKey(value), date));
    // An empty cell never satisfies an order comparison.
    if (folded[index] === '') return false;
    return accepts(compareCodePoints(folded[index], text));
  };
  return { test };
}

const ORDER_TESTS: Record<'lt' | 'lte' | 'gt' | 'gte', (order: number) => boolean> = {
  lt: (order) => order < 0,
  lte: (order) => order <= 0,
  gt: (order) => order > 0,
  gte: (order) => order >= 0,
};
