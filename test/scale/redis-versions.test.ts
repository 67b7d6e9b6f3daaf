// Cheap reads with Redis (issue 21, part 10; server/sources/google/shared-versions.ts, server/quota/redis-store.ts):
// each instance keeps the spreadsheets' versions in memory and a connection without a monthly
// limit is counted in memory, so a cached read asks Redis for nothing; read-your-writes across
// instances still holds (a write answers once every follower applied it, or its registration ran
// out), and an instance whose subscription dropped asks Redis per read until it is back and has
// caught up. Redis's own MONITOR on the test's redis-server counts the commands; a marker
// command sent after the requests tells when MONITOR has shown everything before it. The trust's
// clock stands still (`now: () => 0`), so no renewal arriving late on a loaded machine ends it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import { createApp } from '../../server/http/app.ts';
import { Secret } from '../../server/config/config.ts';
import { startEmulator, type Emulator } from '../../tools/google-emulator/mod.ts';
import { createLogger } from '../../server/log.ts';
import { openSharedStore, type SharedStore } from '../../server/shared-store.ts';
import { openRedisQuota } from '../../server/quota/redis-store.ts';
import { openRedis } from '../../server/redis/client.ts';
import { spreadsheetCoordination } from '../../server/sources/google/shared-spreadsheet.ts';
import { openSharedVersions, type SharedVersions } from '../../server/sources/google/shared-versions.ts';
import { openGoogleSource } from '../../server/sources/google/mod.ts';
import { defer, type TestContext } from '../helpers/http.ts';
import { redisOrSkip } from '../helpers/redis.ts';

const WRITER = 'writer-token';
const silent = createLogger('silent');
const STILL = () => 0;
const LEASE = { leaseMs: 5000, leaseWaitMs: 5000, maxStaleMs: 5000 };


async function client(t: TestContext, url: string) {
  const connection = createClient({ url });
  await connection.connect();
  defer(t, () => connection.close().catch(() => connection.destroy()));
  return connection;
}

/** Redis's MONITOR: `settled()` gives the commands clients sent since the last call (and clears them), not those scripts ran. */
async function monitor(t: TestContext, url: string): Promise<{ settled(): Promise<string[]> }> {
  const watching = await client(t, url);
  const other = await client(t, url);
  let lines: string[] = [];
  let wake = () => undefined as void;
  await watching.monitor((line: string) => {
    lines.push(line);
    wake();
  });
  let markers = 0;
  return {
    async settled() {
      const marker = `sheetrest:test:marker:${++markers}`;
      await other.get(marker);
      while (!lines.some((line) => line.includes(marker))) await new Promise<void>((resolve) => (wake = resolve));
      const index = lines.findIndex((line) => line.includes(marker));
      const seen = lines.slice(0, index).filter((line) => !line.includes(' lua] '));
      lines = lines.slice(index + 1);
      return seen;
    },
  };
}

/** One instance's view of one spreadsheet, as server/shared-store.ts builds it. */
async function instance(t: TestContext, url: string, key = 'root sheet-1'): Promise<{ versions: SharedVersions; sheet: ReturnType<typeof spreadsheetCoordination> }> {
  const redis = await openRedis({ url, log: silent });
  const versions = await openSharedVersions({ redis, log: silent, now: STILL });
  defer(t, async () => {
    await versions.close();
    await redis.close();
  });
  return { versions, sheet: spreadsheetCoordination(redis, key, LEASE, () => undefined, versions) };
}

const VERSION_KEY = 'sheetrest:sheet:root sheet-1:version';
const versionGets = (lines: string[]) => lines.filter((line) => line.includes(`"GET" "${VERSION_KEY}"`)).length;

/** Until `check()` holds (at most 10 s: reconnecting takes a second or so). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 400 && !check(); attempt++) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.ok(check(), what);
}

test('a write on A is applied on B before it is answered: B then reads the new version from memory, asking Redis nothing', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const watch = await monitor(t, redis.url);
  const a = await instance(t, redis.url);
  const b = await instance(t, redis.url);
  const first = b.sheet.version();
  assert.ok(first instanceof Promise, 'not kept yet: asked of Redis');
  const start = await first;
  assert.equal(typeof start, 'number');
  await watch.settled();
  for (let round = 1; round <= 5; round++) {
    const written = await a.sheet.changed();
    assert.equal(written, Number(start) + round);
    assert.equal(b.sheet.version(), written, 'B holds the write\'s version as soon as A answers');
    assert.equal(a.sheet.version(), written, 'and so does A');
  }
  assert.equal(versionGets(await watch.settled()), 0, 'no GET of the version');
});

test('a follower that never says it applied a write holds the write back until its registration ran out', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const a = await instance(t, redis.url);
  const other = await client(t, redis.url);
  // A stalled instance: registered as a follower for another 300 ms, never answering.
  const [seconds, micros] = (await other.sendCommand(['TIME'])) as [string, string];
  const until = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) + 300;
  await other.zAdd('sheetrest:sheet:followers', { score: until, value: 'stalled' });
  await a.sheet.changed();
  const [afterSeconds, afterMicros] = (await other.sendCommand(['TIME'])) as [string, string];
  assert.ok(Number(afterSeconds) * 1000 + Math.floor(Number(afterMicros) / 1000) >= until, 'answered only once the stalled follower stopped trusting what it keeps');
});

test('a dropped subscription: reads ask Redis per read and see writes made meanwhile, until it is back and has caught up', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const watch = await monitor(t, redis.url);
  const a = await instance(t, redis.url);
  const b = await instance(t, redis.url);
  const admin = await client(t, redis.url);
  await b.sheet.version();
  assert.ok(b.versions.trusted());
  const listed = (await admin.sendCommand(['CLIENT', 'LIST'])) as string;
  const line = listed.split('\n').find((entry) => entry.includes(`name=sheetrest-versions-${b.versions.instance}`));
  assert.ok(line !== undefined, 'B\'s subscriber is connected under its name');
  // Redis takes no new connection meanwhile, so B's subscriber stays away until let back.
  await admin.sendCommand(['CONFIG', 'SET', 'maxclients', '1']);
  defer(t, () => admin.sendCommand(['CONFIG', 'SET', 'maxclients', '10000']).catch(() => undefined));
  await admin.sendCommand(['CLIENT', 'KILL', 'ID', /id=(\d+)/.exec(line)![1]]);
  await until(() => !b.versions.trusted(), 'B noticed its subscription dropped');
  await watch.settled();
  // Written meanwhile: B hears nothing of it, and does not need to.
  const written = await a.sheet.changed();
  const seen: unknown[] = [];
  for (let read = 0; read < 3; read++) {
    const version = b.sheet.version();
    assert.ok(version instanceof Promise, 'asked of Redis while not subscribed');
    seen.push(await version);
  }
  assert.deepEqual(seen, [written, written, written]);
  assert.equal(versionGets(await watch.settled()), 3, 'one GET per read');
  await admin.sendCommand(['CONFIG', 'SET', 'maxclients', '10000']);
  await until(() => b.versions.trusted(), 'B subscribed again and registered');
  const again = b.sheet.version();
  assert.ok(again instanceof Promise, 'what B kept before is forgotten: asked once more');
  assert.equal(await again, written);
  assert.equal(b.sheet.version(), written, 'then kept');
  const next = await a.sheet.changed();
  assert.equal(b.sheet.version(), next, 'and told of writes again before they are answered');
});

test('a connection without a monthly limit asks Redis nothing per request; its counts reach Redis in one INCRBY', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const watch = await monitor(t, redis.url);
  const connection = await openRedis({ url: redis.url, log: silent });
  defer(t, () => connection.close());
  const at = new Date(Date.UTC(2030, 10, 23, 12));
  const quota = await openRedisQuota({ redis: connection, log: silent, now: () => at, flushMs: 3_600_000 });
  await watch.settled();
  const cases = [
    { name: 'no plan', plan: undefined, requests: 20, commands: 0 },
    { name: 'a plan without a limit', plan: { name: 'free', operations: ['read' as const] }, requests: 20, commands: 0 },
    { name: 'a limited plan: one script per request', plan: { name: 'big', monthlyRequests: 1000, operations: ['read' as const] }, requests: 5, commands: 5 },
  ];
  for (const { name, plan, requests, commands } of cases) {
    const id = name.replaceAll(' ', '-');
    const decisions = [];
    for (let n = 0; n < requests; n++) decisions.push(await quota.take(id, plan, 'read'));
    assert.ok(decisions.every((decision) => decision.allowed), name);
    const seen = (await watch.settled()).filter((line) => line.includes('sheetrest:quota:'));
    assert.equal(seen.length, commands, `${name}: ${seen.join(' | ')}`);
  }
  assert.ok(!(quota.take('no-plan', undefined, 'read') instanceof Promise), 'decided at once, nothing to wait for');
  assert.equal(quota.used('no-plan'), 21, 'counted here meanwhile');
  await quota.flush();
  const seen = (await watch.settled()).filter((line) => line.includes('sheetrest:quota:'));
  assert.equal(seen.filter((line) => line.includes('"INCRBY"')).length, 2, 'one INCRBY per connection');
  const other = await client(t, redis.url);
  assert.equal(await other.get('sheetrest:quota:2030-11:no-plan'), '21');
  assert.equal(await other.get('sheetrest:quota:2030-11:a-plan-without-a-limit'), '20');
  assert.ok((await other.ttl('sheetrest:quota:2030-11:no-plan')) > 0, 'the month\'s key expires');
  assert.equal(quota.used('no-plan'), 21);
  await quota.close();
});

test('counts of a connection without a limit made while Redis is away are kept, and reach Redis once it is back', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const connection = await openRedis({ url: redis.url, log: silent });
  defer(t, () => connection.close());
  const at = new Date(Date.UTC(2030, 10, 23, 12));
  const quota = await openRedisQuota({ redis: connection, log: silent, now: () => at, flushMs: 3_600_000 });
  for (let n = 0; n < 3; n++) assert.ok((quota.take('open', undefined, 'read') as { allowed: boolean }).allowed);
  await quota.flush();
  await redis.stop();
  for (let n = 0; n < 4; n++) assert.ok((quota.take('open', undefined, 'read') as { allowed: boolean }).allowed, 'served while Redis is away');
  await quota.flush();
  assert.equal(quota.used('open'), 7, 'the 4 wait here');
  await redis.restart();
  // Restarted empty: only what comes after the restart is in it.
  await until(() => connection.ready(), 'the connection is back');
  await quota.flush();
  const other = await client(t, redis.url);
  assert.equal(await other.get('sheetrest:quota:2030-11:open'), '4', 'the counts made meanwhile, once');
  await quota.close();
});

async function googleInstance(t: TestContext, url: string, emulator: Emulator, spreadsheetId: string) {
  const store: SharedStore = await openSharedStore({ type: 'redis', url: new Secret(url), ...LEASE }, silent, { now: STILL });
  const source = await openGoogleSource({
    spreadsheetId,
    rootUrl: emulator.rootUrl,
    auth: { kind: 'accessToken', token: new Secret(WRITER) },
    freshnessMs: 60_000,
    retry: { retries: 0 },
    shared: (key) => store.spreadsheet(key, () => undefined),
  });
  const app = createApp({
    connections: [
      { id: 'open', source, keys: [], readOnly: false, engine: {} },
      { id: 'limited', source, keys: [], readOnly: false, engine: {}, plan: { name: 'big', monthlyRequests: 1_000_000, operations: ['read', 'create', 'update', 'delete'] } },
    ],
    quota: store.quota,
    bodyBytes: 1024 * 1024,
    cors: '*',
    log: silent,
  });
  defer(t, async () => {
    await source.close();
    await store.close();
  });
  return (path: string, init: RequestInit = {}) => app.fetch(new Request('http://x' + path, init));
}

test('two instances over one spreadsheet: cached reads ask Redis nothing, and a POST on A is seen by the next GET on B', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const emulator = await startEmulator();
  defer(t, () => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name', 'Age'], ['Ann', 30]] }], access: { [WRITER]: 'writer' } });
  const watch = await monitor(t, redis.url);
  const a = await googleInstance(t, redis.url, emulator, spreadsheetId);
  const b = await googleInstance(t, redis.url, emulator, spreadsheetId);
  const names = async (call: typeof a, path = '/sheets/open') => ((await (await call(path)).json()) as { Name: string }[]).map((row) => row.Name);
  assert.deepEqual(await names(a), ['Ann']);
  assert.deepEqual(await names(b), ['Ann']);
  await watch.settled();
  const perRead = async (path: string) => {
    for (let n = 0; n < 10; n++) assert.equal((await b(path)).status, 200);
    const seen = await watch.settled();
    return { quota: seen.filter((line) => line.includes('sheetrest:quota:') && line.includes('"EVALSHA"')).length, version: seen.filter((line) => line.includes(':version"')).length };
  };
  assert.deepEqual(await perRead('/sheets/open'), { quota: 0, version: 0 }, 'no plan: nothing asked of Redis');
  assert.deepEqual(await perRead('/sheets/limited'), { quota: 10, version: 0 }, 'a limited plan: the quota script only');
  for (const name of ['Bo', 'Cy']) {
    const posted = await a('/sheets/open', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ Name: name, Age: 1 }) });
    assert.equal(posted.status, 201);
    await posted.arrayBuffer();
    assert.deepEqual((await names(b)).at(-1), name, `${name} seen on B at once`);
  }
  assert.deepEqual(await names(b), ['Ann', 'Bo', 'Cy']);
});
