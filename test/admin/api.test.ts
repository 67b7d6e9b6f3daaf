// The admin API over real HTTP, on whichever runtime runs the test: `POST /_admin/connections`
// with `Authorization: Bearer <token>` creates a connection that `GET /sheets/{id}` serves at
// once; keys are made (shown once), rotated with an overlap and revoked (the next request with
// the key gets 401); plans and usage; bad input answers 4xx in the contract's body shape; every
// change survives a restart, and kill -9 right after the answer. Also `GET /` (the index).
import assert from 'node:assert/strict';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import * as XLSX from '@e965/xlsx';
import { test } from 'node:test';
import { configForFile, ConfigError, loadConfig, type Config } from '../../server/config/config.ts';
import { spanAt } from '../../server/quota/period.ts';
import { createLogger } from '../../server/log.ts';
import { startEmulator } from '../../tools/google-emulator/mod.ts';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import process from 'node:process';
import { cliCommand, defer, getRows, postJson, readBook, REPO_ROOT, RUNTIME, spawnServer, startServer, tempDir, within, writeXlsx, type TempDir, type TestContext } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${TOKEN}` };

interface Reply {
  readonly status: number;
  readonly headers: Headers;
  // deno-lint-ignore no-explicit-any
  readonly body: any;
}

/** One admin request: `body` is sent as JSON unless it is a string (sent as it is). */
async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = AUTH): Promise<Reply> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    (init.headers as Record<string, string>)['Content-Type'] ??= 'application/json';
  }
  const response = await fetch(base + path, init);
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? null : JSON.parse(text) };
}

/** A folder with book.xlsx (the config's connection), crm.xlsx and other.xlsx (for the admin API). */
async function folder(t: TestContext): Promise<TempDir> {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  await writeXlsx(dir.path('crm.xlsx'), 'Leads', [['Lead', 'Stage'], ['Acme', 'new'], ['Globex', 'won']]);
  await writeXlsx(dir.path('other.xlsx'), 'Other', [['Thing'], ['x']]);
  return dir;
}

function configFor(dir: TempDir, env: Record<string, string> = { SHEETREST_ADMIN_TOKEN: TOKEN }): Config {
  return configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' } }, { env });
}

function crm(dir: TempDir, extra: Record<string, unknown> = {}) {
  return { id: 'crm', source: { type: 'file', path: dir.path('crm.xlsx') }, ...extra };
}

/** The one answer for every file path the admin API refuses (admin.fileRoot): it does not say whether the path exists. */
const REFUSED_PATH = /^The source cannot be opened: source\.path: the admin API opens only existing regular files inside .+ \(admin\.fileRoot\), after following symlinks\.$/;

function assertError(reply: Reply, status: number, code: string, message?: RegExp): void {
  assert.equal(reply.status, status, JSON.stringify(reply.body));
  assert.deepEqual(Object.keys(reply.body), ['error', 'message']);
  assert.equal(reply.body.error, code);
  if (message !== undefined) assert.match(reply.body.message, message);
}

test(`the admin token: off without one, 401s, never a connection key (${RUNTIME})`, async (t) => {
  await t.test('without a token /_admin answers 404 as an unknown path does', async (t) => {
    const dir = await folder(t);
    const { url } = await startServer(t, configFor(dir, {}));
    for (const path of ['/_admin', '/_admin/connections', '/nowhere']) {
      assertError(await call(url, 'GET', path), 404, 'not_found', /paths start with \/sheets/);
    }
  });

  const dir = await folder(t);
  const { url } = await startServer(t, configFor(dir));
  const created = await call(url, 'POST', '/_admin/connections', crm(dir));
  const key = (await call(url, 'POST', '/_admin/connections/crm/keys', {})).body.key as string;
  const cases: [string, Record<string, string>, number, string][] = [
    ['no Authorization', {}, 401, 'not_authenticated'],
    ['an empty bearer', { Authorization: 'Bearer ' }, 401, 'not_authenticated'],
    ['another scheme', { Authorization: `Basic ${btoa(`admin:${TOKEN}`)}` }, 401, 'not_authenticated'],
    ['the token as X-Api-Key', { 'X-Api-Key': TOKEN }, 401, 'not_authenticated'],
    ['a wrong token', { Authorization: 'Bearer admin-token-0123456789abcdeX' }, 401, 'authentication_failed'],
    ["a connection's key", { Authorization: `Bearer ${key}` }, 401, 'authentication_failed'],
    ['the token', AUTH, 200, ''],
    ['the token, scheme in lower case', { Authorization: `bearer ${TOKEN}` }, 200, ''],
  ];
  assert.equal(created.status, 201);
  for (const [name, headers, status, code] of cases) {
    await t.test(name, async () => {
      for (const path of ['/_admin/connections', '/_admin/connections/crm/keys', '/_admin/unknown']) {
        const reply = await call(url, 'GET', path, undefined, headers);
        if (status === 200) {
          assert.equal(reply.status, path === '/_admin/unknown' ? 404 : 200);
          continue;
        }
        assertError(reply, status, code);
        assert.match(reply.headers.get('www-authenticate') ?? '', /^Bearer /);
        assert.doesNotMatch(JSON.stringify(reply.body), new RegExp(TOKEN));
      }
    });
  }
  await t.test('the admin token is no key of a connection (in Authorization it is the admin: test/admin/sheet-access.test.ts)', async () => {
    const response = await fetch(`${url}/sheets/crm`, { headers: { 'X-Api-Key': TOKEN } });
    assert.equal(response.status, 401);
    assert.equal((await response.json()).error, 'authentication_failed');
  });
});

test(`the admin token's settings (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const cases: [string, Record<string, string>, RegExp | null][] = [
    ['no variable: off', {}, null],
    ['an empty variable: off', { SHEETREST_ADMIN_TOKEN: '' }, null],
    ['a short token stops the start', { SHEETREST_ADMIN_TOKEN: 'short' }, /SHEETREST_ADMIN_TOKEN: the admin token has 5 characters; use at least 16/],
  ];
  for (const [name, env, problem] of cases) {
    await t.test(name, () => {
      if (problem === null) return assert.equal(configFor(dir, env).admin, undefined);
      assert.throws(() => configFor(dir, env), (error: unknown) => error instanceof ConfigError && problem.test(error.message) && !error.message.includes('short'));
    });
  }
  await t.test('a token from the variable', () => assert.equal(configFor(dir).admin?.token.reveal(), TOKEN));

  const files: [string, unknown, Record<string, string>, string | RegExp][] = [
    ['"admin.token" from a named variable', { env: 'MY_ADMIN_TOKEN' }, { MY_ADMIN_TOKEN: TOKEN }, TOKEN],
    ['"admin.token" in the file', TOKEN, {}, TOKEN],
    ['the file wins over SHEETREST_ADMIN_TOKEN', TOKEN, { SHEETREST_ADMIN_TOKEN: 'another-token-0123456789' }, TOKEN],
    ['a named variable that is not set', { env: 'MY_ADMIN_TOKEN' }, {}, /admin\.token\.env: environment variable MY_ADMIN_TOKEN is not set/],
    ['a short token in the file', 'short-token', {}, /admin\.token: the admin token has 11 characters; use at least 16/],
    ['a token with a space', 'short-token and more', {}, /admin\.token: the admin token contains white space/],
    ['a number', 42, {}, /admin\.token: expected a non-empty string or \{ "env": "VARIABLE_NAME" \}, got a number/],
  ];
  for (const [name, token, env, expected] of files) {
    await t.test(name, async () => {
      const path = dir.path('sheetrest.json');
      await writeFile(path, JSON.stringify({ admin: { token }, connections: [{ id: 'book', source: { type: 'file', path: 'book.xlsx' } }] }));
      if (typeof expected === 'string') return assert.equal((await loadConfig(path, { env })).admin?.token.reveal(), expected);
      await assert.rejects(loadConfig(path, { env }), (error: unknown) => error instanceof ConfigError && expected.test(error.message) && !error.message.includes('short-token'));
    });
  }
  await t.test('an unknown field in "admin"', async () => {
    const path = dir.path('sheetrest.json');
    await writeFile(path, JSON.stringify({ admin: { tokens: TOKEN }, connections: [{ id: 'book', source: { type: 'file', path: 'book.xlsx' } }] }));
    await assert.rejects(loadConfig(path, { env: {} }), /admin\.tokens: unknown field; expected one of "token"/);
  });
});

test(`connections: create, read, change, delete at run time (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const { url } = await startServer(t, configFor(dir));

  const listed = await call(url, 'GET', '/_admin/connections');
  assert.equal(listed.status, 200);
  assert.equal(listed.headers.get('cache-control'), 'no-store');
  assert.deepEqual(listed.body.map((c: { id: string; origin: string; editable: boolean }) => [c.id, c.origin, c.editable]), [['book', 'config', false]]);
  assert.equal((await fetch(`${url}/sheets/crm`)).status, 404);

  const created = await call(url, 'POST', '/_admin/connections', crm(dir, { hiddenTabs: 'hide', open: true }));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.headers.get('location'), '/_admin/connections/crm');
  assert.equal(created.body.origin, 'admin');
  assert.equal(created.body.status, 'ok');
  assert.deepEqual(created.body.source, { type: 'file', path: dir.path('crm.xlsx') });
  assert.deepEqual(await getRows(`${url}/sheets/crm`), [{ Lead: 'Acme', Stage: 'new' }, { Lead: 'Globex', Stage: 'won' }]);
  assert.deepEqual((await call(url, 'GET', '/_admin/connections/crm')).body, { ...created.body, usage: { ...created.body.usage, requests: 1, remaining: null } });

  await t.test('a plan set with PATCH applies to the next request', async () => {
    const changed = await call(url, 'PATCH', '/_admin/connections/crm', { plan: { name: 'tiny', monthlyRequests: 3 } });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.deepEqual(changed.body.plan, { name: 'tiny', monthlyRequests: 3, operations: ['read', 'create', 'update', 'delete'] });
    const response = await fetch(`${url}/sheets/crm`);
    await response.body?.cancel();
    assert.equal(response.headers.get('x-ratelimit-plan'), 'tiny');
    // Counted this month: the GET before the plan and this one.
    assert.equal(response.headers.get('x-ratelimit-remaining'), '1');
    const usage = await call(url, 'GET', '/_admin/connections/crm/usage');
    const reset = spanAt('month', Date.now()).to / 1000;
    assert.deepEqual(usage.body, { month: new Date().toISOString().slice(0, 7), requests: 2, plan: 'tiny', limit: 3, remaining: 1, reset, resetAt: new Date(reset * 1000).toISOString().replace('.000Z', 'Z') });
    const removed = await call(url, 'PATCH', '/_admin/connections/crm', { plan: null });
    assert.equal(removed.body.plan, null);
    const after = await fetch(`${url}/sheets/crm`);
    await after.body?.cancel();
    assert.equal(after.headers.get('x-ratelimit-plan'), 'unlimited');
  });

  await t.test('a day plan set with PATCH counts by the day, and its usage names the day', async () => {
    const changed = await call(url, 'PATCH', '/_admin/connections/crm', { plan: { name: 'daily', period: 'day', requests: 5 } });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.deepEqual(changed.body.plan, { name: 'daily', period: 'day', requests: 5, operations: ['read', 'create', 'update', 'delete'] });
    const response = await fetch(`${url}/sheets/crm`);
    await response.body?.cancel();
    const reset = spanAt('day', Date.now()).to / 1000;
    assert.equal(response.headers.get('x-ratelimit-reset'), String(reset));
    // The day's count starts here: the requests before were counted in the month.
    assert.equal(response.headers.get('x-ratelimit-remaining'), '4');
    const usage = await call(url, 'GET', '/_admin/connections/crm/usage');
    assert.deepEqual(usage.body, { day: new Date().toISOString().slice(0, 10), requests: 1, plan: 'daily', limit: 5, remaining: 4, reset, resetAt: new Date(reset * 1000).toISOString().replace('.000Z', 'Z') });
    assert.equal((await call(url, 'PATCH', '/_admin/connections/crm', { plan: null })).body.plan, null);
  });

  await t.test('readOnly through PATCH refuses writes, and back', async () => {
    assert.equal((await call(url, 'PATCH', '/_admin/connections/crm', { readOnly: true })).body.writable, false);
    const refused = await postJson(`${url}/sheets/crm`, { Lead: 'Initech' });
    assert.equal(refused.status, 403);
    assert.equal((await refused.json()).error, 'write_error');
    assert.equal((await call(url, 'PATCH', '/_admin/connections/crm', { readOnly: false })).body.writable, true);
    const written = await postJson(`${url}/sheets/crm`, { Lead: 'Initech' });
    assert.equal(written.status, 201);
    await written.body?.cancel();
  });

  await t.test('a new source through PATCH; one that cannot open changes nothing', async () => {
    const missing = await call(url, 'PATCH', '/_admin/connections/crm', { source: { type: 'file', path: dir.path('gone.xlsx') } });
    assertError(missing, 400, 'invalid_body', REFUSED_PATH);
    assert.equal((await getRows(`${url}/sheets/crm`)).length, 3);
    const moved = await call(url, 'PATCH', '/_admin/connections/crm', { source: { type: 'file', path: dir.path('other.xlsx') } });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.deepEqual(await getRows(`${url}/sheets/crm`), [{ Thing: 'x' }]);
    // The old file got the write made before the switch: its source was closed, not dropped.
    assert.deepEqual((await readBook(dir.path('crm.xlsx'))).Leads.map((row) => row[0]), ['Lead', 'Acme', 'Globex', 'Initech']);
  });

  await t.test('GET / lists the open connections only', async () => {
    const keyed = await call(url, 'POST', '/_admin/connections', { id: 'keyed', source: { type: 'file', path: dir.path('crm.xlsx') } });
    assert.equal(keyed.status, 201, JSON.stringify(keyed.body));
    assert.equal((await call(url, 'POST', '/_admin/connections/keyed/keys', {})).status, 201);
    const index = await fetch(`${url}/`);
    assert.equal(index.status, 200);
    assert.match(index.headers.get('content-type') ?? '', /application\/json/);
    const body = await index.json();
    assert.deepEqual(body.connections.map((c: { id: string }) => c.id), ['book', 'crm']);
    assert.deepEqual(body.connections[1].links, { rows: '/sheets/crm', tabs: '/sheets/crm/tabs', openapi: '/sheets/crm/openapi.json' });
    assertError(await call(url, 'POST', '/', {}), 405, 'method_not_allowed');
    assert.equal((await call(url, 'DELETE', '/_admin/connections/keyed')).status, 204);
  });

  await t.test('DELETE: the next request gets 404, a second DELETE too', async () => {
    const deleted = await call(url, 'DELETE', '/_admin/connections/crm');
    assert.equal(deleted.status, 204);
    assert.equal(deleted.body, null);
    assertError(await call(url, 'GET', '/sheets/crm'), 404, 'not_found');
    assertError(await call(url, 'DELETE', '/_admin/connections/crm'), 404, 'not_found');
    assert.deepEqual((await call(url, 'GET', '/_admin/connections')).body.map((c: { id: string }) => c.id), ['book']);
  });
});

test(`bad requests answer 4xx in the contract's shape (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const { url } = await startServer(t, configFor(dir));
  assert.equal((await call(url, 'POST', '/_admin/connections', crm(dir))).status, 201);
  const key = (await call(url, 'POST', '/_admin/connections/crm/keys', {})).body;
  const json = { 'Content-Type': 'application/json', ...AUTH };
  const cases: [string, string, string, unknown, Record<string, string>, number, string, RegExp][] = [
    ['bad JSON', 'POST', '/_admin/connections', '{"id": "x" "source": 1}', json, 400, 'invalid_json', /line 1, column 12/],
    ['not JSON by its type', 'POST', '/_admin/connections', 'id=x', { ...AUTH, 'Content-Type': 'application/x-www-form-urlencoded' }, 415, 'unsupported_media_type', /application\/json/],
    ['an array', 'POST', '/_admin/connections', [], json, 400, 'invalid_body', /expected an object, got an array/],
    ['no id', 'POST', '/_admin/connections', { source: { type: 'file', path: 'x.xlsx' } }, json, 400, 'invalid_body', /id: is required/],
    ['an id with a slash', 'POST', '/_admin/connections', { id: 'a/b', source: { type: 'file', path: 'x.xlsx' } }, json, 400, 'invalid_body', /id: expected an id made of letters/],
    ['an unknown field', 'POST', '/_admin/connections', { ...crm(dir), id: 'y', readonly: true }, json, 400, 'invalid_body', /readonly: unknown field \(did you mean "readOnly"\?\)/],
    ['keys inline', 'POST', '/_admin/connections', { ...crm(dir), id: 'y', keys: [{ key: 'k' }] }, json, 400, 'invalid_body', /keys: keys are made with POST/],
    ['an unknown source type', 'POST', '/_admin/connections', { id: 'y', source: { type: 'fil', path: 'x' } }, json, 400, 'invalid_body', /source\.type: expected "file" or "google", got "fil"/],
    ['a missing file', 'POST', '/_admin/connections', { id: 'y', source: { type: 'file', path: dir.path('nope.xlsx') } }, json, 400, 'invalid_body', REFUSED_PATH],
    ['an unsupported file', 'POST', '/_admin/connections', { id: 'y', source: { type: 'file', path: dir.path('notes.txt') } }, json, 400, 'invalid_body', /unsupported file type/],
    ['two Google credentials', 'POST', '/_admin/connections', { id: 'y', source: { type: 'google', spreadsheetId: 'abc', apiKey: 'k', accessToken: 't' } }, json, 400, 'invalid_body', /at most one of/],
    ['an unset variable', 'POST', '/_admin/connections', { id: 'y', source: { type: 'google', spreadsheetId: 'abc', accessToken: { env: 'SHEETREST_TEST_UNSET_42' } } }, json, 400, 'invalid_body', /^The body is not valid: source\.accessToken: the admin API does not read environment variables; give the value itself\.$/],
    ['a bad plan', 'POST', '/_admin/connections', { ...crm(dir), id: 'y', plan: { name: 'p', monthlyRequests: '10k' } }, json, 400, 'invalid_body', /plan\.monthlyRequests: expected a whole number >= 0, got "10k"/],
    ['a plan of an unknown period', 'PATCH', '/_admin/connections/crm', { plan: { name: 'p', period: 'week', requests: 5 } }, json, 400, 'invalid_body', /plan\.period: expected "month", "day" or "hour", got "week"/],
    ["the config's id", 'POST', '/_admin/connections', { id: 'book', source: { type: 'file', path: dir.path('other.xlsx') } }, json, 409, 'conflict', /already a connection "book"/],
    ['an id that exists', 'POST', '/_admin/connections', crm(dir), json, 409, 'conflict', /already a connection "crm"/],
    ['a file already served', 'POST', '/_admin/connections', { id: 'y', source: { type: 'file', path: dir.path('book.xlsx') } }, json, 409, 'conflict', /already served by the connection "book"/],
    ['an id change', 'PATCH', '/_admin/connections/crm', { id: 'z' }, json, 400, 'invalid_body', /keeps its id/],
    ['a bad flag', 'PATCH', '/_admin/connections/crm', { readOnly: 'yes' }, json, 400, 'invalid_body', /readOnly: expected true or false/],
    ["a change to the config's connection", 'PATCH', '/_admin/connections/book', { readOnly: true }, json, 403, 'permission_denied', /config file/],
    ["deleting the config's connection", 'DELETE', '/_admin/connections/book', undefined, AUTH, 403, 'permission_denied', /config file/],
    ["a key for the config's connection", 'POST', '/_admin/connections/book/keys', {}, json, 403, 'permission_denied', /config file/],
    ['an unknown connection', 'GET', '/_admin/connections/nope', undefined, AUTH, 404, 'not_found', /no connection "nope"/],
    ['an unknown connection to change', 'PATCH', '/_admin/connections/nope', {}, json, 404, 'not_found', /no connection "nope"/],
    ["an unknown connection's usage", 'GET', '/_admin/connections/nope/usage', undefined, AUTH, 404, 'not_found', /no connection "nope"/],
    ['an unknown key', 'DELETE', '/_admin/connections/crm/keys/0123456789abcdef', undefined, AUTH, 404, 'not_found', /no key/],
    ['a bad scope', 'POST', '/_admin/connections/crm/keys', { scope: 'admin' }, json, 400, 'invalid_body', /scope: expected "read" or "write"/],
    ['a lone surrogate in a key name', 'POST', '/_admin/connections/crm/keys', '{"name": "ci\\ud800"}', json, 400, 'invalid_body', /the field "name" holds text that is not valid Unicode/],
    ['an overlap too long', 'POST', `/_admin/connections/crm/keys/${key.id}/rotate`, { overlapSeconds: 31 * 86400 }, json, 400, 'invalid_body', /overlapSeconds: expected a whole number of seconds from 0 to 2592000/],
    ['an unknown path', 'GET', '/_admin/connections/crm/nothing', undefined, AUTH, 404, 'not_found', /No admin resource/],
    ['a wrong method', 'PUT', '/_admin/connections/crm', '{}', json, 405, 'method_not_allowed', /use GET, HEAD, PATCH, DELETE/],
  ];
  for (const [name, method, path, body, headers, status, code, message] of cases) {
    await t.test(name, async () => {
      const reply = await call(url, method, path, body, headers);
      assertError(reply, status, code, message);
      if (status === 405) assert.equal(reply.headers.get('allow'), 'GET, HEAD, PATCH, DELETE');
    });
  }
  await t.test('nothing was created or changed by them', async () => {
    const listed = (await call(url, 'GET', '/_admin/connections')).body;
    assert.deepEqual(listed.map((c: { id: string; readOnly: boolean }) => [c.id, c.readOnly]), [['book', false], ['crm', false]]);
  });
});

test(`keys: shown once, listed without the secret, revoked and rotated (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const { url } = await startServer(t, configFor(dir));
  assert.equal((await call(url, 'POST', '/_admin/connections', crm(dir, { open: true }))).status, 201);
  const get = (key: string | null, path = '/sheets/crm') => fetch(`${url}${path}`, { headers: key === null ? {} : { 'X-Api-Key': key } });
  const status = async (key: string | null) => {
    const response = await get(key);
    await response.body?.cancel();
    return response.status;
  };
  assert.equal(await status(null), 200, 'made open, it is open until it has a key');

  const reader = await call(url, 'POST', '/_admin/connections/crm/keys', { scope: 'read', name: 'dashboard' });
  assert.equal(reader.status, 201);
  assert.match(reader.body.key, /^sr_[A-Za-z0-9_-]{43}$/);
  assert.equal(reader.body.prefix, reader.body.key.slice(0, 11));
  assert.deepEqual(Object.keys(reader.body).sort(), ['created', 'expires', 'expiresAt', 'id', 'key', 'name', 'operations', 'prefix', 'replacedBy', 'scope', 'tabs']);
  assert.deepEqual([reader.body.operations, reader.body.tabs, reader.body.expiresAt], [['read'], null, null]);
  assert.equal(await status(null), 401);
  assert.equal(await status(reader.body.key), 200);
  const write = await fetch(`${url}/sheets/crm`, { method: 'POST', headers: { 'X-Api-Key': reader.body.key, 'Content-Type': 'application/json' }, body: '{"Lead":"x"}' });
  assert.equal(write.status, 403);
  assert.equal((await write.json()).error, 'permission_denied');

  const writer = (await call(url, 'POST', '/_admin/connections/crm/keys', {})).body;
  assert.equal(writer.scope, 'write');
  const listed = await call(url, 'GET', '/_admin/connections/crm/keys');
  assert.deepEqual(listed.body.map((key: { prefix: string; scope: string }) => [key.prefix, key.scope]), [[reader.body.prefix, 'read'], [writer.prefix, 'write']]);
  const shown = JSON.stringify([listed.body, (await call(url, 'GET', '/_admin/connections')).body, (await call(url, 'GET', `/_admin/connections/crm/keys/${writer.id}`)).body]);
  for (const secret of [reader.body.key, writer.key]) assert.ok(!shown.includes(secret) && !shown.includes(secret.slice(11)), 'no key is listed');
  assert.doesNotMatch(shown, /sha256|[0-9a-f]{64}/);

  await t.test('a revoked key gets 401 on its next request', async () => {
    assert.equal((await call(url, 'DELETE', `/_admin/connections/crm/keys/${reader.body.id}`)).status, 204);
    const refused = await get(reader.body.key);
    assert.equal(refused.status, 401);
    assert.equal((await refused.json()).error, 'authentication_failed');
    assert.equal(await status(writer.key), 200);
    assertError(await call(url, 'GET', `/_admin/connections/crm/keys/${reader.body.id}`), 404, 'not_found');
  });

  await t.test('rotation: both keys work during the overlap, the old one stops after it', async () => {
    const rotated = await call(url, 'POST', `/_admin/connections/crm/keys/${writer.id}/rotate`, { overlapSeconds: 1 });
    assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
    assert.equal(rotated.body.scope, 'write');
    assert.notEqual(rotated.body.key, writer.key);
    assert.equal(rotated.body.replaces.id, writer.id);
    assert.equal(rotated.body.replaces.replacedBy, rotated.body.id);
    const ends = Date.parse(rotated.body.replaces.expires);
    assert.ok(ends > Date.now() - 1000 && ends <= Date.now() + 1000, rotated.body.replaces.expires);
    assert.equal(await status(rotated.body.key), 200);
    if (Date.now() < ends) assert.equal(await status(writer.key), 200, 'the old key works in the overlap');
    assertError(await call(url, 'POST', `/_admin/connections/crm/keys/${writer.id}/rotate`, {}), 409, 'conflict', /already rotated/);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, ends - Date.now()) + 50));
    assert.equal(await status(writer.key), 401, 'the old key is refused once the overlap is over');
    assert.equal(await status(rotated.body.key), 200);
    const keys = (await call(url, 'GET', '/_admin/connections/crm/keys')).body;
    assert.deepEqual(keys.map((key: { id: string }) => key.id), [rotated.body.id], 'an expired key is no longer listed');
  });

  await t.test('the default overlap is a day; overlapSeconds 0 revokes at once', async () => {
    const current = (await call(url, 'GET', '/_admin/connections/crm/keys')).body[0];
    const rotated = (await call(url, 'POST', `/_admin/connections/crm/keys/${current.id}/rotate`)).body;
    assert.ok(Math.abs(Date.parse(rotated.replaces.expires) - Date.now() - 86_400_000) < 60_000, rotated.replaces.expires);
    const immediate = (await call(url, 'POST', `/_admin/connections/crm/keys/${rotated.id}/rotate`, { overlapSeconds: 0 })).body;
    assert.equal(await status(rotated.key), 401);
    assert.equal(await status(immediate.key), 200);
  });
});

test(`finer keys: operations, tabs and expiresAt, when made and rotated (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const { url } = await startServer(t, configFor(dir));
  assert.equal((await call(url, 'POST', '/_admin/connections', crm(dir))).status, 201);
  const send = async (key: string, method = 'GET', path = '/sheets/crm', body?: unknown) => {
    const response = await fetch(`${url}${path}`, { method, headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : JSON.parse(text) };
  };
  const expiresAt = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d{3}Z$/, '+00:00');
  const form = await call(url, 'POST', '/_admin/connections/crm/keys', { operations: ['create'], tabs: ['Leads'], expiresAt, name: 'web form' });
  assert.equal(form.status, 201, JSON.stringify(form.body));
  assert.deepEqual([form.body.operations, form.body.tabs, form.body.scope, form.body.name], [['create'], ['Leads'], null, 'web form']);
  assert.equal(form.body.expiresAt, new Date(expiresAt).toISOString(), 'kept in UTC');

  await t.test('it may do what it was made for, and 403 names that for the rest', async () => {
    assert.equal((await send(form.body.key, 'POST', '/sheets/crm', { Lead: 'Initech', Stage: 'new' })).status, 201);
    const read = await send(form.body.key);
    assert.deepEqual([read.status, read.body.error], [403, 'permission_denied']);
    assert.match(read.body.message, /may not read rows \(GET\); it may create rows \(POST\)/);
  });

  await t.test('listed with what it may do, never the secret', async () => {
    const listed = (await call(url, 'GET', '/_admin/connections/crm/keys')).body;
    const shown = listed.find((key: { id: string }) => key.id === form.body.id);
    assert.deepEqual([shown.operations, shown.tabs, shown.expiresAt, shown.scope], [['create'], ['Leads'], form.body.expiresAt, null]);
    assert.equal(JSON.stringify(listed).includes(form.body.key.slice(11)), false);
  });

  await t.test('a key for other tabs finds no tab here', async () => {
    const other = (await call(url, 'POST', '/_admin/connections/crm/keys', { scope: 'read', tabs: ['Elsewhere'] })).body;
    const read = await send(other.key);
    assert.deepEqual([read.status, read.body.error, read.body.message], [404, 'tab_not_found', 'There is no tab to read: the spreadsheet has no tabs.']);
    assert.equal((await send(other.key, 'GET', '/sheets/crm/tabs')).body.length, 0);
  });

  await t.test('a rotation hands operations, tabs and expiry to the new key unless told otherwise', async () => {
    const same = await call(url, 'POST', `/_admin/connections/crm/keys/${form.body.id}/rotate`, { overlapSeconds: 0 });
    assert.equal(same.status, 201, JSON.stringify(same.body));
    assert.deepEqual([same.body.operations, same.body.tabs, same.body.expiresAt, same.body.name], [['create'], ['Leads'], form.body.expiresAt, 'web form']);
    const lifted = await call(url, 'POST', `/_admin/connections/crm/keys/${same.body.id}/rotate`, { overlapSeconds: 0, scope: 'read', tabs: null, expiresAt: null });
    assert.deepEqual([lifted.body.operations, lifted.body.tabs, lifted.body.expiresAt, lifted.body.scope], [['read'], null, null, 'read']);
    assert.equal((await send(lifted.body.key)).status, 200);
  });

  await t.test('a key made to expire soon is 401 saying so once it has', async () => {
    const soon = new Date(Date.now() + 1_000).toISOString();
    const short = (await call(url, 'POST', '/_admin/connections/crm/keys', { expiresAt: soon })).body;
    assert.equal((await send(short.key)).status, 200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(soon) - Date.now()) + 50));
    const expired = await send(short.key);
    assert.deepEqual([expired.status, expired.body.error], [401, 'authentication_failed']);
    assert.match(expired.body.message, /expired at /);
  });

  await t.test('bad key bodies: 400 invalid_body naming the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ scope: 'read', operations: ['read'] }, /expected at most one of "scope", "operations", got "scope" and "operations"/],
      [{ operations: [] }, /operations: expected at least one of "read", "create", "update", "delete"/],
      [{ operations: ['write'] }, /operations\[0\]: expected "read", "create", "update" or "delete", got "write"/],
      [{ tabs: [] }, /tabs: expected at least one tab name/],
      [{ expiresAt: 'next week' }, /expiresAt: expected an ISO 8601 date or time with its zone/],
      [{ expiresAt: '2001-01-01T00:00:00Z' }, /expiresAt: 2001-01-01T00:00:00Z has passed; give a moment in the future/],
    ];
    for (const [body, message] of cases) assertError(await call(url, 'POST', '/_admin/connections/crm/keys', body), 400, 'invalid_body', message);
    const key = (await call(url, 'GET', '/_admin/connections/crm/keys')).body[0];
    assertError(await call(url, 'POST', `/_admin/connections/crm/keys/${key.id}/rotate`, { expiresAt: '2001-01-01' }), 400, 'invalid_body', /has passed/);
  });
});

test(`every change survives a restart (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const first = await startServer(t, configFor(dir));
  let url = first.url;
  assert.equal((await call(url, 'POST', '/_admin/connections', crm(dir, { plan: { name: 'small', monthlyRequests: 100 }, formulas: true }))).status, 201);
  const kept = (await call(url, 'POST', '/_admin/connections/crm/keys', { name: 'kept' })).body;
  const revoked = (await call(url, 'POST', '/_admin/connections/crm/keys', { name: 'revoked' })).body;
  assert.equal((await call(url, 'DELETE', `/_admin/connections/crm/keys/${revoked.id}`)).status, 204);
  const before = (await call(url, 'GET', '/_admin/connections/crm')).body;
  await first.close();

  const file = dir.path('state/admin.json');
  const text = await readFile(file, 'utf8');
  assert.ok(!text.includes(kept.key) && !text.includes(revoked.key), 'admin.json holds digests, never a key');
  if (process.platform !== 'win32') assert.equal((await stat(file)).mode & 0o777, 0o600);

  await t.test('after an orderly stop', async (t) => {
    const second = await startServer(t, configFor(dir));
    url = second.url;
    const after = (await call(url, 'GET', '/_admin/connections/crm')).body;
    assert.deepEqual({ ...after, usage: null }, { ...before, usage: null });
    const works = await fetch(`${url}/sheets/crm`, { headers: { 'X-Api-Key': kept.key } });
    assert.equal(works.status, 200);
    assert.equal(works.headers.get('x-ratelimit-plan'), 'small');
    await works.body?.cancel();
    const refused = await fetch(`${url}/sheets/crm`, { headers: { 'X-Api-Key': revoked.key } });
    assert.equal(refused.status, 401);
    await refused.body?.cancel();
    await second.close();
  });

  await t.test("a stored connection whose file is gone answers 503 and can be fixed", async (t) => {
    await rm(dir.path('crm.xlsx'));
    const third = await startServer(t, configFor(dir));
    const unavailable = await fetch(`${third.url}/sheets/crm`, { headers: { 'X-Api-Key': kept.key } });
    assert.equal(unavailable.status, 503);
    const body = await unavailable.json();
    assert.equal(body.error, 'upstream_unavailable');
    assert.doesNotMatch(body.message, /crm\.xlsx/, 'the reason (a path) is for the admin only');
    const shown = (await call(third.url, 'GET', '/_admin/connections/crm')).body;
    assert.equal(shown.status, 'unavailable');
    assert.match(shown.problem, /source\.path: the admin API opens only existing regular files inside/);
    const fixed = await call(third.url, 'PATCH', '/_admin/connections/crm', { source: { type: 'file', path: dir.path('other.xlsx') } });
    assert.equal(fixed.body.status, 'ok', JSON.stringify(fixed.body));
    const served = await fetch(`${third.url}/sheets/crm`, { headers: { 'X-Api-Key': kept.key } });
    assert.deepEqual(await served.json(), [{ Thing: 'x' }]);
    await third.close();
  });

  await t.test('a config connection with a stored id stops the start, naming it', async () => {
    const clash = configForFile(dir.path('other.xlsx'), { id: 'crm', stateDir: dir.path('state'), log: { level: 'silent' } }, { env: {} });
    await assert.rejects(startServer(t, clash), /"crm" is in the config file and also in admin\.json/);
  });
});

test(`kill -9 right after the answers loses no admin change (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const args = [dir.path('book.xlsx'), '--state-dir', dir.path('state'), '--log-level', 'warn'];
  const env = { SHEETREST_ADMIN_TOKEN: TOKEN };
  const first = await spawnServer(t, args, 15_000, env);
  assert.equal((await call(first.url, 'POST', '/_admin/connections', crm(dir, { open: true }))).status, 201);
  const kept = (await call(first.url, 'POST', '/_admin/connections/crm/keys', {})).body;
  const revoked = (await call(first.url, 'POST', '/_admin/connections/crm/keys', {})).body;
  assert.equal((await call(first.url, 'DELETE', `/_admin/connections/crm/keys/${revoked.id}`)).status, 204);
  const changed = await call(first.url, 'PATCH', '/_admin/connections/crm', { plan: { name: 'after-kill', monthlyRequests: 10 } });
  assert.equal(changed.status, 200);
  first.signal('SIGKILL');
  assert.equal((await within(5000, 'SIGKILL', first.exited)).signal, 'SIGKILL');

  const second = await spawnServer(t, args, 15_000, env);
  const shown = (await call(second.url, 'GET', '/_admin/connections/crm')).body;
  assert.equal(shown.plan.name, 'after-kill');
  assert.deepEqual(shown.keys.map((key: { id: string }) => key.id), [kept.id]);
  const statusWith = async (key: string) => {
    const response = await fetch(`${second.url}/sheets/crm`, { headers: { 'X-Api-Key': key } });
    await response.body?.cancel();
    return response.status;
  };
  assert.equal(await statusWith(kept.key), 200);
  assert.equal(await statusWith(revoked.key), 401);
});

test(`DELETE closes the source after its writes in flight (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const { url } = await startServer(t, configFor(dir));
  assert.equal((await call(url, 'POST', '/_admin/connections', crm(dir, { open: true }))).status, 201);
  const posts = Array.from({ length: 20 }, (_, i) => postJson(`${url}/sheets/crm`, { Lead: `lead-${i}` }).then(async (response) => ({ i, status: response.status, body: await response.text() })));
  const deleted = await call(url, 'DELETE', '/_admin/connections/crm');
  assert.equal(deleted.status, 204);
  const answered = await Promise.all(posts);
  const acknowledged = answered.filter((post) => post.status === 201).map((post) => `lead-${post.i}`);
  for (const post of answered) assert.ok(post.status === 201 || post.status === 404 || post.status === 403, `${post.status} ${post.body}`);
  // Once DELETE has answered, every acknowledged row is in the file itself (folded on close).
  const inFile = (await readBook(dir.path('crm.xlsx'))).Leads.slice(3).map((row) => row[0]);
  assert.deepEqual([...inFile].sort(), [...acknowledged].sort());
  // And the same file can be served again at once.
  assert.equal((await call(url, 'POST', '/_admin/connections', crm(dir, { open: true }))).status, 201);
});

test(`a Google connection through the admin API (emulator) (${RUNTIME})`, async (t) => {
  const emulator = await startEmulator();
  t.after(() => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name'], ['Ann'], ['Bob']] }], access: { 'emulator-token': 'writer' } });
  const dir = await folder(t);
  // The emulator is no endpoint of Google's: the config allows it.
  const config = configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' }, admin: { token: TOKEN, allowedEndpoints: [emulator.rootUrl] } }, { env: {} });
  const { url } = await startServer(t, config);
  const source = { type: 'google', spreadsheetId, rootUrl: emulator.rootUrl, accessToken: 'emulator-token', retries: 0 };
  const created = await call(url, 'POST', '/_admin/connections', { id: 'people', source, open: true });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.source.accessToken, '[secret]');
  assert.doesNotMatch(JSON.stringify((await call(url, 'GET', '/_admin/connections')).body), /emulator-token/);
  assert.deepEqual(await getRows(`${url}/sheets/people`), [{ Name: 'Ann' }, { Name: 'Bob' }]);
  const written = await postJson(`${url}/sheets/people`, { Name: 'Cy' });
  assert.equal(written.status, 201);
  await written.body?.cancel();
  assert.equal(emulator.sheet(spreadsheetId, 'People').rows.length, 4);
});

/** `npm start` with no arguments, in `cwd` (the demo copies its workbook there): its stdout up to the admin line. */
async function demoStdout(t: TestContext, cwd: string, env: Record<string, string | undefined>): Promise<string> {
  const [command, argv] = cliCommand(['--host', '127.0.0.1', '--port', '0', '--log-level', 'warn']);
  const main = argv.indexOf('server/main.ts');
  argv[main] = join(REPO_ROOT, 'server', 'main.ts');
  const childEnv: Record<string, string> = { NO_COLOR: '1' };
  for (const [name, value] of Object.entries({ ...process.env, ...env })) if (value !== undefined) childEnv[name] = value;
  const child = spawn(command, argv, { cwd, stdio: ['ignore', 'pipe', 'ignore'], env: childEnv });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  defer(t, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  let stdout = '';
  const seen = new Promise<string>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      if (/^Admin API.*\n/m.test(stdout)) resolve(stdout);
    });
    void exited.then(() => resolve(stdout));
  });
  return within(15_000, 'the admin line', seen);
}

test(`npm start in demo mode says how to turn the admin API on (${RUNTIME})`, async (t) => {
  await t.test('off', async (t) => {
    const dir = await tempDir(t);
    const stdout = await demoStdout(t, dir.dir, { SHEETREST_ADMIN_TOKEN: undefined });
    assert.match(stdout, /^Admin API off: start with --admin \(a token is made into the state folder\) or SHEETREST_ADMIN_TOKEN=<a secret of 16\+ characters> to manage connections and keys at \/_admin and in the dashboard at \//m);
  });
  await t.test('on', async (t) => {
    const dir = await tempDir(t);
    const stdout = await demoStdout(t, dir.dir, { SHEETREST_ADMIN_TOKEN: TOKEN });
    assert.match(stdout, /^Admin API: http:\/\/127\.0\.0\.1:\d+\/_admin \(send Authorization: Bearer <admin token>/m);
    assert.match(stdout, /^Dashboard: http:\/\/127\.0\.0\.1:\d+\/ \(open it in a browser/m);
    assert.ok(!stdout.includes(TOKEN), 'the token is never printed');
  });
});

test(`an admin change is served at once, never a kept answer of the connection before it (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  await writeXlsx(dir.path('crm.xlsx'), 'Leads', [['Lead', 'Stage'], ['Acme', 'new']]);
  const { url } = await startServer(t, configFor(dir));
  assert.equal((await call(url, 'POST', '/_admin/connections', crm(dir, { open: true }))).status, 201);
  const first = await fetch(`${url}/sheets/crm/Stage/new`);
  assert.equal(first.headers.get('cache-control'), 'no-cache');
  assert.deepEqual(await first.json(), [{ Lead: 'Acme', Stage: 'new' }]);

  const changed = await call(url, 'PATCH', '/_admin/connections/crm', { cacheControl: { maxAge: 30 } });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  assert.deepEqual(changed.body.cacheControl, { maxAge: 30 });
  const again = await fetch(`${url}/sheets/crm/Stage/new`);
  assert.equal(again.headers.get('cache-control'), 'public, max-age=30');
  await again.body?.cancel();

  // The same source, hidden tabs now hidden: the same rows, another answer (the answer kept for
  // the connection as it was must not be sent).
  const book = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([['Lead', 'Stage'], ['Acme', 'new']]), 'Leads');
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([['Note'], ['internal']]), 'Secret');
  book.Workbook = { Sheets: [{ Hidden: 0 }, { Hidden: 1 }] };
  await writeFile(dir.path('crm.xlsx'), XLSX.write(book, { type: 'buffer', bookType: 'xlsx' }));
  const tabNames = async () => ((await (await fetch(`${url}/sheets/crm/tabs`, { headers: { 'Cache-Control': 'no-cache' } })).json()) as { name: string }[]).map((tab) => tab.name);
  assert.deepEqual(await tabNames(), ['Leads', 'Secret']);
  assert.deepEqual(await tabNames(), ['Leads', 'Secret']);
  assert.equal((await call(url, 'PATCH', '/_admin/connections/crm', { hiddenTabs: 'hide' })).status, 200);
  assert.deepEqual(await tabNames(), ['Leads']);

  // A new source for the same id: the kept answer of the old one must not be sent.
  await writeXlsx(dir.path('other.xlsx'), 'Leads', [['Lead', 'Stage'], ['Initech', 'new']]);
  assert.equal((await call(url, 'PATCH', '/_admin/connections/crm', { source: { type: 'file', path: dir.path('other.xlsx') }, cacheControl: null })).status, 200);
  const swapped = await fetch(`${url}/sheets/crm/Stage/new`);
  assert.equal(swapped.headers.get('cache-control'), 'no-cache');
  assert.deepEqual(await swapped.json(), [{ Lead: 'Initech', Stage: 'new' }]);
});

test(`a connection made with the admin API keeps Idempotency-Keys, across its changes (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const { url } = await startServer(t, configFor(dir));
  assert.equal((await call(url, 'POST', '/_admin/connections', crm(dir, { open: true }))).status, 201);
  const post = () => fetch(`${url}/sheets/crm`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'lead-1' }, body: JSON.stringify({ Lead: 'Initech', Stage: 'new' }) });
  const first = await post();
  assert.equal(first.status, 201);
  assert.equal(first.headers.get('idempotent-replayed'), null);
  await first.body?.cancel();
  // A change that keeps the source (a plan), then a retry: replayed, not written again.
  assert.equal((await call(url, 'PATCH', '/_admin/connections/crm', { plan: { name: 'p', monthlyRequests: 100 } })).status, 200);
  const retry = await post();
  assert.equal(retry.status, 201);
  assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  await retry.body?.cancel();
  // A change that reopens the source (read-only and back): the key survives in the state folder.
  assert.equal((await call(url, 'PATCH', '/_admin/connections/crm', { readOnly: true })).status, 200);
  assert.equal((await call(url, 'PATCH', '/_admin/connections/crm', { readOnly: false })).status, 200);
  const again = await post();
  assert.equal(again.headers.get('idempotent-replayed'), 'true');
  await again.body?.cancel();
  assert.deepEqual((await getRows(`${url}/sheets/crm`)).map((row) => row.Lead), ['Acme', 'Globex', 'Initech']);
});

/** The status (and error code) of a GET, and of a POST, without a key or with `key`. */
async function access(url: string, id: string, key: string | null = null): Promise<{ read: number; write: number; error: string | null; message: string }> {
  const headers: Record<string, string> = key === null ? {} : { 'X-Api-Key': key };
  const read = await fetch(`${url}/sheets/${id}`, { headers });
  const body = read.status === 200 ? null : await read.json();
  if (body === null) await read.body?.cancel();
  const write = await fetch(`${url}/sheets/${id}`, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json' }, body: '{"Lead":"intruder"}' });
  await write.body?.cancel();
  return { read: read.status, write: write.status, error: body?.error ?? null, message: body?.message ?? '' };
}

test(`open and closed connections: closed unless made open, and never opened by losing its keys (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  await writeXlsx(dir.path('rotated.xlsx'), 'Leads', [['Lead'], ['Acme']]);
  await writeXlsx(dir.path('both.xlsx'), 'Leads', [['Lead'], ['Acme']]);
  let server = await startServer(t, configFor(dir));
  let first = '';

  await t.test('a connection made with the admin API starts closed, with one key that works, shown once', async () => {
    const created = await call(server.url, 'POST', '/_admin/connections', crm(dir));
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.open, false);
    assert.match(created.body.newKey.key, /^sr_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.body.newKey.scope, 'write');
    assert.deepEqual(created.body.keys.map((key: { id: string }) => key.id), [created.body.newKey.id]);
    first = created.body.newKey.key;
    assert.deepEqual(await access(server.url, 'crm'), { read: 401, write: 401, error: 'not_authenticated', message: 'This connection needs an API key: send it in the X-Api-Key header.' });
    const keyed = await access(server.url, 'crm', first);
    assert.deepEqual([keyed.read, keyed.write], [200, 201]);
    const shown = JSON.stringify([(await call(server.url, 'GET', '/_admin/connections/crm')).body, (await call(server.url, 'GET', '/_admin/connections')).body]);
    assert.ok(!shown.includes(first) && !shown.includes('newKey'), 'the key is shown in the create answer only');
  });

  await t.test('"open": true makes an open connection, without a key', async () => {
    const created = await call(server.url, 'POST', '/_admin/connections', { id: 'public', source: { type: 'file', path: dir.path('other.xlsx') }, open: true });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(created.body.open, true);
    assert.equal(created.body.newKey, undefined);
    assert.deepEqual(created.body.keys, []);
    assert.equal((await access(server.url, 'public')).read, 200);
  });

  await t.test('revoking the last key leaves the connection closed (401 for everyone)', async () => {
    const keys = (await call(server.url, 'GET', '/_admin/connections/crm/keys')).body;
    assert.equal(keys.length, 1);
    assert.equal((await call(server.url, 'DELETE', `/_admin/connections/crm/keys/${keys[0].id}`)).status, 204);
    const anonymous = await access(server.url, 'crm');
    assert.deepEqual([anonymous.read, anonymous.write, anonymous.error], [401, 401, 'not_authenticated']);
    assert.match(anonymous.message, /no usable API key.*admin API/);
    const revoked = await access(server.url, 'crm', first);
    assert.deepEqual([revoked.read, revoked.write, revoked.error], [401, 401, 'authentication_failed']);
    const view = (await call(server.url, 'GET', '/_admin/connections/crm')).body;
    assert.deepEqual([view.open, view.keys], [false, []]);
  });

  let rotated = '';
  let replaced = '';
  await t.test('rotating with an overlap, then revoking the new key: closed once the old key ends', async () => {
    const created = (await call(server.url, 'POST', '/_admin/connections', { id: 'rotated', source: { type: 'file', path: dir.path('rotated.xlsx') } })).body;
    replaced = created.newKey.key;
    const rotation = await call(server.url, 'POST', `/_admin/connections/rotated/keys/${created.newKey.id}/rotate`, { overlapSeconds: 1 });
    assert.equal(rotation.status, 201, JSON.stringify(rotation.body));
    rotated = rotation.body.key;
    assert.equal((await call(server.url, 'DELETE', `/_admin/connections/rotated/keys/${rotation.body.id}`)).status, 204);
    assert.equal((await access(server.url, 'rotated')).read, 401);
    assert.equal((await access(server.url, 'rotated', rotated)).read, 401);
    const ends = Date.parse(rotation.body.replaces.expires);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, ends - Date.now()) + 50));
    const after = await access(server.url, 'rotated');
    assert.deepEqual([after.read, after.write], [401, 401], 'the old key ended: still closed, never open');
    assert.match(after.message, /no usable API key/);
    assert.equal((await access(server.url, 'rotated', replaced)).read, 401);
  });

  await t.test('after a restart both stay closed', async () => {
    await server.close();
    server = await startServer(t, configFor(dir));
    for (const id of ['crm', 'rotated']) {
      const anonymous = await access(server.url, id);
      assert.deepEqual([id, anonymous.read, anonymous.write], [id, 401, 401]);
      assert.match(anonymous.message, /no usable API key/);
      assert.equal((await call(server.url, 'GET', `/_admin/connections/${id}`)).body.open, false);
    }
    assert.equal((await access(server.url, 'rotated', replaced)).read, 401);
    assert.equal((await access(server.url, 'public')).read, 200, 'the open one stays open');
  });

  await t.test('"open": true is refused while the connection has keys; a key added to an open connection closes it', async () => {
    const created = (await call(server.url, 'POST', '/_admin/connections', { id: 'both', source: { type: 'file', path: dir.path('both.xlsx') } })).body;
    assertError(await call(server.url, 'PATCH', '/_admin/connections/both', { open: true }), 409, 'conflict', /has a key; revoke it first/);
    assert.equal((await access(server.url, 'both')).read, 401, 'nothing changed');
    assert.equal((await call(server.url, 'DELETE', `/_admin/connections/both/keys/${created.newKey.id}`)).status, 204);
    const opened = await call(server.url, 'PATCH', '/_admin/connections/both', { open: true });
    assert.equal(opened.body.open, true, JSON.stringify(opened.body));
    assert.equal((await access(server.url, 'both')).read, 200);
    const key = (await call(server.url, 'POST', '/_admin/connections/both/keys', { scope: 'read' })).body;
    assert.equal((await call(server.url, 'GET', '/_admin/connections/both')).body.open, false);
    assert.equal((await access(server.url, 'both')).read, 401);
    assert.equal((await access(server.url, 'both', key.key)).read, 200);
    const closed = await call(server.url, 'PATCH', '/_admin/connections/public', { open: false });
    assert.equal(closed.body.open, false);
    assert.equal((await access(server.url, 'public')).read, 401, '"open": false closes it, with no key: refused to all');
    assertError(await call(server.url, 'PATCH', '/_admin/connections/both', { open: 'yes' }), 400, 'invalid_body', /open: expected true or false/);
  });

  await t.test("a config file's connection without keys stays open", async () => {
    const book = await access(server.url, 'book');
    assert.equal(book.read, 200);
    assert.equal((await call(server.url, 'GET', '/_admin/connections/book')).body.open, true);
  });
});

test(`admin.json from before the open flag: a keyless connection is closed, and the start says so at warn (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const now = new Date().toISOString();
  const stored = (id: string, file: string, extra: Record<string, unknown> = {}) => ({ id, source: { type: 'file', path: dir.path(file) }, created: now, updated: now, keys: [], ...extra });
  await mkdir(dir.path('state'), { recursive: true });
  await writeFile(dir.path('state/admin.json'), JSON.stringify({ version: 1, connections: [stored('legacy', 'crm.xlsx'), stored('public', 'other.xlsx', { open: true })] }));
  const lines: string[] = [];
  const { url } = await startServer(t, configFor(dir), createLogger('warn', (line) => lines.push(line)));
  const legacy = await access(url, 'legacy');
  assert.deepEqual([legacy.read, legacy.write], [401, 401]);
  assert.equal((await access(url, 'public')).read, 200, 'one stored open stays open');
  const warned = lines.map((line) => JSON.parse(line)).filter((entry) => entry.level === 'warn' && entry.connection === 'legacy');
  assert.equal(warned.length, 1, lines.join('\n'));
  assert.match(warned[0].message, /no usable key, so it refuses every request/);
  assert.equal(warned[0].addKey, 'POST /_admin/connections/legacy/keys');
  assert.equal(warned[0].open, 'PATCH /_admin/connections/legacy {"open": true}');
  assert.ok(!lines.some((line) => line.includes('"connection":"public"')));
  // The way out the line names works.
  const key = (await call(url, 'POST', '/_admin/connections/legacy/keys', {})).body.key;
  assert.equal((await access(url, 'legacy', key)).read, 200);
});

test(`unknownColumns and rowId through the admin API, applied at once and removable (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const { url } = await startServer(t, configFor(dir));
  const created = await call(url, 'POST', '/_admin/connections', crm(dir, { open: true, unknownColumns: 'reject', rowId: { column: 'Lead', generate: 'increment' } }));
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.unknownColumns, 'reject');
  assert.deepEqual(created.body.rowId, { column: 'Lead', generate: 'increment' });
  const post = (body: unknown) => fetch(`${url}/sheets/crm`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const typo = await post({ Stage: 'new', Stgae: 'x' });
  assert.equal(typo.status, 400);
  assert.equal((await typo.json()).error, 'unknown_column');
  // Acme and Globex hold no number: the first increment id is 1.
  const added = await post({ Stage: 'lost' });
  assert.deepEqual(await added.json(), { Lead: '1', Stage: 'lost' });

  const bad = await call(url, 'PATCH', '/_admin/connections/crm', { rowId: { column: 'Lead', generate: 'uuid4' } });
  assert.equal(bad.status, 400);
  assert.match(bad.body.message, /rowId\.generate: expected "uuid7" or "increment"/);
  const changed = await call(url, 'PATCH', '/_admin/connections/crm', { rowId: null, unknownColumns: 'ignore' });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  assert.equal(changed.body.rowId, null);
  const told = await post({ Stage: 'new', Stgae: 'x' });
  assert.equal(told.status, 201);
  assert.equal(told.headers.get('sheetrest-ignored-columns'), 'Stgae');
  assert.deepEqual(await told.json(), { Lead: '', Stage: 'new' }, 'no id once rowId is removed');
});
