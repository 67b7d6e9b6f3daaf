// Shared state through Redis, in this process: the `store` config (URL from the file or
// $REDIS_URL, never shown with its password), the shared quota's one-step check and count, the
// write lease (503 with Retry-After and nothing written when another instance holds it), and
// Redis going away (reads from cache, writes and limited requests 503, back when Redis is).
// Each test starts its own redis-server; without one installed they are skipped, saying why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { createClient } from 'redis';
import { ConfigError, loadConfig, type Config } from '../../server/config/config.ts';
import { redactedUrl } from '../../server/redis/client.ts';
import { startEmulator, type Emulator } from '../../tools/google-emulator/mod.ts';
import { createLogger } from '../../server/log.ts';
import { openRedisQuota } from '../../server/quota/redis-store.ts';
import { openRedis } from '../../server/redis/client.ts';
import { defer, startServer, tempDir, type TestContext } from '../helpers/http.ts';
import { redisOrSkip } from '../helpers/redis.ts';

const WRITER = 'writer-token';
const silent = createLogger('silent');

async function configFile(t: TestContext, config: unknown, env: Record<string, string> = {}): Promise<Config> {
  const dir = await tempDir(t);
  await writeFile(dir.path('sheetrest.json'), JSON.stringify(config));
  return loadConfig(dir.path('sheetrest.json'), { env });
}

async function problemsOf(t: TestContext, config: unknown, env: Record<string, string> = {}): Promise<string> {
  try {
    await configFile(t, config, env);
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
  return '(accepted)';
}

const FILE_CONNECTION = [{ id: 'demo', source: { type: 'file', path: 'book.csv' } }];

test('the store section: Redis only when asked for, the URL from the file or $REDIS_URL, its password never shown', async (t) => {
  await t.test('left out: no store, even with $REDIS_URL set', async () => {
    const config = await configFile(t, { connections: FILE_CONNECTION }, { REDIS_URL: 'redis://10.0.0.1:6379/0' });
    assert.equal(config.store, undefined);
  });
  await t.test('a URL in the file, with the lease defaults', async () => {
    const config = await configFile(t, { store: { type: 'redis', url: 'redis://127.0.0.1:6379/0' }, connections: FILE_CONNECTION });
    assert.equal(config.store?.url.reveal(), 'redis://127.0.0.1:6379/0');
    assert.deepEqual([config.store?.leaseMs, config.store?.leaseWaitMs, config.store?.maxStaleMs], [5000, 10000, 5000]);
  });
  await t.test('no URL: $REDIS_URL', async () => {
    const config = await configFile(t, { store: { type: 'redis' }, connections: FILE_CONNECTION }, { REDIS_URL: 'redis://:pw@10.0.0.1:6380/2' });
    assert.equal(config.store?.url.reveal(), 'redis://:pw@10.0.0.1:6380/2');
  });
  const refused: [string, unknown, Record<string, string>, RegExp][] = [
    ['no URL anywhere', { type: 'redis' }, {}, /store\.url: is required \(or set \$REDIS_URL\)/],
    ['$REDIS_URL not a redis URL', { type: 'redis' }, { REDIS_URL: 'http://x' }, /\$REDIS_URL: expected a URL such as/],
    ['another type', { type: 'memcached', url: 'redis://h' }, {}, /store\.type: expected "redis"/],
    ['a URL with a password that is not a redis URL', { type: 'redis', url: 'http://u:hunter2@h/' }, {}, /store\.url: expected a URL such as "redis:\/\/127\.0\.0\.1:6379\/0", got a string of 19 characters/],
    ['a lease too short', { type: 'redis', url: 'redis://h', leaseMs: 5 }, {}, /store\.leaseMs: expected a whole number from 100/],
    ['a staleness bound shorter than the revision check', { type: 'redis', url: 'redis://h', maxStaleMs: 500 }, {}, /store\.maxStaleMs: expected a whole number from 2000/],
  ];
  for (const [name, store, env, expected] of refused) {
    await t.test(name, async () => {
      const message = await problemsOf(t, { store, connections: FILE_CONNECTION }, env);
      assert.match(message, expected);
      assert.doesNotMatch(message, /hunter2/);
    });
  }
  await t.test('redactedUrl hides the password only', () => {
    assert.equal(redactedUrl('redis://user:hunter2@h:6379/0'), 'redis://user:***@h:6379/0');
    assert.equal(redactedUrl('redis://h:6379/0'), 'redis://h:6379/0');
  });
});


test('the shared quota serves exactly the limit across stores, with the same headers and 402 as one store', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const at = new Date(Date.UTC(2030, 10, 23, 12));
  const stores = await Promise.all([0, 1, 2].map(async () => {
    const connection = await openRedis({ url: redis.url, log: silent });
    defer(t, () => connection.close());
    return openRedisQuota({ redis: connection, log: silent, now: () => at });
  }));
  const plan = { name: 'p150', monthlyRequests: 150, operations: ['read', 'create', 'update', 'delete'] as const };
  const decisions = await Promise.all(Array.from({ length: 300 }, (_, i) => stores[i % 3].take('crm', { ...plan, operations: [...plan.operations] }, 'read')));
  assert.equal(decisions.filter((decision) => decision.allowed).length, 150);
  const remaining = decisions.filter((decision) => decision.allowed).map((decision) => Number(decision.headers['X-RateLimit-Remaining'])).sort((a, b) => a - b);
  assert.deepEqual(remaining, Array.from({ length: 150 }, (_, i) => i), 'each allowed request sees its own count');
  const refused = decisions.find((decision) => !decision.allowed);
  assert.equal(refused?.error?.code, 'throttle');
  assert.match(refused?.error?.message ?? '', /The monthly allowance of 150 requests on the plan "p150" is used up; it renews at 2030-12-01T00:00:00Z\./);
  assert.deepEqual(refused?.headers, { 'X-RateLimit-Limit': '150', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Plan': 'p150', 'X-RateLimit-Reset': String(Date.UTC(2030, 11, 1) / 1000) });
  assert.equal(stores[1].used('crm'), 150);
  // The month's key ends with the month.
  const client = createClient({ url: redis.url });
  await client.connect();
  defer(t, () => client.close());
  assert.equal(await client.expireTime('sheetrest:quota:2030-11:crm'), Date.UTC(2030, 11, 1) / 1000);
  // A plan leaving out the operation refuses without counting.
  const write = await stores[0].take('other', { name: 'ro', monthlyRequests: 5, operations: ['read'] }, 'create');
  assert.equal(write.allowed, false);
  assert.equal(await client.get('sheetrest:quota:2030-11:other'), null);
});

async function googleConfig(t: TestContext, emulator: Emulator, redisUrl: string, store: Record<string, unknown> = {}): Promise<{ config: Config; spreadsheetId: string }> {
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name', 'Age'], ['Ann', 30]] }], access: { [WRITER]: 'writer' } });
  const source = { type: 'google', spreadsheetId, rootUrl: emulator.rootUrl, accessToken: WRITER, retries: 0, freshnessMs: 60_000 };
  const config = await configFile(t, {
    store: { type: 'redis', url: redisUrl, ...store },
    connections: [
      { id: 'open', source },
      { id: 'limited', source, plan: { name: 'p', monthlyRequests: 1000 } },
    ],
  });
  return { config, spreadsheetId };
}

async function emulatorFor(t: TestContext): Promise<Emulator> {
  const emulator = await startEmulator();
  defer(t, () => emulator.close());
  return emulator;
}

test('a write that cannot get the lease in time answers 503 with Retry-After and writes nothing', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const emulator = await emulatorFor(t);
  const { config, spreadsheetId } = await googleConfig(t, emulator, redis.url, { leaseMs: 2000, leaseWaitMs: 200 });
  const served = await startServer(t, config);
  // Another instance holds the lease (for 5 s).
  const client = createClient({ url: redis.url });
  await client.connect();
  defer(t, () => client.close());
  await client.set(`sheetrest:sheet:${emulator.rootUrl} ${spreadsheetId}:lease`, '999', { PX: 5000 });
  emulator.resetRequests();
  const answer = await fetch(`${served.url}/sheets/open`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Bo","Age":1}' });
  assert.equal(answer.status, 503);
  const body = (await answer.json()) as { error: string; message: string };
  assert.equal(body.error, 'upstream_unavailable');
  assert.match(body.message, /Another instance is writing to this spreadsheet/);
  assert.ok(Number(answer.headers.get('retry-after')) >= 1);
  assert.deepEqual(emulator.requests.filter((request) => request.method !== 'GET'), [], 'nothing was sent to Google');
  // Released, the next write goes through.
  await client.del(`sheetrest:sheet:${emulator.rootUrl} ${spreadsheetId}:lease`);
  const again = await fetch(`${served.url}/sheets/open`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Bo","Age":1}' });
  assert.equal(again.status, 201);
});

test('Redis going away: reads from cache, writes and limited requests 503, all back once Redis is', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const emulator = await emulatorFor(t);
  const { config } = await googleConfig(t, emulator, redis.url);
  const served = await startServer(t, config);
  assert.equal((await fetch(`${served.url}/sheets/open`)).status, 200);
  await redis.stop();
  const read = await fetch(`${served.url}/sheets/open`);
  assert.equal(read.status, 200, 'a read of a connection without a limit is served from the snapshot');
  assert.deepEqual(await read.json(), [{ Name: 'Ann', Age: '30' }]);
  const write = await fetch(`${served.url}/sheets/open`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Cy","Age":2}' });
  assert.equal(write.status, 503);
  assert.match(((await write.json()) as { message: string }).message, /Writes are paused: the shared store \(Redis\) is unreachable/);
  assert.equal(write.headers.get('retry-after'), '1');
  const limited = await fetch(`${served.url}/sheets/limited`);
  assert.equal(limited.status, 503, 'quota fails closed for a limited connection');
  assert.match(((await limited.json()) as { message: string }).message, /counted against a monthly plan: the shared store \(Redis\) is unreachable/);
  await redis.restart();
  // The client reconnects on its own within a second or so.
  let back = 0;
  for (let attempt = 0; attempt < 100 && back !== 201; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    back = (await fetch(`${served.url}/sheets/open`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Cy","Age":2}' })).status;
  }
  assert.equal(back, 201);
  assert.equal((await fetch(`${served.url}/sheets/limited`)).status, 200);
});

test('an Idempotency-Key is shared: a retry on another instance gets the stored answer, a concurrent one writes once', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const emulator = await emulatorFor(t);
  const { config, spreadsheetId } = await googleConfig(t, emulator, redis.url);
  const [a, b] = [await startServer(t, config), await startServer(t, { ...config, stateDir: `${config.stateDir}-b` })];
  const post = (url: string, key: string, body: unknown) =>
    fetch(`${url}/sheets/open`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key }, body: JSON.stringify(body) });
  const first = await post(a.url, 'order-1', { Name: 'Bo', Age: 1 });
  assert.equal(first.status, 201);
  const firstBody = await first.text();
  const retry = await post(b.url, 'order-1', { Name: 'Bo', Age: 1 });
  assert.equal(retry.status, 201);
  assert.equal(retry.headers.get('idempotent-replayed'), 'true');
  assert.equal(await retry.text(), firstBody);
  const reused = await post(b.url, 'order-1', { Name: 'Other', Age: 2 });
  assert.equal(reused.status, 422);
  assert.equal(((await reused.json()) as { error: string }).error, 'idempotency_key_reused');
  // The same key sent to both at once: one write, two equal answers.
  const both = await Promise.all([post(a.url, 'order-2', { Name: 'Cy', Age: 3 }), post(b.url, 'order-2', { Name: 'Cy', Age: 3 })]);
  assert.deepEqual(both.map((answer) => answer.status), [201, 201]);
  assert.equal(both.filter((answer) => answer.headers.get('idempotent-replayed') === 'true').length, 1);
  const names = emulator.sheet(spreadsheetId, 'People').rows.map((row) => row[0]?.formattedValue);
  assert.deepEqual(names, ['Name', 'Ann', 'Bo', 'Cy'], 'each keyed write landed once');
});

test('an Idempotency-Key in Redis belongs to the API key that sent it: another key holder gets his own write, on any instance', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const emulator = await emulatorFor(t);
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name', 'Age'], ['Ann', 30]] }], access: { [WRITER]: 'writer' } });
  const source = { type: 'google', spreadsheetId, rootUrl: emulator.rootUrl, accessToken: WRITER, retries: 0, freshnessMs: 60_000 };
  const config = await configFile(t, { store: { type: 'redis', url: redis.url }, connections: [{ id: 'keyed', source, keys: [{ key: 'alice-key' }, { key: 'bob-key' }] }] });
  const [a, b] = [await startServer(t, config), await startServer(t, { ...config, stateDir: `${config.stateDir}-b` })];
  const post = (url: string, apiKey: string) =>
    fetch(`${url}/sheets/keyed`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': 'order-1', 'X-Api-Key': apiKey }, body: '{"Name":"Bo","Age":1}' });
  const alice = await post(a.url, 'alice-key');
  assert.equal(alice.status, 201);
  await alice.body?.cancel();
  const bob = await post(b.url, 'bob-key');
  assert.deepEqual([bob.status, bob.headers.get('idempotent-replayed')], [201, null]);
  await bob.body?.cancel();
  const aliceAgain = await post(b.url, 'alice-key');
  assert.deepEqual([aliceAgain.status, aliceAgain.headers.get('idempotent-replayed')], [201, 'true']);
  await aliceAgain.body?.cancel();
  const names = emulator.sheet(spreadsheetId, 'People').rows.map((row) => row[0]?.formattedValue);
  assert.deepEqual(names, ['Name', 'Ann', 'Bo', 'Bo'], 'one write per API key');
});

test('Redis restarting empty makes every kept tab stale: no instance serves an old tab whose version number comes round again', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const emulator = await emulatorFor(t);
  const { config } = await googleConfig(t, emulator, redis.url);
  const [a, b] = [await startServer(t, config), await startServer(t, { ...config, stateDir: `${config.stateDir}-b` })];
  const post = (name: string) => fetch(`${a.url}/sheets/open`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ Name: name, Age: 1 }) });
  const namesOnB = async () => ((await (await fetch(`${b.url}/sheets/open`)).json()) as { Name: string }[]).map((row) => row.Name);
  assert.deepEqual(await namesOnB(), ['Ann']);
  assert.equal((await post('Bo')).status, 201);
  // B keeps the tab at the version A's write made (the first after a start from nothing).
  assert.deepEqual(await namesOnB(), ['Ann', 'Bo']);
  await redis.stop();
  await redis.restart();
  // B back on Redis (a limited request needs it), without reading the tab it keeps.
  let limited = 0;
  for (let attempt = 0; attempt < 100 && limited !== 200; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    limited = (await fetch(`${b.url}/sheets/limited?_limit=1`)).status;
  }
  assert.equal(limited, 200);
  // A's first write once it is back: before the fix it counted the version to the same number again.
  let written = 0;
  for (let attempt = 0; attempt < 100 && written !== 201; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    written = (await post('Cy')).status;
  }
  assert.equal(written, 201);
  assert.deepEqual(await namesOnB(), ['Ann', 'Bo', 'Cy'], 'B reads the tab again instead of serving the one it kept');
});
