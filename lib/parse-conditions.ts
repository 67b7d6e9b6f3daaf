// GET /sheets/demo/query?City=lisbon&_or=Age=__lt(18);Age=__gt(65)&_case=sensitive -> the
// request's condition set: its conditions, one group per `_or`, and whether case matters. Only
// the syntax is checked here; the tab checks the columns and operators (query.ts).
import { apiError, isApiError, type ApiError } from './errors.ts';

/** A `/search` or `/query` parameter as given: `Age=__gte(18)` is `{ key: 'Age', value: '__gte(18)' }`. */
export interface Condition {
  readonly key: string;
  readonly value: string;
}

/**
 * The conditions of `/search` and `/query`, as given: `?City=lisbon&_or=Age=__lt(18);Age=__gt(65)&_case=sensitive`
 * is `{ conditions: [City=lisbon], orGroups: [[Age=__lt(18), Age=__gt(65)]], caseSensitive: true }`.
 * A row matches when it passes every condition and at least one condition of each group.
 */
export interface ConditionSet {
  readonly conditions: readonly Condition[];
  /** One per `_or` parameter, in order. */
  readonly orGroups: readonly (readonly Condition[])[];
  /** `_case=sensitive`: every text comparison of the request heeds case. */
  readonly caseSensitive: boolean;
}

/**
 * `City=lisbon&_or=Name=ann;Name=bob&_case=sensitive` -> a condition set: every parameter not
 * starting with `_` is a condition, each `_or` a group of `Column=value` items split on `;`
 * (`\;` is a semicolon inside an item). Only the syntax is checked here; the columns and
 * operators are the tab's to check (query.ts).
 */
export function parseConditionSet(parameters: URLSearchParams): ConditionSet | ApiError {
  const conditions: Condition[] = [];
  const orGroups: Condition[][] = [];
  for (const [key, value] of parameters) {
    if (!key.startsWith('_')) conditions.push({ key, value });
    else if (key === '_or') {
      const group = orGroup(value);
      if (isApiError(group)) return group;
      orGroups.push(group);
    }
  }
  const caseSetting = parameters.get('_case');
  if (caseSetting !== null && caseSetting !== 'sensitive') {
    return apiError('invalid_parameter', `_case takes one value, sensitive (every text comparison heeds case); got "${caseSetting}".`);
  }
  return { conditions, orGroups, caseSensitive: caseSetting === 'sensitive' };
}

const OR_FORM = 'write _or=Column=value;Column=__op(value) (\\; is a semicolon inside a value)';

function orGroup(value: string): Condition[] | ApiError {
  if (value === '') return apiError('invalid_parameter', `_or is empty; ${OR_FORM}.`);
  const group: Condition[] = [];
  for (const item of splitEscaped(value, ';')) {
    if (item === '') return apiError('invalid_parameter', `_or=${value} has an empty condition (a ; too many); ${OR_FORM}.`);
    const equals = item.indexOf('=');
    if (equals <= 0) return apiError('invalid_parameter', `_or's condition "${item}" is not Column=value; ${OR_FORM}.`);
    group.push({ key: item.slice(0, equals), value: item.slice(equals + 1) });
  }
  return group;
}

/**
 * `a\,b,c` split on `,` -> ['a,b', 'c']: a separator after a backslash is part of the item.
 * Every other backslash stays as written (`C:\data` is `C:\data`).
 */
export function splitEscaped(text: string, separator: string): string[] {
  const items: string[] = [];
  let item = '';
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    if (char === '\\' && text[at + 1] === separator) {
      item += separator;
      at++;
    } else if (char === separator) {
      items.push(item);
      item = '';
    } else {
      item += char;
    }
  }
  items.push(item);
  return items;
}
