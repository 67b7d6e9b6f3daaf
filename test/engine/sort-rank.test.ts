// `_sort=C` of many rows sorts by each row's rank in the column (lib/sort.ts `sortByRank`, kept
// per table); `_sort=C,K` with a second key sorts through the comparison of cells. Both must give
// the same order: numbers, dates, booleans and text in their kinds' order, equal cells in sheet
// order, empty cells last in either direction. Generated tabs, with fast-check.
// Uses only `test` and `assert`, so the file runs under Node, Deno and Bun alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { handle, sheetDate } from '../../lib/mod.ts';
import type { SheetRow, TypedValue, Workbook } from '../../lib/mod.ts';

type Cell = { readonly text: string; readonly value: TypedValue };

const cellArb: fc.Arbitrary<Cell> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('ann', 'Ann', 'bob', 'Émile', 'zoe', '10', 'a b').map((text) => ({ text, value: text })) },
  { weight: 3, arbitrary: fc.oneof(fc.integer({ min: -5, max: 5 }), fc.double({ noNaN: true, noDefaultInfinity: true, min: -10, max: 10 })).filter((n) => !Object.is(n, -0)).map((n) => ({ text: String(n), value: n })) },
  { weight: 1, arbitrary: fc.boolean().map((b) => ({ text: b ? 'TRUE' : 'FALSE', value: b })) },
  { weight: 1, arbitrary: fc.constantFrom('2024-01-02', '2023-12-31', '2024-01-02T10:00:00').map((iso) => ({ text: iso, value: sheetDate(iso) })) },
  { weight: 2, arbitrary: fc.constant({ text: '', value: null }) },
);

function workbookOf(cells: readonly Cell[]): Workbook {
  const rows: SheetRow[] = [{ text: ['C', 'K'], value: ['C', 'K'] }];
  for (const cell of cells) rows.push({ text: [cell.text, 'k'], value: [cell.value, 'k'] });
  return { tabs: [{ name: 'T', rows }] };
}

function body(workbook: Workbook, url: string): string {
  const result = handle(workbook, { method: 'GET', url });
  assert.equal(result.status, 200, url);
  return result.bytes === undefined ? result.body : new TextDecoder().decode(result.bytes);
}

test('_sort=C by rank answers as the cell comparison does (_sort=C,K with K the same in every row), both directions', () => {
  fc.assert(
    fc.property(fc.array(cellArb, { minLength: 1, maxLength: 60 }), fc.boolean(), (cells, descending) => {
      const workbook = workbookOf(cells);
      const column = descending ? '-C' : 'C';
      assert.equal(body(workbook, `/sheets/T?_sort=${column}`), body(workbook, `/sheets/T?_sort=${column},K`));
      // A second read answers from the ranks kept with the table.
      assert.equal(body(workbook, `/sheets/T?_sort=${column}&_limit=1000`), body(workbook, `/sheets/T?_sort=${column},K`));
    }),
    { numRuns: 300 },
  );
});

test('_sort by rank: empty cells last both ways, equal cells in sheet order', () => {
  const cells: Cell[] = [
    { text: '2', value: 2 },
    { text: '', value: null },
    { text: 'b', value: 'b' },
    { text: '1', value: 1 },
    { text: 'B', value: 'B' },
    { text: '2', value: 2 },
  ];
  const workbook = workbookOf(cells);
  const order = (url: string) => (JSON.parse(body(workbook, url)) as { C: string }[]).map((row) => row.C);
  assert.deepEqual(order('/sheets/T?_sort=C'), ['1', '2', '2', 'b', 'B', '']);
  assert.deepEqual(order('/sheets/T?_sort=-C'), ['b', 'B', '2', '2', '1', '']);
});
