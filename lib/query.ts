// GET /sheets/demo/query?Age=__gte(18)&Age=__lt(65) -> rows whose Age is in [18, 65).
// Turns `/{Column}/{Value}`, `/search` and `/query` conditions, and their `_or` groups, into row
// filters, checking every column, operator and operand first: a typo is an error, never
// "every row" or "none". The operators themselves are in operators.ts.
import { apiError, isApiError, type ApiError } from './errors.ts';
import { boundsReversed, isOperator, operandKind, operatorSpec, OPERATORS, type Operator } from './operators.ts';
import { splitEscaped, type Condition, type ConditionSet } from './parse-conditions.ts';
import { anyOf, patternFilter, type RowFilter } from './row-filter.ts';
import type { Column, Table } from './table.ts';

export { isOperator, OPERATORS, type Operator } from './operators.ts';
export type { RowFilter, RowTest } from './row-filter.ts';

/** `/search` conditions are patterns (`Name=jo*`); `/query` conditions are operator calls (`Age=__gt(30)`). */
export type ConditionMode = 'search' | 'query';

export function unknownColumn(table: Table, name: string): ApiError {
  const names = table.columns.map((column) => JSON.stringify(column.name)).join(', ');
  return apiError('unknown_column', `The tab "${table.name}" has no column "${name}"; its columns are ${names || '(none)'}.`);
}

export function columnOf(table: Table, name: string): Column | ApiError {
  return table.column(name) ?? unknownColumn(table, name);
}

/** `/{Column}/{Value}` and `/search`: the displayed text matches the pattern, case-insensitively unless asked. */
export function matchTest(table: Table, columnName: string, pattern: string, caseSensitive = false): RowFilter | ApiError {
  const column = columnOf(table, columnName);
  if (isApiError(column)) return column;
  return patternFilter(table, column, pattern, caseSensitive);
}

/**
 * The filters of a `/search` or `/query` request (or any target with its conditions): one per
 * condition, and one per `_or` group, which keeps the rows at least one of its conditions keeps.
 */
export function conditionFilters(table: Table, mode: ConditionMode, set: ConditionSet): RowFilter[] | ApiError {
  const filters: RowFilter[] = [];
  for (const condition of set.conditions) {
    const filter = conditionFilter(table, mode, condition, set.caseSensitive);
    if (isApiError(filter)) return filter;
    filters.push(filter);
  }
  for (const group of set.orGroups) {
    const parts: RowFilter[] = [];
    for (const condition of group) {
      const filter = conditionFilter(table, mode, condition, set.caseSensitive);
      if (isApiError(filter)) return filter;
      parts.push(filter);
    }
    filters.push(anyOf(parts, table.rowCount));
  }
  return filters;
}

function conditionFilter(table: Table, mode: ConditionMode, condition: Condition, caseSensitive: boolean): RowFilter | ApiError {
  if (mode === 'search') return matchTest(table, condition.key, condition.value, caseSensitive);
  const parsed = parseQueryCondition(table, condition);
  if (isApiError(parsed)) return parsed;
  if (parsed.operator === 'between' && boundsReversed(parsed.operands[0], parsed.operands[1], caseSensitive)) {
    // Like bounds of two kinds, a range no cell can lie in is surely a slip, never a question.
    const [low, high] = parsed.operands;
    return apiError('invalid_parameter', `__between(${low},${high}) has its low bound after its high one, so nothing could match; write ${parsed.column.name}=__between(${high},${low}).`);
  }
  return operatorSpec(parsed.operator).filter(table, parsed.column, parsed.operands, caseSensitive);
}

export interface QueryCondition {
  readonly column: Column;
  readonly operator: Operator;
  readonly operands: readonly string[];
}

/** `Col=__op(value)`, `Col__op=value`, or `Col=value` (equality). */
export function parseQueryCondition(table: Table, { key, value }: Condition): QueryCondition | ApiError {
  let column = table.column(key);
  let operator: string = 'eq';
  let operands = value;
  if (column === undefined) {
    const split = /^(.+)__([A-Za-z]+)$/s.exec(key);
    if (split === null) return unknownColumn(table, key);
    column = table.column(split[1]);
    if (column === undefined) return unknownColumn(table, split[1]);
    operator = split[2];
  } else if (/^__[A-Za-z]/.test(value)) {
    const call = operatorCall(key, value);
    if (isApiError(call)) return call;
    [operator, operands] = call;
  }
  if (!isOperator(operator)) return unknownOperator('__' + operator);
  const split = splitOperands(column.name, operator, operands);
  return isApiError(split) ? split : { column, operator, operands: split };
}

function unknownOperator(written: string): ApiError {
  return apiError('invalid_operator', `"${written}" is not an operator; use one of ${OPERATORS.map((name) => '__' + name).join(', ')}.`);
}

/** `__in(a,b)` -> ['in', 'a,b']: the operator's name and the text between its parentheses. */
function operatorCall(key: string, value: string): [string, string] | ApiError {
  const name = /^__([A-Za-z]+)/.exec(value)![1];
  const rest = value.slice(2 + name.length);
  if (!rest.startsWith('(')) {
    if (rest === '' && isOperator(name)) {
      return apiError('invalid_parameter', `"${value}" needs parentheses; write ${key}=${operatorSpec(name).form}.`);
    }
    return apiError('invalid_operator', `"${value}" is not an operator call; write ${key}=__op(value) with op one of ${OPERATORS.join(', ')}.`);
  }
  if (!isOperator(name)) return unknownOperator('__' + name);
  if (!rest.endsWith(')') || rest.length < 2) {
    return apiError('invalid_parameter', `"${value}" is not closed by a ")"; write ${key}=${operatorSpec(name).form}.`);
  }
  return [name, rest.slice(1, -1)];
}

/** The operands of a call, checked against what its operator takes (operators.ts). */
function splitOperands(columnName: string, operator: Operator, text: string): string[] | ApiError {
  const { operands, form } = operatorSpec(operator);
  const write = `write ${columnName}=${form}`;
  switch (operands) {
    case 'pattern':
      return [text];
    case 'value':
      // Every filled cell sorts after "" (and nearly every one after " "), so `__gt()` would match them
      // all: a missing value, not a question. `__eq()` and `__ne()` keep their meaning: an empty cell, a filled cell.
      if (text.trim() === '') return apiError('invalid_parameter', `__${operator} needs a value to compare with; ${write}.`);
      return [text];
    case 'text':
      if (text === '') return apiError('invalid_parameter', `__${operator} needs the text to look for; ${write}.`);
      return [text];
    case 'none':
      if (text !== '') return apiError('invalid_parameter', `__${operator} takes no value; ${write}.`);
      return [];
    case 'list': {
      if (text === '') return apiError('invalid_parameter', `__${operator} needs at least one value; ${write} (\\, is a comma inside a value).`);
      const items = splitEscaped(text, ',');
      if (items.includes('')) {
        return apiError('invalid_parameter', `__${operator}(${text}) has an empty value; ${write}, and __empty() for empty cells (\\, is a comma inside a value).`);
      }
      return items;
    }
    case 'two': {
      const items = splitEscaped(text, ',');
      if (items.length !== 2 || items.some((item) => item.trim() === '')) {
        return apiError('invalid_parameter', `__${operator} takes two values, the lowest and the highest; ${write}.`);
      }
      const kinds = items.map(operandKind);
      if (kinds[0] !== kinds[1]) {
        return apiError('invalid_parameter', `__${operator}(${text}) has bounds of two kinds (${kinds[0]}, ${kinds[1]}); give two numbers, two dates or two texts.`);
      }
      return items;
    }
  }
}
