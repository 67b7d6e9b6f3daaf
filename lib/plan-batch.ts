// PATCH /sheets/crm [{"where": {"Status": "new"}, "set": {"Status": "seen"}},
//                    {"where": {"Status": "seen"}, "set": {"Owner": "Ann"}}]
// -> one write plan: items apply in order, each on the rows the ones before it left (so the
// second item finds the rows the first just marked), and the answer is one array per item: the
// rows it chose, as they are after the whole batch. An invalid item fails the batch, named:
// `items[1].where.Stauts: ...`, nothing written.
import { apiError, isApiError, type ApiError } from './errors.ts';
import type { BatchItem } from './parse-batch.ts';
import { applyPlanToTab } from './apply-plan.ts';
import { knownColumns, replacedRows, rowNotFound, rowsJson, unknownColumns, unknownKeys, withIgnored, type PlannedWrite, type PlanOptions } from './plan-rows.ts';
import { parseConditionSet, type ConditionSet } from './parse-conditions.ts';
import { conditionFilters } from './query.ts';
import type { RowIds } from './row-id.ts';
import { conditionRows } from './select.ts';
import { tableOf, type Table } from './table.ts';
import type { Tab } from './workbook.ts';
import type { ReplacedRow } from './write-plan.ts';

export function planBatch(tab: Tab, table: Table, items: readonly BatchItem[], ids: RowIds | null, options: PlanOptions): PlannedWrite | ApiError {
  const unknown = unknownKeys(table, items.map((item) => item.set));
  if (unknown.length > 0 && options.unknownColumns === 'reject') {
    const first = items.findIndex((item) => [...item.set.keys()].some((key) => table.column(key) === undefined));
    return unknownColumns(table, `items[${first}].set`, unknown);
  }
  let current = table;
  let currentTab = tab;
  const chosen: number[][] = [];
  const columnsOf = new Map<number, Set<number>>();
  for (const [i, item] of items.entries()) {
    const at = `items[${i}]`;
    const known = knownColumns(current, item.set, `${at}.set`);
    if (isApiError(known)) return known;
    const targets = itemRows(current, item, at);
    if (isApiError(targets)) return targets;
    const replaced = replacedRows(current, targets, item.set, false, ids, options, `${at}.set`);
    if (isApiError(replaced)) return replaced;
    chosen.push(targets);
    if (replaced.length === 0) continue;
    for (const { index, columns } of replaced) {
      const set = columnsOf.get(index) ?? new Set<number>();
      for (const column of columns) set.add(column);
      columnsOf.set(index, set);
    }
    // The next item sees this one's rows: the plan applied to the tab as it now is.
    currentTab = applyPlanToTab(currentTab, { tab: tab.name, replaced, removed: [], appended: null });
    current = tableOf(currentTab);
  }
  const body = '[' + chosen.map((indexes) => rowsJson(current, indexes.map((index) => current.row(index)))).join(',') + ']';
  const replaced: ReplacedRow[] = [...columnsOf.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, columns]) => ({ index, row: current.row(index), columns: [...columns].sort((a, b) => a - b) }));
  const plan = replaced.length === 0 ? null : { tab: tab.name, replaced, removed: [], appended: null };
  return withIgnored({ status: 200, body, plan }, unknown);
}

/** The rows an item's `where` chooses on the tab as the items before it left it, ascending. */
function itemRows(table: Table, item: BatchItem, at: string): number[] | ApiError {
  if (item.index !== null) {
    if (item.index >= table.rowCount) return named(rowNotFound(table, item.index), `${at}.where._index`);
    return [item.index];
  }
  // `_or` and `_case` read as /query reads them; every other key is a condition.
  const conditions = item.conditions.filter((condition) => condition.key !== '_or' && condition.key !== '_case');
  const options = parseConditionSet(new URLSearchParams(item.conditions.filter((condition) => !conditions.includes(condition)).map(({ key, value }) => [key, value])));
  if (isApiError(options)) return named(options, `${at}.where`);
  const set: ConditionSet = { ...options, conditions };
  // Each condition alone first, so an error names the one at fault; then all together, as /query takes them.
  for (const condition of conditions) {
    const filters = conditionFilters(table, 'query', { conditions: [condition], orGroups: [], caseSensitive: set.caseSensitive });
    if (isApiError(filters)) return named(filters, `${at}.where.${condition.key}`);
  }
  const rows = conditionRows(table, 'query', set);
  return isApiError(rows) ? named(rows, `${at}.where`) : rows;
}

/** The same error, its message led by where in the body it is: `items[3].where.Age: ...`. */
function named(error: ApiError, where: string): ApiError {
  return apiError(error.code, `${where}: ${error.message}`, { ...error.headers });
}
