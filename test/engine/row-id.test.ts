// The pieces of issue 26's writes that fixtures cannot pin: uuid7's layout and order (RFC 9562),
// increment ids past ids the body gives, the Sheetrest-Ignored-Columns encoding, and the plans an
// upsert and a batch make (one plan each; `readsRows` where the rows decided what is appended).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handle } from '../../lib/engine.ts';
import { ignoredColumnsHeader } from '../../lib/plan-rows.ts';
import { uuid7 } from '../../lib/row-id.ts';
import type { EngineOptions } from '../../lib/parse-request.ts';
import type { Workbook } from '../../lib/workbook.ts';
import { buildWorkbook } from '../helpers/fixture-loader.ts';

const UUID7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('uuid7: version 7, RFC variant, the time in its first 48 bits, in order within one millisecond', () => {
  // A day ahead: later than any id this process made before (ids never go back in time).
  const at = Date.now() + 86_400_000;
  const ids = Array.from({ length: 5000 }, () => uuid7(at));
  for (const id of ids) assert.match(id, UUID7);
  assert.equal(parseInt(ids[0].replace(/-/g, '').slice(0, 12), 16), at);
  // 5,000 ids in one millisecond run the 12-bit counter past its end: the next millisecond is borrowed, still in order.
  assert.deepEqual([...ids].sort(), ids, 'sorted as made');
  assert.equal(new Set(ids).size, ids.length);
  const later = uuid7(at + 10_000);
  assert.ok(later > ids.at(-1)!, 'a later time sorts after');
  assert.equal(parseInt(later.replace(/-/g, '').slice(0, 12), 16), at + 10_000);
});

test('Sheetrest-Ignored-Columns: plain names as they are, others percent-encoded, at most 100', () => {
  const cases: [string[], string][] = [
    [['Cty', 'Emial'], 'Cty, Emial'],
    [['First Name'], 'First Name'],
    [['Città', 'a,b', '50%', ' lead'], 'Citt%C3%A0, a%2Cb, 50%25, %20lead'],
    [Array.from({ length: 101 }, (_, i) => `k${i}`), Array.from({ length: 100 }, (_, i) => `k${i}`).join(', ') + ', ...'],
  ];
  for (const [names, expected] of cases) assert.equal(ignoredColumnsHeader(names), expected, JSON.stringify(names.slice(0, 4)));
});

function write(workbook: Workbook, method: string, url: string, body: unknown, options: EngineOptions = {}) {
  return handle(workbook, { method, url, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }, options);
}

test('increment ids count on from the largest number in the column or the body, floored; 1 in an empty column', async (t) => {
  const cases: [unknown[][], unknown[], string[]][] = [
    [[['Id', 'N']], [{ N: 'a' }, { N: 'b' }], ['1', '2']],
    [[['Id', 'N'], [7.5, 'x'], ['n/a', 'y'], ['12', 'z']], [{ N: 'a' }], ['13']],
    [[['Id', 'N'], [3, 'x']], [{ N: 'a' }, { N: 'b', Id: '40' }, { N: 'c' }], ['41', '40', '42']],
    [[['Id', 'N'], [7.5, 'x']], [{ N: 'a' }], ['8']],
  ];
  for (const [rows, body, ids] of cases) {
    await t.test(JSON.stringify({ rows, body }), () => {
      const workbook = buildWorkbook({ tabs: [{ name: 'T', rows: rows as never }] });
      const result = write(workbook, 'POST', '/sheets/t', body, { rowId: { column: 'Id', generate: 'increment' } });
      assert.equal(result.status, 201, result.body);
      assert.deepEqual((JSON.parse(result.body) as { Id: string }[]).map((row) => row.Id), ids);
      assert.equal(result.plan?.readsRows, true, 'an increment depends on the rows there are');
    });
  }
  await t.test('uuid7 appends depend on nothing: no readsRows', () => {
    const workbook = buildWorkbook({ tabs: [{ name: 'T', rows: [['Id', 'N']] }] });
    const result = write(workbook, 'POST', '/sheets/t', { N: 'a' }, { rowId: { column: 'Id', generate: 'uuid7' } });
    assert.match(JSON.parse(result.body).Id, UUID7);
    assert.equal(result.plan?.readsRows, undefined);
  });
});

test('an upsert is one plan: updates ascending by index, appends in body order, marked readsRows', () => {
  const workbook = buildWorkbook({ tabs: [{ name: 'T', rows: [['K', 'V'], ['a', 1], ['b', 2], ['c', 3]] }] });
  const result = write(workbook, 'POST', '/sheets/t?_upsert=K', [{ K: 'c', V: 30 }, { K: 'x', V: 9 }, { K: 'a', V: 10 }, { K: 'y' }]);
  assert.equal(result.status, 201);
  assert.deepEqual(result.plan?.replaced.map((row) => [row.index, row.columns]), [[0, [0, 1]], [2, [0, 1]]]);
  assert.equal(result.plan?.appended?.start, 3);
  assert.deepEqual(result.plan?.appended?.rows.map((row) => row.text), [['x', '9'], ['y', '']]);
  assert.equal(result.plan?.readsRows, true);
  assert.deepEqual(JSON.parse(result.body).map((row: { K: string }) => row.K), ['c', 'x', 'a', 'y']);
  assert.equal(result.headers['Sheetrest-Inserted'], '2');
  assert.equal(result.headers['Sheetrest-Updated'], '2');
});

test('a batch is one plan: a row two items set is replaced once, as the last left it, with both items\' columns', () => {
  const workbook = buildWorkbook({ tabs: [{ name: 'T', rows: [['K', 'V', 'W'], ['a', 1, ''], ['b', 2, '']] }] });
  const result = write(workbook, 'PATCH', '/sheets/t', [
    { where: { K: 'b' }, set: { V: 20 } },
    { where: { V: '__gte(20)' }, set: { W: 'big' } },
    { where: { _index: 0 }, set: { V: 10 } },
  ]);
  assert.equal(result.status, 200, result.body);
  assert.deepEqual(result.plan?.replaced.map((row) => [row.index, row.columns, row.row.text]), [[0, [1], ['a', '10', '']], [1, [1, 2], ['b', '20', 'big']]]);
  assert.equal(result.plan?.readsRows, undefined, 'it only replaces rows: a source reads the tab first anyway');
});

test('a refused batch or upsert changes nothing: the same workbook object comes back', () => {
  const workbook = buildWorkbook({ tabs: [{ name: 'T', rows: [['K', 'V'], ['a', 1], ['a', 2]] }] });
  for (const [method, url, body, status] of [
    ['POST', '/sheets/t?_upsert=K', [{ K: 'b' }, { K: 'a' }], 409],
    ['PATCH', '/sheets/t', [{ where: { _index: 0 }, set: { V: 5 } }, { where: { _index: 2 }, set: { V: 6 } }], 404],
  ] as const) {
    const result = write(workbook, method, url, body);
    assert.equal(result.status, status, result.body);
    assert.equal(result.workbook, workbook);
    assert.equal(result.plan, null);
  }
});
