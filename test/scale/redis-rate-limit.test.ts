// Rate limits shared through Redis (server/rate-limit/redis-limiter.ts): three apps on one Redis,
// a key's requests spread across them, exactly `requests` served per window; Redis's own clock
// when none is given; 503 while Redis is away, as the quota answers for a limited plan.
// Each test starts its own redis-server; without one installed they are skipped, saying why.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { digestKey } from '../../server/auth.ts';
import type { BillingPlan } from '../../server/config/schema.ts';
import { createApp } from '../../server/http/app.ts';
import { createLogger } from '../../server/log.ts';
import { openRedisLimiter } from '../../server/rate-limit/redis-limiter.ts';
import { openRedis } from '../../server/redis/client.ts';
import { memorySource } from '../../server/sources/memory.ts';
import { defer } from '../helpers/http.ts';
import { people } from '../helpers/incoming.ts';
import { redisOrSkip } from '../helpers/redis.ts';

const silent = createLogger('silent');
const ALL = ['read', 'create', 'update', 'delete'] as ('read' | 'create' | 'update' | 'delete')[];

async function instances(t: Parameters<typeof defer>[0], url: string, plan: BillingPlan, now?: () => number) {
  return Promise.all([0, 1, 2].map(async () => {
    const redis = await openRedis({ url, log: silent });
    defer(t, () => redis.close());
    const rateLimiter = await openRedisLimiter({ redis, log: silent, ...(now === undefined ? {} : { now }) });
    return createApp({
      connections: [{ id: 'crm', source: memorySource(people()), keys: [{ digest: digestKey('k1') }, { digest: digestKey('k2') }], readOnly: false, engine: {}, plan }],
      quota: { take: () => ({ allowed: true, headers: {} }), peek: () => ({}) },
      rateLimiter,
      bodyBytes: 1024 * 1024,
      cors: '*',
      log: silent,
    });
  }));
}

async function burst(apps: Awaited<ReturnType<typeof instances>>, count: number, key = 'k1') {
  const answers = await Promise.all(Array.from({ length: count }, async (_, i) => {
    const response = await apps[i % 3].fetch(new Request('http://x/sheets/crm', { headers: { 'X-Api-Key': key } }));
    await response.body?.cancel();
    return { status: response.status, rate: response.headers.get('ratelimit'), retry: response.headers.get('retry-after') };
  }));
  return answers;
}

test('three instances on one Redis serve exactly the limit in each window', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  let now = Date.UTC(2030, 0, 1, 12, 0, 1);
  const plan: BillingPlan = { name: 'burst', operations: ALL, rateLimit: { requests: 20, perSeconds: 10 } };
  const apps = await instances(t, redis.url, plan, () => now);
  const first = await burst(apps, 90);
  assert.equal(first.filter((answer) => answer.status === 200).length, 20);
  assert.equal(first.filter((answer) => answer.status === 429).length, 70);
  // Each instance's `r` is its own view (its lease's count), never past the limit.
  const remaining = first.filter((answer) => answer.status === 200).map((answer) => Number(/r=(\d+)/.exec(answer.rate ?? '')?.[1]));
  assert.ok(remaining.every((left) => left >= 0 && left < 20), remaining.join(' '));
  assert.ok(remaining.includes(19) && remaining.includes(0), remaining.join(' '));
  assert.ok(first.filter((answer) => answer.status === 429).every((answer) => answer.retry === '9' && answer.rate === '"burst";r=0;t=9'));
  // Another key: its own count, on the same instances.
  assert.equal((await burst(apps, 30, 'k2')).filter((answer) => answer.status === 200).length, 20);
  // The next window.
  now += 9_000;
  const second = await burst(apps, 45);
  assert.equal(second.filter((answer) => answer.status === 200).length, 20);
});

test('with leases (a large limit), still never more than the limit, and all of it while requests keep coming', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const now = Date.UTC(2030, 0, 1, 12, 0, 1);
  const plan: BillingPlan = { name: 'wide', operations: ALL, rateLimit: { requests: 500, perSeconds: 60 } };
  const apps = await instances(t, redis.url, plan, () => now);
  let served = 0;
  // Waves, so most requests find a lease in hand (served without a round trip).
  for (let wave = 0; wave < 8; wave++) served += (await burst(apps, 150)).filter((answer) => answer.status === 200).length;
  assert.equal(served, 500);
});

test('without a clock of its own, the window is Redis\'s', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  // A day's window: the test would have to run across midnight UTC to see two.
  const plan: BillingPlan = { name: 'daily', operations: ALL, rateLimit: { requests: 7, perSeconds: 86_400 } };
  const apps = await instances(t, redis.url, plan);
  const answers = await burst(apps, 21);
  assert.equal(answers.filter((answer) => answer.status === 200).length, 7);
  const seconds = Number(/t=(\d+)/.exec(answers[0].rate ?? '')?.[1]);
  const untilMidnight = Math.ceil((86_400_000 - (Date.now() % 86_400_000)) / 1000);
  assert.ok(Math.abs(seconds - untilMidnight) <= 2, `t=${seconds}, midnight UTC in ${untilMidnight} s`);
});

test('Redis away: a rate-limited plan answers 503 with Retry-After once its lease is used, and is served again once it is back', async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  // A limit of 8: the first request's lease is 0 (an eighth of 7), so every request asks Redis.
  const plan: BillingPlan = { name: 'burst', operations: ALL, rateLimit: { requests: 8, perSeconds: 60 } };
  const apps = await instances(t, redis.url, plan);
  assert.equal((await burst(apps, 1))[0].status, 200);
  await redis.stop();
  const away = await apps[0].fetch(new Request('http://x/sheets/crm', { headers: { 'X-Api-Key': 'k1' } }));
  assert.deepEqual([away.status, away.headers.get('retry-after'), (await away.json()).error], [503, '1', 'upstream_unavailable']);
  await redis.restart();
  let status = 0;
  for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    status = (await burst(apps, 1))[0].status;
  }
  assert.equal(status, 200);
});
