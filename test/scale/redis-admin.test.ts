// The admin API's state shared through Redis: a connection and a key made through one
// instance's `/_admin` are served by the others as soon as the change is answered; a key revoked
// on one is refused by the others before the revocation is answered; a change made while an
// instance missed the message is caught up by its revision check. Each test starts its own
// redis-server; without one installed they are skipped, saying why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { createClient } from 'redis';
import { loadConfig, type Config } from '../../server/config/config.ts';
import { writeAdminFile } from '../../server/admin/store.ts';
import { createLogger } from '../../server/log.ts';
import { sharedAdminState } from '../../server/admin/redis-state.ts';
import { openRedis } from '../../server/redis/client.ts';
import { startEmulator } from '../../tools/google-emulator/mod.ts';
import { defer, RUNTIME, startServer, tempDir, type TestContext } from '../helpers/http.ts';
import { startRedis } from '../helpers/redis.ts';

const WRITER = 'writer-token';
const TOKEN = 'admin-token-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };

interface Reply {
  readonly status: number;
  // deno-lint-ignore no-explicit-any
  readonly body: any;
}

async function admin(base: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const answer = await fetch(`${base}/_admin${path}`, { method, headers: AUTH, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await answer.text();
  return { status: answer.status, body: text === '' ? null : JSON.parse(text) };
}

async function status(url: string, headers: Record<string, string> = {}): Promise<number> {
  const answer = await fetch(url, { headers });
  await answer.arrayBuffer();
  return answer.status;
}

async function sharedConfig(t: TestContext, redisUrl: string, source: Record<string, unknown>, name: string): Promise<Config> {
  const dir = await tempDir(t);
  await writeFile(dir.path('sheetrest.json'), JSON.stringify({
    stateDir: dir.path('state'),
    log: { level: 'silent' },
    store: { type: 'redis', url: redisUrl },
    // The emulator's address is no endpoint of Google's: connections made through /_admin may use it only when allowed.
    admin: { token: { env: 'SHEETREST_ADMIN_TOKEN' }, ...(typeof source.rootUrl === 'string' ? { allowedEndpoints: [source.rootUrl] } : {}) },
    connections: [{ id: `config-${name}`, source }],
  }));
  return loadConfig(dir.path('sheetrest.json'), { env: { SHEETREST_ADMIN_TOKEN: TOKEN } });
}

test(`the admin API's state is shared through Redis: made on A, used on B; revoked on A, refused on B (${RUNTIME})`, async (t) => {
  const redis = await startRedis(t);
  if (typeof redis === 'string') return t.skip(redis);
  const emulator = await startEmulator();
  defer(t, () => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name'], ['Ann']] }], access: { [WRITER]: 'writer' } });
  const source = { type: 'google', spreadsheetId, rootUrl: emulator.rootUrl, accessToken: WRITER, retries: 0 };
  const [a, b] = [await startServer(t, await sharedConfig(t, redis.url, source, 'a')), await startServer(t, await sharedConfig(t, redis.url, source, 'b'))];

  await t.test('a connection made on A is served by B at once', async () => {
    assert.equal(await status(`${b.url}/sheets/crm`), 404);
    const created = await admin(a.url, 'POST', '/connections', { id: 'crm', source, open: true });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal(await status(`${b.url}/sheets/crm`), 200);
    assert.deepEqual((await admin(b.url, 'GET', '/connections/crm')).body?.id, 'crm');
  });

  let keyId = '';
  let key = '';
  await t.test('a key made on A closes the open connection on B too; without it B answers 401', async () => {
    const made = await admin(a.url, 'POST', '/connections/crm/keys', { scope: 'read' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    key = String(made.body?.key);
    keyId = String(made.body?.id);
    assert.equal(await status(`${b.url}/sheets/crm`), 401);
    assert.equal(await status(`${b.url}/sheets/crm`, { 'X-Api-Key': key }), 200);
  });

  await t.test('a key revoked on A is refused by B as soon as the revocation is answered', async () => {
    assert.equal((await admin(a.url, 'DELETE', `/connections/crm/keys/${keyId}`)).status, 204);
    assert.equal(await status(`${b.url}/sheets/crm`, { 'X-Api-Key': key }), 401);
    assert.equal(await status(`${a.url}/sheets/crm`, { 'X-Api-Key': key }), 401);
  });

  await t.test('revoking the last key leaves the connection closed on every instance', async () => {
    assert.equal(await status(`${b.url}/sheets/crm`), 401);
    assert.equal(await status(`${a.url}/sheets/crm`), 401);
    assert.equal((await admin(b.url, 'GET', '/connections/crm')).body?.open, false);
  });

  await t.test('changes go both ways: a plan set on B applies on A, a connection deleted on B is gone on A', async () => {
    const changed = await admin(b.url, 'PATCH', '/connections/crm', { plan: { name: 'tiny', monthlyRequests: 5 } });
    assert.equal(changed.status, 200, JSON.stringify(changed.body));
    assert.equal((await admin(a.url, 'GET', '/connections/crm')).body?.plan?.name, 'tiny');
    assert.equal((await admin(b.url, 'DELETE', '/connections/crm')).status, 204);
    assert.equal(await status(`${a.url}/sheets/crm`), 404);
  });

  await t.test("the config file's connections stay read-only", async () => {
    assert.equal((await admin(a.url, 'POST', '/connections/config-a/keys', {})).status, 403);
  });

  await t.test('Redis restarted empty: the state is saved again from what the instances serve, and changes go on reaching every instance', async () => {
    assert.equal((await admin(a.url, 'POST', '/connections', { id: 'kept', source, open: true })).status, 201);
    await redis.stop();
    const refused = await admin(a.url, 'POST', '/connections', { id: 'lost', source, open: true });
    assert.equal(refused.status, 503, 'no change while Redis is away');
    assert.equal(refused.body.error, 'upstream_unavailable');
    assert.match(refused.body.message, /^The change was not made: the shared store \(Redis\) is unreachable/);
    assert.equal(await status(`${b.url}/sheets/kept`), 200, 'what was applied is still served');
    await redis.restart();
    const client = createClient({ url: redis.url });
    await client.connect();
    defer(t, () => client.close());
    let saved: string | null = null;
    for (let attempt = 0; attempt < 100 && saved === null; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      saved = await client.get('sheetrest:admin:state');
    }
    assert.match(String(saved), /"id":"kept"/, 'an instance saved what it serves again');
    let made = 0;
    for (let attempt = 0; attempt < 100 && made !== 201; attempt++) {
      made = (await admin(b.url, 'POST', '/connections', { id: 'after', source, open: true })).status;
      if (made !== 201) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(made, 201);
    assert.equal(await status(`${a.url}/sheets/after`), 200, 'A applies a change whose revision counts from a new start');
    assert.equal(await status(`${a.url}/sheets/kept`), 200);
    assert.equal(await status(`${b.url}/sheets/kept`), 200);
  });

  await t.test('a change an instance missed the message of is caught up by its revision check', async () => {
    // Written straight into Redis without publishing, as if the message had been lost.
    const client = createClient({ url: redis.url });
    await client.connect();
    defer(t, () => client.close());
    const state = JSON.parse(String(await client.get('sheetrest:admin:state'))) as { connections: unknown[] };
    const now = new Date().toISOString();
    const revision = await client.incr('sheetrest:admin:revision');
    await client.set('sheetrest:admin:state', JSON.stringify({ version: 1, revision, connections: [...state.connections, { id: 'quiet', source, created: now, updated: now, keys: [], open: true }] }));
    let seen = 0;
    for (let attempt = 0; attempt < 100 && seen !== 200; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      seen = await status(`${b.url}/sheets/quiet`);
    }
    assert.equal(seen, 200);
  });
});

test(`a change is answered only once every instance told of it has applied it (${RUNTIME})`, async (t) => {
  const redis = await startRedis(t);
  if (typeof redis === 'string') return t.skip(redis);
  const silent = createLogger('silent');
  const lease = { leaseMs: 5000, leaseWaitMs: 5000 };
  const [a, b] = await Promise.all([0, 1].map(async () => {
    const connection = await openRedis({ url: redis.url, log: silent });
    const state = sharedAdminState(connection, lease, silent);
    defer(t, async () => {
      await state.close();
      await connection.close();
    });
    return state;
  }));
  const order: string[] = [];
  let applied = { a: 0, b: 0 };
  let release = () => {};
  const slow = new Promise<void>((resolve) => (release = resolve));
  await a.follow(() => ({ revision: applied.a, connections: [] }), async (snapshot) => void (applied = { ...applied, a: snapshot.revision }));
  await b.follow(() => ({ revision: applied.b, connections: [] }), async (snapshot) => {
    await slow;
    applied = { ...applied, b: snapshot.revision };
    order.push('b applied');
  });
  // A revision of 15 digits, as a random start often is: Lua would print it rounded to 14.
  const raw = await openRedis({ url: redis.url, log: silent });
  await raw.client.set('sheetrest:admin:revision', '122914130719433');
  await raw.close();
  const saved = await a.underLock(() => a.save([]));
  assert.equal(saved.revision, 122914130719434);
  applied = { ...applied, a: saved.revision };
  assert.equal(saved.told, 2, 'both instances were told');
  const answered = a.applied(saved.revision, saved.told).then(() => order.push('answered'));
  // Time for an answer that did not wait to come first.
  await new Promise((resolve) => setTimeout(resolve, 100));
  order.push('b goes on');
  release();
  await answered;
  assert.deepEqual(order, ['b goes on', 'b applied', 'answered']);
  assert.equal((await b.load()).revision, saved.revision, 'the state carries its revision exactly');
});

test(`turning Redis on: the first instance's admin.json becomes the shared state, later ones' are left unused (${RUNTIME})`, async (t) => {
  const redis = await startRedis(t);
  if (typeof redis === 'string') return t.skip(redis);
  const emulator = await startEmulator();
  defer(t, () => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name'], ['Ann']] }], access: { [WRITER]: 'writer' } });
  const source = { type: 'google' as const, spreadsheetId, rootUrl: emulator.rootUrl, accessToken: WRITER, retries: 0 };
  const now = new Date().toISOString();
  const stored = (id: string) => ({ id, source, created: now, updated: now, keys: [], open: true });
  const [first, later] = [await sharedConfig(t, redis.url, source, 'a'), await sharedConfig(t, redis.url, source, 'b')];
  for (const [config, id] of [[first, 'made-before'], [later, 'elsewhere']] as const) {
    await mkdir(config.stateDir, { recursive: true });
    // deno-lint-ignore no-explicit-any
    await writeAdminFile(config.stateDir, [stored(id) as any]);
  }
  const a = await startServer(t, first);
  const b = await startServer(t, later);
  assert.equal(await status(`${b.url}/sheets/made-before`), 200, "A's admin.json seeded Redis");
  assert.equal(await status(`${b.url}/sheets/elsewhere`), 404, "B's admin.json is not merged in");
  assert.equal(await status(`${a.url}/sheets/elsewhere`), 404);
});
