// How group commit cuts a batch into requests (server/sources/google/segments.ts) and decides,
// after a lost answer, whether a request landed (read-back.ts): plain data in, plain data out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { WritePlan } from '../../../lib/write-plan.ts';
import { applyPlanToTab } from '../../../lib/apply-plan.ts';
import type { Tab } from '../../../lib/workbook.ts';
import { landing } from '../../../server/sources/google/read-back.ts';
import { cellRequests } from '../../../server/sources/google/encode-cells.ts';
import { segmentOf, type PlannedStep } from '../../../server/sources/google/segments.ts';
import { row } from '../../helpers/source-contract.ts';

const append = (tab: string, start: number, ...names: string[]): WritePlan => ({ tab, replaced: [], removed: [], appended: { start, rows: names.map((name) => row(name, 1)) } });
const patch = (tab: string, index: number): WritePlan => ({ tab, replaced: [{ index, row: row(`p${index}`, 2), columns: [1] }], removed: [], appended: null });
const remove = (tab: string, index: number): WritePlan => ({ tab, replaced: [], removed: [index], appended: null });
const steps = (...plans: WritePlan[]): PlannedStep[] => plans.map((plan) => ({ plan, before: undefined }));

test('segments: what one request carries', async (t) => {
  const cases: [string, PlannedStep[], number, boolean, { length: number; kind: string }][] = [
    ['appends to one tab go together', steps(append('A', 0, 'x'), append('A', 1, 'y'), append('A', 2, 'z')), 500, false, { length: 3, kind: 'append' }],
    ['a tab change ends a segment', steps(append('A', 0, 'x'), append('B', 0, 'y')), 500, false, { length: 1, kind: 'append' }],
    ['a kind change ends it on a tab not read in the batch', steps(append('A', 0, 'x'), patch('A', 0)), 500, false, { length: 1, kind: 'append' }],
    ['kinds mix on a tab read in the batch: one cells request', steps(append('A', 0, 'x'), patch('A', 0), remove('A', 0)), 500, true, { length: 3, kind: 'cells' }],
    ['one kind on a tab read in the batch keeps its own request', steps(patch('A', 0), patch('A', 1)), 500, true, { length: 2, kind: 'values' }],
    ['deletions go together', steps(remove('A', 3), remove('A', 1)), 500, false, { length: 2, kind: 'delete' }],
    ['at most maxWrites', steps(append('A', 0, 'x'), append('A', 1, 'y'), append('A', 2, 'z')), 2, false, { length: 2, kind: 'append' }],
    ['at least one, however large', steps(append('A', 0, 'x'.repeat(2_000_000)), append('A', 1, 'y')), 500, false, { length: 1, kind: 'append' }],
  ];
  for (const [name, input, maxWrites, mixable, expected] of cases) await t.test(name, () => assert.deepEqual(segmentOf(input, maxWrites, mixable), expected));

  await t.test('a segment stays under the byte cap', () => {
    const big = Array.from({ length: 10 }, (_, i) => append('A', i, 'x'.repeat(100_000)));
    const { length } = segmentOf(steps(...big), 500, false);
    assert.ok(length >= 1 && length < 10, `split (${length} of 10)`);
  });
});

test('cell requests: a mixed plan in the order it applies', () => {
  const plan: WritePlan = { tab: 'A', replaced: [{ index: 0, row: row('Ann', 31), columns: [1] }], removed: [], appended: { start: 2, rows: [row('Cy', '007')] } };
  assert.deepEqual(cellRequests(7, plan, 0, 3), [
    { updateCells: { start: { sheetId: 7, rowIndex: 1, columnIndex: 1 }, rows: [{ values: [{ userEnteredValue: { numberValue: 31 } }] }], fields: 'userEnteredValue' } },
    { insertDimension: { range: { sheetId: 7, dimension: 'ROWS', startIndex: 3, endIndex: 4 }, inheritFromBefore: true } },
    { updateCells: { start: { sheetId: 7, rowIndex: 3, columnIndex: 0 }, rows: [{ values: [{ userEnteredValue: { stringValue: 'Cy' } }, { userEnteredValue: { stringValue: '007' } }] }], fields: 'userEnteredValue' } },
  ]);
});

test('read back: did a request whose answer was lost land?', async (t) => {
  const tab = (...names: string[]): Tab => ({ name: 'A', rows: [row('Name', 'Age'), ...names.map((name) => row(name, 1))] });
  const before = tab('a', 'b');
  const appended = append('A', 2, 'x', 'y');
  const after = applyPlanToTab(before, appended);
  const deleted = remove('A', 0);
  const cases: [string, Parameters<typeof landing>, string][] = [
    ['appended rows where they were to go', ['append', steps(appended), before, after, tab('a', 'b', 'x', 'y')], 'applied'],
    ['appended rows below rows someone added meanwhile', ['append', steps(appended), before, after, tab('a', 'b', 'z', 'x', 'y')], 'applied'],
    ['no appended rows, the rest as before', ['append', steps(appended), before, after, tab('a', 'b')], 'absent'],
    ['no appended rows, rows above changed', ['append', steps(appended), before, after, tab('a')], 'unknown'],
    ['a deletion applied', ['delete', steps(deleted), before, applyPlanToTab(before, deleted), tab('b')], 'applied'],
    ['a deletion not applied', ['delete', steps(deleted), before, applyPlanToTab(before, deleted), tab('a', 'b')], 'absent'],
    ['a deletion and someone else’s change', ['delete', steps(deleted), before, applyPlanToTab(before, deleted), tab('c')], 'unknown'],
    ['the tab could not be read', ['append', steps(appended), before, after, undefined], 'unknown'],
  ];
  for (const [name, input, expected] of cases) await t.test(name, () => assert.equal(landing(...input), expected));
});
