// The shared quota's keys per period (server/quota/redis-store.ts): a month plan keeps
// `sheetrest:quota:2030-11:crm` (a running deployment's counts carry over), a day plan counts
// under `sheetrest:quota:2030-11-23:crm`, an hour plan under `sheetrest:quota:2030-11-23T14:crm`,
// each expiring when its span ends; the headers and the 402 follow the period.
// The clocks are years ahead: Redis expires keys by its own clock, so a span already past would be gone at once.
// Each test starts its own redis-server; without one installed they are skipped, saying why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from 'redis';
import type { BillingPlan } from '../../server/config/config.ts';
import { createLogger } from '../../server/log.ts';
import { openRedisQuota } from '../../server/quota/redis-store.ts';
import { openRedis } from '../../server/redis/client.ts';
import { defer, type TestContext } from '../helpers/http.ts';
import { redisOrSkip } from '../helpers/redis.ts';

const silent = createLogger('silent');
const ALL = ['read', 'create', 'update', 'delete'] as const;

async function storesAt(t: TestContext, url: string, clock: { at: Date }, count: number) {
  return Promise.all(Array.from({ length: count }, async () => {
    const connection = await openRedis({ url, log: silent });
    defer(t, () => connection.close());
    const quota = await openRedisQuota({ redis: connection, log: silent, now: () => clock.at, flushMs: 3_600_000 });
    defer(t, () => quota.close());
    return quota;
  }));
}

async function clientOf(t: TestContext, url: string) {
  const client = createClient({ url });
  await client.connect();
  defer(t, () => client.close());
  return client;
}

test('each period counts under its own key, which expires when the span ends', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const clock = { at: new Date(Date.UTC(2030, 10, 23, 14, 30)) };
  const stores = await storesAt(t, redis.url, clock, 2);
  const client = await clientOf(t, redis.url);
  const cases: [string, BillingPlan, string, string][] = [
    ['month', { name: 'p', monthlyRequests: 3, operations: [...ALL] }, 'sheetrest:quota:2030-11:crm', '2030-12-01T00:00:00Z'],
    ['day', { name: 'p', period: 'day', requests: 3, operations: [...ALL] }, 'sheetrest:quota:2030-11-23:crm', '2030-11-24T00:00:00Z'],
    ['hour', { name: 'p', period: 'hour', requests: 3, operations: [...ALL] }, 'sheetrest:quota:2030-11-23T14:crm', '2030-11-23T15:00:00Z'],
  ];
  for (const [period, plan, key, end] of cases) {
    await t.test(period, async () => {
      await client.flushAll();
      const decisions = [];
      for (let n = 0; n < 4; n++) decisions.push(await stores[n % 2].take('crm', plan, 'read'));
      assert.deepEqual(decisions.map((decision) => decision.allowed), [true, true, true, false], 'the limit holds across instances');
      const reset = String(Date.parse(end) / 1000);
      assert.deepEqual(decisions[3].headers, { 'X-RateLimit-Limit': '3', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Plan': 'p', 'X-RateLimit-Reset': reset });
      const allowance = { month: 'monthly', day: 'daily', hour: 'hourly' }[period];
      assert.equal(decisions[3].error?.message, `The ${allowance} allowance of 3 requests on the plan "p" is used up; it renews at ${end}.`);
      assert.deepEqual(await client.keys('sheetrest:quota:*'), [key]);
      assert.equal(await client.get(key), '3');
      assert.equal(await client.expireTime(key), Date.parse(end) / 1000);
      assert.equal(stores[1].used('crm', plan), 3);
    });
  }
});

test('a day plan starts again at midnight UTC on a new key', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const clock = { at: new Date('2030-11-23T23:59:59Z') };
  const [store] = await storesAt(t, redis.url, clock, 1);
  const plan: BillingPlan = { name: 'api', period: 'day', requests: 1, operations: [...ALL] };
  assert.equal((await store.take('crm', plan, 'read')).allowed, true);
  assert.equal((await store.take('crm', plan, 'read')).allowed, false);
  clock.at = new Date('2030-11-24T00:00:00Z');
  assert.equal(store.used('crm', plan), 0);
  const next = await store.take('crm', plan, 'read');
  assert.equal(next.allowed, true);
  assert.equal(next.headers['X-RateLimit-Reset'], String(Date.UTC(2030, 10, 25) / 1000));
  const client = await clientOf(t, redis.url);
  assert.deepEqual((await client.keys('sheetrest:quota:*')).sort(), ['sheetrest:quota:2030-11-23:crm', 'sheetrest:quota:2030-11-24:crm']);
});

test('requests of a plan without a limit are added under its period\'s key', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const clock = { at: new Date(Date.UTC(2030, 10, 23, 14, 30)) };
  const [store] = await storesAt(t, redis.url, clock, 1);
  const team: BillingPlan = { name: 'team', period: 'hour', operations: [...ALL] };
  for (let n = 0; n < 3; n++) assert.deepEqual(store.take('team', team, 'read'), { allowed: true, headers: { 'X-RateLimit-Plan': 'unlimited' } });
  store.take('open', undefined, 'read');
  assert.equal(store.used('team', team), 3, 'counted here meanwhile');
  await store.flush();
  const client = await clientOf(t, redis.url);
  assert.equal(await client.get('sheetrest:quota:2030-11-23T14:team'), '3');
  assert.equal(await client.expireTime('sheetrest:quota:2030-11-23T14:team'), Date.UTC(2030, 10, 23, 15) / 1000);
  assert.equal(await client.get('sheetrest:quota:2030-11:open'), '1', 'no plan: the month, as before');
  assert.equal(store.used('team', team), 3);
});

test('peek gives the X-RateLimit-* headers of the count this instance last saw, and counts nothing', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const clock = { at: new Date(Date.UTC(2030, 10, 23, 14, 30)) };
  const [store] = await storesAt(t, redis.url, clock, 1);
  const client = await clientOf(t, redis.url);
  await client.flushAll();
  const plan: BillingPlan = { name: 'p', monthlyRequests: 10, operations: [...ALL] };
  for (let n = 0; n < 3; n++) await store.take('crm', plan, 'read');
  const reset = String(Date.UTC(2030, 11, 1) / 1000);
  assert.deepEqual(store.peek('crm', plan), { 'X-RateLimit-Limit': '10', 'X-RateLimit-Remaining': '7', 'X-RateLimit-Plan': 'p', 'X-RateLimit-Reset': reset });
  assert.equal(await client.get('sheetrest:quota:2030-11:crm'), '3', 'nothing counted');
  assert.deepEqual(store.peek('other', undefined), { 'X-RateLimit-Plan': 'unlimited' });
});
