// The usage history over real HTTP, on whichever runtime runs the test: requests to a connection
// show in `GET /_admin/connections/{id}/usage/history` (today's counts per key and operation,
// 4xx and 5xx apart) and `GET /_admin/connections/{id}/requests` (the recent ones, newest first,
// no query value that is data, never a key); the counts survive a restart; bad `days` is a 400.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configForFile } from '../../server/config/config.ts';
import { RUNTIME, startServer, tempDir, writeXlsx } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${TOKEN}` };

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = AUTH) {
  const response = await fetch(base + path, { method, headers: { ...headers, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

test(`usage history and recent requests (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  await writeXlsx(dir.path('crm.xlsx'), 'Leads', [['Lead', 'Stage'], ['Acme', 'new']]);
  const config = configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' } }, { env: { SHEETREST_ADMIN_TOKEN: TOKEN } });
  let server = await startServer(t, config);
  const created = await call(server.url, 'POST', '/_admin/connections', { id: 'crm', source: { type: 'file', path: dir.path('crm.xlsx') } });
  assert.equal(created.status, 201);
  const key = created.body.newKey;
  const named = await call(server.url, 'POST', '/_admin/connections/crm/keys', { name: 'reports', operations: ['read'] });

  const get = (path: string, secret?: string) => fetch(server.url + path, { headers: secret === undefined ? {} : { 'X-Api-Key': secret } }).then((response) => response.status);
  assert.equal(await get('/sheets/crm', key.key), 200);
  assert.equal(await get('/sheets/crm/search?Lead=acme%40secret.example&_limit=5', key.key), 200);
  assert.equal(await get('/sheets/crm/query?Stage__eq=new', named.body.key), 200);
  assert.equal(await get('/sheets/crm/NoSuchColumn/x', named.body.key), 400);
  assert.equal(await get('/sheets/crm'), 401);
  assert.equal(await get('/sheets/nope'), 404, 'an unknown connection is not recorded anywhere');

  const recent = await call(server.url, 'GET', '/_admin/connections/crm/requests');
  assert.equal(recent.status, 200);
  assert.equal(recent.body.kept, 100);
  assert.deepEqual(recent.body.requests.map((each: { method: string; path: string; status: number; key: string | null; error: boolean }) => [each.path, each.status, each.key, each.error]), [
    ['/sheets/crm', 401, null, true],
    ['/sheets/crm/NoSuchColumn/x', 400, 'reports', true],
    ['/sheets/crm/query?Stage__eq=…', 200, 'reports', false],
    ['/sheets/crm/search?Lead=…&_limit=5', 200, key.prefix, false],
    ['/sheets/crm', 200, key.prefix, false],
  ]);
  const text = JSON.stringify(recent.body);
  assert.ok(!text.includes(key.key) && !text.includes(named.body.key) && !text.includes('secret.example'), 'no key, no searched value');
  assert.equal(typeof recent.body.requests[0].ms, 'number');
  assert.ok(Date.parse(recent.body.requests[0].at) > Date.now() - 60_000);

  const expectToday = (body: { history: { day: string; requests: number; clientErrors: number; serverErrors: number; keys: { name: string | null; prefix: string | null; requests: number; clientErrors: number }[]; operations: Record<string, { requests: number }> }[] }) => {
    const today = body.history.at(-1)!;
    assert.equal(today.day, new Date().toISOString().slice(0, 10));
    assert.deepEqual([today.requests, today.clientErrors, today.serverErrors], [5, 2, 0]);
    assert.deepEqual(Object.fromEntries(Object.entries(today.operations).map(([name, counts]) => [name, counts.requests])), { read: 3, search: 1, query: 1 });
    assert.deepEqual(today.keys.map((each) => [each.name ?? each.prefix, each.requests, each.clientErrors]).sort(), [[key.prefix, 2, 0], ['reports', 2, 1], [null, 1, 1]].sort());
  };
  const history = await call(server.url, 'GET', '/_admin/connections/crm/usage/history?days=7');
  assert.equal(history.status, 200);
  assert.equal(history.body.history.length, 7);
  assert.deepEqual([history.body.connection, history.body.days, history.body.keepDays, history.body.to], ['crm', 7, 90, new Date().toISOString().slice(0, 10)]);
  assert.deepEqual(history.body.totals, { requests: 5, clientErrors: 2, serverErrors: 0 });
  expectToday(history.body);
  assert.equal((await call(server.url, 'GET', '/_admin/connections/crm/usage/history')).body.history.length, 30, '30 days unless told');

  // A restart keeps the days (not the recent requests, kept in memory).
  await server.close();
  server = await startServer(t, config);
  expectToday((await call(server.url, 'GET', '/_admin/connections/crm/usage/history?days=1')).body);
  assert.deepEqual((await call(server.url, 'GET', '/_admin/connections/crm/requests')).body.requests, []);

  for (const [query, pattern] of [
    ['?days=abc', /"days" must be a whole number from 1 to 90/],
    ['?days=0', /from 1 to 90/],
    ['?days=91', /from 1 to 90/],
    ['?days=1.5', /from 1 to 90/],
    ['?days=-3', /from 1 to 90/],
    ['?days=', /from 1 to 90/],
    ['?days=3&days=4', /from 1 to 90/],
    ['?day=3', /Unknown parameter "day"; the usage history takes only "days"/],
  ] as const) {
    const reply = await call(server.url, 'GET', `/_admin/connections/crm/usage/history${query}`);
    assert.equal(reply.status, 400, query);
    assert.equal(reply.body.error, 'invalid_parameter', query);
    assert.match(reply.body.message, pattern, query);
  }
  for (const path of ['/_admin/connections/nope/usage/history', '/_admin/connections/nope/requests']) {
    const reply = await call(server.url, 'GET', path);
    assert.deepEqual([reply.status, reply.body.error], [404, 'not_found'], path);
  }
  assert.equal((await call(server.url, 'GET', '/_admin/connections/crm/requests', undefined, {})).status, 401, 'the admin token is needed');
  assert.equal((await call(server.url, 'POST', '/_admin/connections/crm/requests')).status, 405);
});
