// Finer keys through the app (server/auth.ts, server/http/authorize.ts, lib/engine.ts): a key's
// operations (403 naming what it may do), its tabs (the others 404 as if absent, left out of
// /tabs and the OpenAPI document; without /tabs/{Tab} the first of its tabs in workbook order)
// and its expiry (401 after it, by an injected clock).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Workbook } from '../../lib/workbook.ts';
import { digestKey, type ApiKey } from '../../server/auth.ts';
import { createApp } from '../../server/http/app.ts';
import { createLogger } from '../../server/log.ts';
import { memorySource } from '../../server/sources/memory.ts';

function workbook(): Workbook {
  const row = (...cells: (string | number)[]) => ({ text: cells.map(String), value: cells });
  return {
    tabs: [
      { name: 'People', rows: [row('Name', 'Salary'), row('Ann', 90000)] },
      { name: 'Orders', rows: [row('Item', 'Qty'), row('Pen', 2), row('Ink', 5)] },
      { name: 'Notes', rows: [row('Text'), row('hello')] },
    ],
  };
}

const EXPIRY = Date.UTC(2027, 0, 1);
const KEYS: ApiKey[] = [
  { digest: digestKey('admin'), operations: ['read', 'create', 'update', 'delete'] },
  // Listed out of workbook order: the first tab it sees is still Orders, the workbook's.
  { digest: digestKey('reader'), operations: ['read'], tabs: ['Notes', 'Orders'] },
  { digest: digestKey('form'), operations: ['create'], tabs: ['Orders'] },
  { digest: digestKey('dated'), operations: ['read'], expiresAt: EXPIRY },
];

function appWith(now: () => number = () => EXPIRY - 60_000) {
  const source = memorySource(workbook());
  const app = createApp({
    connections: [{ id: 'shop', source, keys: KEYS, readOnly: false, engine: {} }],
    quota: { take: () => ({ allowed: true, headers: {} }), peek: () => ({}) },
    bodyBytes: 1024 * 1024,
    cors: '*',
    log: createLogger('silent'),
    now,
  });
  const call = async (key: string, path: string, init: RequestInit = {}) => {
    const response = await app.fetch(new Request(`http://x/sheets/shop${path}`, { ...init, headers: { 'X-Api-Key': key, 'Content-Type': 'application/json', ...(init.headers as Record<string, string> | undefined) } }));
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: text === '' ? null : JSON.parse(text) };
  };
  return { call, source };
}

test('a key limited to some tabs sees only those', async (t) => {
  const { call } = appWith();
  await t.test('/tabs lists only its tabs, in workbook order', async () => {
    const tabs = await call('reader', '/tabs');
    assert.equal(tabs.status, 200);
    assert.deepEqual(tabs.body.map((tab: { name: string }) => tab.name), ['Orders', 'Notes']);
    const all = await call('admin', '/tabs');
    assert.deepEqual(all.body.map((tab: { name: string }) => tab.name), ['People', 'Orders', 'Notes']);
    assert.notEqual(tabs.headers.get('etag'), all.headers.get('etag'));
  });
  await t.test('another tab is 404 tab_not_found as if absent, naming only its tabs', async () => {
    const hidden = await call('reader', '/tabs/People');
    assert.equal(hidden.status, 404);
    assert.equal(hidden.body.error, 'tab_not_found');
    assert.equal(hidden.body.message, 'There is no tab "People": its tabs are "Orders", "Notes" (names are case-sensitive).');
    const missing = await call('reader', '/tabs/Nope');
    assert.equal(missing.body.message, 'There is no tab "Nope": its tabs are "Orders", "Notes" (names are case-sensitive).');
  });
  await t.test('its own tab is served', async () => {
    const notes = await call('reader', '/tabs/Notes');
    assert.deepEqual([notes.status, notes.body], [200, [{ Text: 'hello' }]]);
  });
  await t.test('without /tabs/{Tab}: the first of its tabs in workbook order, kept apart from other keys\' answers', async () => {
    // The admin key first, so a kept answer of the same URL would be served to the reader if answers were shared.
    const first = await call('admin', '?_limit=1');
    assert.deepEqual(first.body, [{ Name: 'Ann', Salary: '90000' }]);
    for (let round = 0; round < 2; round++) {
      const own = await call('reader', '?_limit=1');
      assert.deepEqual([own.status, own.body], [200, [{ Item: 'Pen', Qty: '2' }]]);
    }
    assert.deepEqual((await call('admin', '?_limit=1')).body, [{ Name: 'Ann', Salary: '90000' }]);
  });
  await t.test('the OpenAPI document leaves the other tabs out', async () => {
    const document = await call('reader', '/openapi.json');
    assert.equal(document.status, 200);
    assert.deepEqual(document.body['x-sheetrest'].tabs.map((tab: { name: string }) => tab.name), ['Orders', 'Notes']);
    const paths = Object.keys(document.body.paths).join('\n');
    assert.equal(paths.includes('People'), false);
    assert.match(paths, /\/sheets\/shop\/tabs\/Orders/);
    assert.equal(JSON.stringify(document.body).includes('Salary'), false, 'not even a column name of a hidden tab');
    const full = await call('admin', '/openapi.json');
    assert.deepEqual(full.body['x-sheetrest'].tabs.map((tab: { name: string }) => tab.name), ['People', 'Orders', 'Notes']);
  });
});

test('an operation the key lacks: 403 permission_denied naming what it may do', async (t) => {
  const { call, source } = appWith();
  const cases: [string, string, string, object | undefined, number, string | null][] = [
    ['a read key writes', 'reader', 'POST', [{ Item: 'Cap', Qty: 1 }], 403, 'This API key may not create rows (POST); it may read rows (GET). Use a key allowed to create.'],
    ['a read key deletes', 'reader', 'DELETE', undefined, 403, 'This API key may not delete rows (DELETE); it may read rows (GET). Use a key allowed to delete.'],
    ['a form key reads', 'form', 'GET', undefined, 403, 'This API key may not read rows (GET); it may create rows (POST). Use a key allowed to read.'],
    ['a form key updates', 'form', 'PATCH', { Qty: 9 }, 403, 'This API key may not update rows (PATCH, PUT); it may create rows (POST). Use a key allowed to update.'],
  ];
  for (const [name, key, method, body, status, message] of cases) {
    await t.test(name, async () => {
      const answer = await call(key, method === 'PATCH' || method === 'DELETE' ? '/tabs/Orders/0' : '/tabs/Orders', { method, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      assert.deepEqual([answer.status, answer.body], [status, { error: 'permission_denied', message }]);
    });
  }
  await t.test('a form key creates in its tab, named or not, and nowhere else', async () => {
    const named = await call('form', '/tabs/Orders', { method: 'POST', body: JSON.stringify({ Item: 'Cap', Qty: 1 }) });
    assert.equal(named.status, 201);
    const unnamed = await call('form', '', { method: 'POST', body: JSON.stringify({ Item: 'Hat', Qty: 3 }) });
    assert.equal(unnamed.status, 201);
    const elsewhere = await call('form', '/tabs/People', { method: 'POST', body: JSON.stringify({ Name: 'Eve' }) });
    assert.deepEqual([elsewhere.status, elsewhere.body.error], [404, 'tab_not_found']);
    assert.equal(elsewhere.body.message.includes('People'), true, 'the tab asked for, as written');
    assert.equal(elsewhere.body.message.includes('"Notes"'), false);
    const orders = source.workbook.tabs[1].rows.map((row) => row.text[0]);
    assert.deepEqual(orders, ['Item', 'Pen', 'Ink', 'Cap', 'Hat']);
    assert.equal(source.workbook.tabs[0].rows.length, 2, 'People untouched');
  });
  await t.test('a form key may not upsert: an upsert updates rows too, and nothing is written', async () => {
    const before = source.workbook.tabs[1].rows.map((row) => row.text.join('|'));
    const answer = await call('form', '/tabs/Orders?_upsert=Item', { method: 'POST', body: JSON.stringify({ Item: 'Pen', Qty: 0 }) });
    assert.deepEqual([answer.status, answer.body], [403, { error: 'permission_denied', message: 'This API key may not update rows (PATCH, PUT); it may create rows (POST). Use a key allowed to update.' }]);
    assert.deepEqual(source.workbook.tabs[1].rows.map((row) => row.text.join('|')), before);
    const admin = await call('admin', '/tabs/Orders?_upsert=Item', { method: 'POST', body: JSON.stringify({ Item: 'Pen', Qty: 0 }) });
    assert.equal(admin.status, 200, 'a key that may create and update upserts');
  });
});

test('a key with expiresAt works until then, then is 401 authentication_failed saying it expired', async () => {
  let now = EXPIRY - 1;
  const { call } = appWith(() => now);
  assert.equal((await call('dated', '')).status, 200);
  now = EXPIRY;
  const expired = await call('dated', '');
  assert.deepEqual([expired.status, expired.body.error], [401, 'authentication_failed']);
  assert.equal(expired.body.message, 'The API key in the X-Api-Key header expired at 2027-01-01T00:00:00.000Z; ask the connection\'s admin for a new one.');
  assert.equal((await call('admin', '')).status, 200, 'the other keys still work');
  assert.equal((await call('wrong', '')).body.message, 'The API key in the X-Api-Key header is not valid for this connection.');
});
