// GET /sheets/demo/aggregate?_agg=count(),sum(Amount)&_group=City&Amount=__gt(0) -> a table of
// answer rows, one per City among the rows `/query?Amount=__gt(0)` matches: columns `City`,
// `count()`, `sum(Amount)`. The answer is itself a Table, so `_sort`, `_offset`, `_limit`,
// `_select`, `_format` and `_raw` apply to it as to a tab's rows. It is kept with the tab's table
// (`Table.keep`) for its calls, groups and conditions: a repeated aggregate with no write in
// between is a lookup.
import { apiError, isApiError, type ApiError } from '../errors.ts';
import type { AggregateTarget } from '../parse-request.ts';
import { columnOf } from '../query.ts';
import { matchRows } from '../select.ts';
import { Table, type Column } from '../table.ts';
import type { SheetRow, TypedValue } from '../workbook.ts';
import { callCells, type AnswerCell, type Sums } from './functions.ts';
import { groupRows } from './groups.ts';

export function aggregateTable(table: Table, target: AggregateTarget): Table | ApiError {
  // The query target carries whatever `/query` reads from the parameters, so it names the rows in full.
  const key = JSON.stringify(['aggregate', target.calls, target.group, target.query]);
  return table.keep(key, () => {
    const answer = buildAnswer(table, target);
    // Weighed by its rows: a handful of dashboard aggregates are kept, not a million groups each.
    return { value: answer, weight: isApiError(answer) ? null : Math.max(answer.rowCount, 1) };
  });
}

function buildAnswer(table: Table, target: AggregateTarget): Table | ApiError {
  const groupColumns: Column[] = [];
  for (const name of target.group) {
    const column = columnOf(table, name);
    if (isApiError(column)) return column;
    groupColumns.push(column);
  }
  const callColumns: (Column | null)[] = [];
  for (const call of target.calls) {
    const column = call.column === null ? null : columnOf(table, call.column);
    if (isApiError(column)) return column;
    callColumns.push(column);
  }
  const matched = matchRows(table, target.query);
  if (isApiError(matched)) return matched;
  const caseSensitive = target.query.caseSensitive;
  // With groups, no matched row is no group; without, one row over nothing (counts 0).
  const groups = groupRows(table, groupColumns, matched, caseSensitive);
  const sums = new Map<number, Sums>();
  const columns = target.calls.map((call, index) => callCells(table, call, callColumns[index], matched, groups, caseSensitive, sums));

  const names = [...target.group, ...target.calls.map((call) => call.name)];
  const rows: SheetRow[] = [{ text: names, value: names }];
  for (let group = 0; group < groups.count; group++) {
    const text: string[] = [];
    const value: TypedValue[] = [];
    const first = groups.first[group];
    for (const column of groupColumns) {
      // The group shows the first value met.
      const row = table.row(first);
      text.push(row.text[column.position] ?? '');
      value.push(row.value[column.position] ?? null);
    }
    for (const cells of columns) {
      const cell: AnswerCell = cells[group];
      text.push(cell.text);
      value.push(cell.value);
    }
    rows.push({ text, value });
  }
  // The row count is given: an answer row may be all empty (the group of empty cells, with no number to sum).
  return new Table({ name: table.name, rows }, groups.count);
}

/**
 * `_sort` and `_select` name the answer's columns (the group columns, then the calls): an
 * unknown one is 400 `unknown_column` naming those, or null.
 */
export function unknownAnswerColumn(answer: Table, names: readonly string[]): ApiError | null {
  const unknown = names.find((name) => answer.column(name) === undefined);
  if (unknown === undefined) return null;
  const columns = answer.columns.map((column) => JSON.stringify(column.name)).join(', ');
  return apiError('unknown_column', `This aggregate's answer has no column "${unknown}"; its columns are ${columns} (the group columns, then each _agg call as written).`);
}

