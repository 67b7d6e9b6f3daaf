// GET /sheets/demo/aggregate?_agg=count(),sum(Amount)&_group=City -> the calls `count()` and
// `sum(Amount)` grouped by City. Syntax only: whether the columns exist is the table's to say
// (lib/aggregate/answer.ts), so a bad call is a 400 `invalid_parameter` naming the functions and
// an unknown column a 400 `unknown_column` naming the columns.
import { apiError, type ApiError } from '../errors.ts';

export const AGGREGATE_FUNCTIONS = ['count', 'count_distinct', 'sum', 'avg', 'min', 'max'] as const;
export type AggregateFunction = (typeof AGGREGATE_FUNCTIONS)[number];

export function isAggregateFunction(name: string): name is AggregateFunction {
  return (AGGREGATE_FUNCTIONS as readonly string[]).includes(name);
}

/** One call of `_agg`: `sum(Amount)` is `{ fn: 'sum', column: 'Amount', name: 'sum(Amount)' }`; `count()` has no column. */
export interface AggregateCall {
  readonly fn: AggregateFunction;
  readonly column: string | null;
  /** The call as written (without surrounding spaces): the answer's column name. */
  readonly name: string;
}

const CALLS_HINT = `write calls such as count(),sum(Amount), comma-separated, with functions ${AGGREGATE_FUNCTIONS.map((fn) => fn + '()').join(', ')} (only count() takes no column)`;

/**
 * `count(),sum(Amount (EUR)), max(Joined)` -> three calls. A call's column runs to the `)` that
 * ends the call (one followed by `,` or the end), so a column name may hold parentheses;
 * spaces around a call are ignored, spaces inside belong to the column name.
 */
export function parseAggregateCalls(value: string | null): AggregateCall[] | ApiError {
  if (value === null) return apiError('invalid_parameter', `An aggregate needs _agg: ${CALLS_HINT}.`);
  const calls: AggregateCall[] = [];
  let at = 0;
  do {
    while (value[at] === ' ') at++;
    const head = /^([A-Za-z_]+)\(/.exec(value.slice(at));
    if (head === null) return badCalls(value, `"${value.slice(at) || value}" is not a call`);
    const fn = head[1];
    if (!isAggregateFunction(fn)) return badCalls(value, `"${fn}" is not a function`);
    const open = at + head[0].length;
    const close = callEnd(value, open);
    if (close === -1) return badCalls(value, `the call ${value.slice(at)} has no closing ")"`);
    const column = value.slice(open, close);
    if (fn === 'count' && column === '') calls.push({ fn, column: null, name: 'count()' });
    else if (column === '') return badCalls(value, `${fn}() needs a column, as in ${fn}(Amount)`);
    else calls.push({ fn, column, name: value.slice(at, close + 1) });
    at = close + 1;
    while (value[at] === ' ') at++;
    if (at === value.length) return calls;
    // callEnd only accepts a ")" followed by a comma or the end.
    at++;
    if (at === value.length) return badCalls(value, 'it ends with a comma');
  } while (at < value.length);
  return calls;
}

/** The `)` closing a call opened before `from`: the first one followed by spaces and a comma, or the end. */
function callEnd(value: string, from: number): number {
  for (let close = value.indexOf(')', from); close !== -1; close = value.indexOf(')', close + 1)) {
    let after = close + 1;
    while (value[after] === ' ') after++;
    if (after === value.length || value[after] === ',') return close;
  }
  return -1;
}

function badCalls(value: string, why: string): ApiError {
  return apiError('invalid_parameter', `_agg=${value} cannot be read: ${why}; ${CALLS_HINT}.`);
}

/**
 * `_group=City,Year` -> ['City', 'Year']; `_select` is read the same way. An empty list, an empty
 * entry or a name given twice is refused: each would leave the answer's columns unclear.
 */
export function parseColumnList(name: string, value: string): string[] | ApiError {
  const columns = value.split(',');
  for (const column of columns) {
    if (column === '') return apiError('invalid_parameter', `${name} takes comma-separated column names; got "${value}".`);
  }
  const twice = columns.find((column, index) => columns.indexOf(column) !== index);
  if (twice !== undefined) return apiError('invalid_parameter', `${name} names the column "${twice}" twice; name each column once.`);
  return columns;
}
