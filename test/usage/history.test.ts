// The usage history's pieces: what a request counts as (operation, key, 4xx/5xx), the recent
// list's masking and ring, the state folder's day files (saved, read back at start, a new day,
// days past KEEP_DAYS deleted, a damaged file left out), and Redis's sums across two instances.
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { createLogger } from '../../server/log.ts';
import { openRedis } from '../../server/redis/client.ts';
import { openFileUsage } from '../../server/usage/file-store.ts';
import { openRedisUsage } from '../../server/usage/redis-store.ts';
import { DayTally, KEEP_DAYS, lastDays, MAX_KEYS_PER_DAY, operationCode, operationOfRequest, RecentRequests, shownPath, type KeyLabel } from '../../server/usage/tally.ts';
import { defer, tempDir } from '../helpers/http.ts';
import { startRedis } from '../helpers/redis.ts';

const silent = createLogger('silent');
const CI = { operations: ['read'] as const, caller: 'key:00aa', keyId: '0123456789abcdef', keyPrefix: 'sr_AbCd1234', keyName: 'ci' };
const DAY = Date.UTC(2026, 10, 23, 12);

test('what a request counts as', () => {
  const cases: [string, string, string][] = [
    ['GET', 'http://x/sheets/crm', 'read'],
    ['HEAD', 'http://x/sheets/crm/tabs/People/3', 'read'],
    ['GET', 'http://x/sheets/crm/search?Name=Ann', 'search'],
    ['GET', 'http://x/sheets/crm/tabs/People/query?Age__gt=3', 'query'],
    ['GET', 'http://x/sheets/crm/aggregate?_agg=count()', 'aggregate'],
    ['GET', 'http://x/sheets/crm/events', 'events'],
    ['GET', 'http://x/sheets/crm/openapi.json', 'openapi'],
    // A filter on the value "search" is a read.
    ['GET', 'http://x/sheets/crm/Name/search', 'read'],
    ['POST', 'http://x/sheets/crm', 'create'],
    ['PATCH', 'http://x/sheets/crm/Name/Ann', 'update'],
    ['PUT', 'http://x/sheets/crm/Name/Ann', 'update'],
    ['DELETE', 'http://x/sheets/crm/3', 'delete'],
  ];
  for (const [method, url, expected] of cases) assert.equal(operationOfRequest(method, url), expected, `${method} ${url}`);
});

test('a day tally counts requests, 4xx and 5xx, per key and operation, and caps the keys', () => {
  const tally = new DayTally('2026-11-23');
  const key = (n: number): KeyLabel => ({ key: `k${n}`, id: `k${n}`, prefix: null, name: null });
  tally.count('crm', operationCode('read'), key(0), 200);
  tally.count('crm', operationCode('read'), key(0), 404);
  tally.count('crm', operationCode('create'), key(1), 503);
  const day = tally.view('crm');
  assert.deepEqual([day.requests, day.clientErrors, day.serverErrors], [3, 1, 1]);
  assert.deepEqual(day.operations, { read: { requests: 2, clientErrors: 1, serverErrors: 0 }, create: { requests: 1, clientErrors: 0, serverErrors: 1 } });
  assert.deepEqual(day.keys.map((each) => [each.key, each.requests]), [['k0', 2], ['k1', 1]]);
  for (let n = 2; n < MAX_KEYS_PER_DAY + 10; n++) tally.count('crm', operationCode('read'), key(n), 200);
  const capped = tally.view('crm');
  assert.equal(capped.keys.length, MAX_KEYS_PER_DAY + 1, 'the cap, and "other"');
  assert.equal(capped.keys.find((each) => each.key === 'other')?.requests, 10);
  assert.deepEqual(tally.view('nope'), { day: '2026-11-23', requests: 0, clientErrors: 0, serverErrors: 0, keys: [], operations: {} });
});

test('recent requests: newest first, the last ones only, query values masked but for settings', () => {
  const recent = new RecentRequests(3);
  const open: KeyLabel = { key: 'open', id: null, prefix: null, name: null };
  for (let n = 0; n < 5; n++) recent.add('crm', DAY + n, 'GET', `http://x/sheets/crm/${n}`, n === 4 ? 500 : 200, n, open);
  const listed = recent.list('crm');
  assert.deepEqual(listed.map((each) => each.path), ['/sheets/crm/4', '/sheets/crm/3', '/sheets/crm/2']);
  assert.deepEqual(listed.map((each) => each.error), [true, false, false]);
  assert.equal(listed[0].key, null);
  assert.equal(listed[0].at, new Date(DAY + 4).toISOString());
  assert.deepEqual(recent.list('other'), []);
  assert.equal(shownPath('http://x/sheets/crm/query?Email__eq=ann%40x.com&_limit=5&_sort=-Age&_or=(a;b)#frag'), '/sheets/crm/query?Email__eq=…&_limit=5&_sort=-Age&_or=…');
  assert.equal(shownPath('http://x/sheets/crm/search?'), '/sheets/crm/search');
});

test('lastDays: the days ending with today, oldest first, across a month', () => {
  assert.deepEqual(lastDays('2026-12-02', 3), ['2026-11-30', '2026-12-01', '2026-12-02']);
});

test('state folder: counts saved per day, read back at start, a new day, old days deleted', async (t) => {
  const dir = await tempDir(t);
  let now = DAY;
  const open = () => openFileUsage({ stateDir: dir.path('state'), log: silent, now: () => now, flushDelayMs: 10 });
  const first = await open();
  first.record('crm', 'GET', 'http://x/sheets/crm/search?q=1', 200, 1.5, CI);
  first.record('crm', 'GET', 'http://x/sheets/crm', 401, 0.2, null);
  await first.flush();
  const saved = JSON.parse(await readFile(dir.path('state/usage/2026-11-23.json'), 'utf8'));
  assert.equal(saved.connections.crm.requests, 2);
  assert.deepEqual(saved.connections.crm.keys.map((each: KeyLabel) => [each.key, each.prefix, each.name]), [['0123456789abcdef', 'sr_AbCd1234', 'ci'], ['none', null, null]]);
  assert.equal(JSON.stringify(saved).includes('sr_AbCd1234') && !JSON.stringify(saved).includes('secret'), true);
  // The next day: yesterday's file stays, today's starts at zero.
  now += 24 * 3600_000;
  first.record('crm', 'DELETE', 'http://x/sheets/crm/2', 204, 3, CI);
  await first.close();
  const second = await open();
  const history = await second.history('crm', 3);
  assert.deepEqual(history.map((day) => [day.day, day.requests, day.clientErrors]), [['2026-11-22', 0, 0], ['2026-11-23', 2, 1], ['2026-11-24', 1, 0]]);
  assert.deepEqual(history[2].operations, { delete: { requests: 1, clientErrors: 0, serverErrors: 0 } });
  assert.deepEqual(second.recent('crm'), [], 'recent requests are kept in memory only');
  // KEEP_DAYS later the first day's file is gone, from memory and from disk.
  now += (KEEP_DAYS - 1) * 24 * 3600_000;
  second.record('crm', 'GET', 'http://x/sheets/crm', 200, 1, CI);
  await second.close();
  assert.deepEqual((await readdir(dir.path('state/usage'))).sort(), ['2026-11-24.json', lastDays(new Date(now).toISOString().slice(0, 10), 1)[0] + '.json']);
  const third = await open();
  assert.equal((await third.history('crm', KEEP_DAYS))[0].day, '2026-11-24');
  assert.equal((await third.history('crm', KEEP_DAYS))[0].requests, 1);
  await third.close();
});

test('state folder: a damaged day file is left out and logged, not a stop', async (t) => {
  const dir = await tempDir(t);
  const first = await openFileUsage({ stateDir: dir.path('state'), log: silent, now: () => DAY });
  await first.close();
  await writeFile(dir.path('state/usage/2026-11-22.json'), '{"version":1,');
  const lines: string[] = [];
  const log = createLogger('warn', (line: string) => lines.push(line));
  const usage = await openFileUsage({ stateDir: dir.path('state'), log, now: () => DAY });
  assert.equal((await usage.history('crm', 2))[0].requests, 0);
  await usage.close();
  assert.match(lines.join('\n'), /usage history file/);
});

test('redis: two instances add up, recent requests stay per instance', async (t) => {
  const server = await startRedis(t);
  if (typeof server === 'string') return t.skip(server);
  const redis = await openRedis({ url: server.url, log: silent });
  defer(t, () => redis.close());
  const prefix = `test:usage:${process.pid}:`;
  const a = openRedisUsage({ redis, log: silent, now: () => DAY, prefix, flushMs: 60_000 });
  const b = openRedisUsage({ redis, log: silent, now: () => DAY, prefix, flushMs: 60_000 });
  a.record('crm', 'GET', 'http://x/sheets/crm', 200, 1, CI);
  a.record('crm', 'GET', 'http://x/sheets/crm/query?x=1', 500, 1, CI);
  b.record('crm', 'POST', 'http://x/sheets/crm', 401, 1, null);
  // Before a flush an instance sees its own counts.
  assert.equal((await a.history('crm', 1))[0].requests, 2);
  await Promise.all([a.flush(), b.flush()]);
  const [day] = await b.history('crm', 1);
  assert.deepEqual([day.day, day.requests, day.clientErrors, day.serverErrors], ['2026-11-23', 3, 1, 1]);
  assert.deepEqual(day.operations, { read: { requests: 1, clientErrors: 0, serverErrors: 0 }, query: { requests: 1, clientErrors: 0, serverErrors: 1 }, create: { requests: 1, clientErrors: 1, serverErrors: 0 } });
  assert.deepEqual(day.keys.map((each) => [each.key, each.prefix, each.name, each.requests]), [['0123456789abcdef', 'sr_AbCd1234', 'ci', 2], ['none', null, null, 1]]);
  assert.equal(a.recent('crm').length, 2);
  assert.equal(b.recent('crm').length, 1);
  const ttl = await redis.client.ttl(`${prefix}2026-11-23:crm`);
  assert.ok(ttl > 0, 'the hash expires');
  await Promise.all([a.close(), b.close()]);
});
