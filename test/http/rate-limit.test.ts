// Plans' rate limits through the app (server/rate-limit/, server/http/app.ts stage 6a): fixed
// windows counted per key, or per client address on an open connection (X-Forwarded-For only with
// trustProxy); 429 rate_limited with Retry-After; RateLimit-Policy and RateLimit on every answer
// of such a plan, exposed through CORS; a refused request is not counted against the quota.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { digestKey, type ApiKey } from '../../server/auth.ts';
import type { BillingPlan } from '../../server/config/schema.ts';
import { createApp } from '../../server/http/app.ts';
import { createLogger } from '../../server/log.ts';
import { openQuotaStore } from '../../server/quota/quota.ts';
import { decideRate, memoryRateLimiter } from '../../server/rate-limit/rate-limit.ts';
import { configForFile } from '../../server/config/config.ts';
import { RUNTIME, startServer, tempDir, writeXlsx } from '../helpers/http.ts';
import { incoming, people } from '../helpers/incoming.ts';
import { memorySource } from '../../server/sources/memory.ts';

const ALL = ['read', 'create', 'update', 'delete'] as ('read' | 'create' | 'update' | 'delete')[];
// 2 s into a 10-second window: 8 s left.
const WINDOW_START = Date.UTC(2030, 0, 1, 12, 0, 0);

async function appWith(t: { after(fn: () => Promise<void>): void }, plan: BillingPlan, options: { keys?: ApiKey[]; trustProxy?: boolean } = {}) {
  let now = WINDOW_START + 2_000;
  const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-rate-'));
  const quota = await openQuotaStore({ stateDir, now: () => new Date(now) });
  t.after(async () => {
    await quota.close();
    await rm(stateDir, { recursive: true, force: true });
  });
  const app = createApp({
    connections: [{ id: 'demo', source: memorySource(people()), keys: options.keys ?? [], readOnly: false, engine: {}, plan }],
    quota,
    rateLimiter: memoryRateLimiter({ now: () => now }),
    trustProxy: options.trustProxy ?? false,
    bodyBytes: 1024 * 1024,
    cors: '*',
    log: createLogger('silent'),
  });
  const call = async (headers: Record<string, string> = {}, address = '192.0.2.1', path = '/sheets/demo') => {
    const request = { ...incoming('GET', `http://x${path}`, headers), remoteAddress: address };
    const answer = await app.answer(request);
    const text = typeof answer.body === 'string' ? answer.body : new TextDecoder().decode(answer.body);
    return { status: answer.status, headers: answer.headers, body: text === '' ? null : JSON.parse(text) };
  };
  return { call, quota, advance: (ms: number) => (now += ms) };
}

const BURST: BillingPlan = { name: 'burst', operations: ALL, rateLimit: { requests: 3, perSeconds: 10 } };

test('requests within the window are served with RateLimit headers; the next one is 429 with Retry-After', async (t) => {
  const { call, advance } = await appWith(t, BURST, { keys: [{ digest: digestKey('a') }, { digest: digestKey('b') }] });
  const served = [];
  for (let i = 0; i < 3; i++) served.push(await call({ 'x-api-key': 'a' }));
  assert.deepEqual(served.map((answer) => answer.status), [200, 200, 200]);
  assert.deepEqual(served.map((answer) => answer.headers.RateLimit), ['"burst";r=2;t=8', '"burst";r=1;t=8', '"burst";r=0;t=8']);
  assert.equal(served[0].headers['RateLimit-Policy'], '"burst";q=3;w=10');
  assert.match(served[0].headers['Access-Control-Expose-Headers'], /RateLimit-Policy, RateLimit(,|$)/);
  const refused = await call({ 'x-api-key': 'a' });
  assert.equal(refused.status, 429);
  assert.deepEqual(refused.body, { error: 'rate_limited', message: 'The plan "burst" allows 3 requests per 10 s for each key (or client address); try again in 8 s.' });
  assert.deepEqual([refused.headers['Retry-After'], refused.headers.RateLimit, refused.headers['RateLimit-Policy']], ['8', '"burst";r=0;t=8', '"burst";q=3;w=10']);
  assert.match(refused.headers['Access-Control-Expose-Headers'], /RateLimit/);
  // Another key has its own count.
  assert.equal((await call({ 'x-api-key': 'b' })).status, 200);
  // 7.5 s later the window has 0.5 s left: Retry-After rounds up.
  advance(7_500);
  assert.equal((await call({ 'x-api-key': 'a' })).headers['Retry-After'], '1');
  // The next window starts from zero.
  advance(500);
  const next = await call({ 'x-api-key': 'a' });
  assert.deepEqual([next.status, next.headers.RateLimit], [200, '"burst";r=2;t=10']);
});

test('a refused request is not counted against the monthly quota', async (t) => {
  const plan: BillingPlan = { name: 'both', monthlyRequests: 100, operations: ALL, rateLimit: { requests: 2, perSeconds: 10 } };
  const { call, quota } = await appWith(t, plan);
  const statuses = [];
  for (let i = 0; i < 6; i++) statuses.push((await call()).status);
  assert.deepEqual(statuses, [200, 200, 429, 429, 429, 429]);
  assert.equal(quota.used('demo', plan), 2);
});

test('a 429 carries the X-RateLimit-* headers too, as the quota stands, without counting the refused request', async (t) => {
  // The contract: X-RateLimit-* on every response. The quota is peeked at, not asked to count.
  const plan: BillingPlan = { name: 'both', monthlyRequests: 100, operations: ALL, rateLimit: { requests: 2, perSeconds: 10 } };
  const { call } = await appWith(t, plan);
  const served = [await call(), await call()];
  assert.deepEqual(served.map((answer) => answer.headers['X-RateLimit-Remaining']), ['99', '98']);
  const refused = [await call(), await call()];
  for (const answer of refused) {
    assert.equal(answer.status, 429);
    assert.deepEqual(
      [answer.headers['X-RateLimit-Limit'], answer.headers['X-RateLimit-Remaining'], answer.headers['X-RateLimit-Plan'], answer.headers['X-RateLimit-Reset']],
      ['100', '98', 'both', String(Date.UTC(2030, 1, 1) / 1000)],
    );
  }
  const unlimited = await appWith(t, BURST);
  for (let i = 0; i < 3; i++) await unlimited.call();
  const refusedUnlimited = await unlimited.call();
  assert.equal(refusedUnlimited.status, 429);
  assert.equal(refusedUnlimited.headers['X-RateLimit-Plan'], 'unlimited');
  assert.equal(refusedUnlimited.headers['X-RateLimit-Remaining'], undefined);
});

test('a quota refusal (402) on a rate-limited plan carries the RateLimit headers too', async (t) => {
  const plan: BillingPlan = { name: 'tiny', monthlyRequests: 1, operations: ALL, rateLimit: { requests: 5, perSeconds: 10 } };
  const { call } = await appWith(t, plan);
  assert.equal((await call()).status, 200);
  const refused = await call();
  assert.equal(refused.status, 402);
  assert.deepEqual([refused.headers.RateLimit, refused.headers['X-RateLimit-Remaining']], ['"tiny";r=3;t=8', '0']);
});

test('an open connection counts per client address; X-Forwarded-For only with trustProxy', async (t) => {
  await t.test('without trustProxy: the socket\'s address, whatever X-Forwarded-For says', async (t) => {
    const { call } = await appWith(t, BURST);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call({ 'x-forwarded-for': `203.0.113.${i}` }, '192.0.2.1')).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
    assert.equal((await call({}, '192.0.2.2')).status, 200, 'another address has its own count');
  });
  await t.test('with trustProxy: the first address of X-Forwarded-For', async (t) => {
    const { call } = await appWith(t, BURST, { trustProxy: true });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await call({ 'x-forwarded-for': `203.0.113.${i}, 10.0.0.1` }, '10.0.0.1')).status);
    assert.deepEqual(statuses, [200, 200, 200, 200]);
    for (let i = 0; i < 3; i++) await call({ 'x-forwarded-for': '203.0.113.50' }, '10.0.0.1');
    assert.equal((await call({ 'x-forwarded-for': '203.0.113.50' }, '10.0.0.1')).status, 429);
    assert.equal((await call({}, '10.0.0.9')).status, 200, 'no header: the socket\'s address');
  });
});

test('a plan without a rate limit sends no RateLimit headers', async (t) => {
  const { call } = await appWith(t, { name: 'free', monthlyRequests: 10, operations: ALL });
  const answer = await call();
  assert.equal(answer.status, 200);
  assert.equal(answer.headers.RateLimit, undefined);
  assert.equal(answer.headers['RateLimit-Policy'], undefined);
});

test('the OpenAPI document of a rate-limited plan names 429 and the RateLimit headers', async (t) => {
  const { call } = await appWith(t, BURST);
  const document = (await call({}, '192.0.2.1', '/sheets/demo/openapi.json')).body;
  assert.deepEqual(Object.keys(document.components.headers).filter((name) => name.startsWith('RateLimit')), ['RateLimit-Policy', 'RateLimit']);
  assert.ok('429' in document.paths['/sheets/demo'].get.responses);
  assert.equal(document.paths['/healthz'].get.responses['429'], undefined, '/healthz is never limited');
  assert.ok('RateLimit' in document.components.responses.Error404.headers);
  const plain = await appWith(t, { name: 'free', operations: ALL });
  const unlimited = (await plain.call({}, '192.0.2.1', '/sheets/demo/openapi.json')).body;
  assert.equal('RateLimit' in unlimited.components.headers, false);
});

test('the policy name is a Structured Fields string', async (t) => {
  const cases: [string, string][] = [
    ['burst', '"burst";q=1;w=1'],
    ['say "hi"\\', '"say \\"hi\\"\\\\";q=1;w=1'],
    ['plän', '"plan";q=1;w=1'],
  ];
  for (const [name, policy] of cases) await t.test(name, () => assert.equal(decideRate(name, { requests: 1, perSeconds: 1 }, 0, 500).headers['RateLimit-Policy'], policy));
});

test(`over this runtime's listener: an open connection counts the socket's address, X-Forwarded-For ignored (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  // A day's window: the test would have to run across midnight UTC to see two.
  const config = configForFile(dir.path('book.xlsx'), { id: 'book', stateDir: dir.path('state'), log: { level: 'silent' }, plan: { name: 'burst', rateLimit: { requests: 2, perSeconds: 86_400 } } });
  const { url } = await startServer(t, config);
  const statuses: number[] = [];
  for (let i = 0; i < 3; i++) {
    const response = await fetch(`${url}/sheets/book`, { headers: { 'X-Forwarded-For': `203.0.113.${i}` } });
    statuses.push(response.status);
    if (i === 2) {
      assert.equal(response.headers.get('ratelimit-policy'), '"burst";q=2;w=86400');
      assert.ok(Number(response.headers.get('retry-after')) > 0);
    }
    await response.body?.cancel();
  }
  assert.deepEqual(statuses, [200, 200, 429]);
});
