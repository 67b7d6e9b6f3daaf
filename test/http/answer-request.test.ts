// The pipeline itself (server/http/app.ts, answerRequest): the stages run in their order, each
// refusal stops the ones after it, and a kept read answer is given at once, not as a promise.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { digestKey } from '../../server/auth.ts';
import { createApp } from '../../server/http/app.ts';
import type { Answer } from '../../server/http/respond.ts';
import { createLogger } from '../../server/log.ts';
import type { Quota, QuotaDecision } from '../../server/quota/quota.ts';
import { connectionOf, incoming } from '../helpers/incoming.ts';

function appWith(decision: QuotaDecision = { allowed: true, headers: {} }, cors: '*' | string[] = ['https://app.example']) {
  const counted: string[] = [];
  const quota: Quota = {
    take: (connection, _billingPlan, operation) => {
      counted.push(`${connection} ${operation}`);
      return decision;
    },
    peek: () => decision.headers,
  };
  const app = createApp({
    connections: [connectionOf(), connectionOf({ id: 'keyed', keys: [{ digest: digestKey('reader'), scope: 'read' }] })],
    quota,
    bodyBytes: 1024,
    cors,
    allowedHosts: [],
    log: createLogger('silent'),
  });
  return { app, counted };
}

const statusOf = async (answered: Answer | Promise<Answer>) => (await answered).status;

test('each stage refuses before the next runs', async (t) => {
  const cases: [string, string, string, Record<string, string>, number, string[]][] = [
    // [stage, method, URL, headers, status, what the quota counted]
    ['host check before route', 'GET', 'http://x/nowhere', { host: 'rebound.example' }, 403, []],
    ['route', 'GET', 'http://x/nowhere', { host: 'localhost' }, 404, []],
    ['CORS before the connection', 'POST', 'http://x/sheets/nope', { host: 'localhost', origin: 'https://evil.example' }, 403, []],
    ['a preflight is not counted', 'OPTIONS', 'http://x/sheets/demo', { host: 'localhost', 'access-control-request-method': 'POST' }, 204, []],
    ['connection', 'GET', 'http://x/sheets/nope', { host: 'localhost' }, 404, []],
    ['auth before the quota', 'GET', 'http://x/sheets/keyed', { host: 'localhost' }, 401, []],
    ['the quota counts, then a read key may not write', 'DELETE', 'http://x/sheets/keyed/0', { host: 'localhost', 'x-api-key': 'reader' }, 403, ['keyed delete']],
    ['a read', 'GET', 'http://x/sheets/demo', { host: 'localhost' }, 200, ['demo read']],
  ];
  for (const [stage, method, url, headers, status, counted] of cases) {
    await t.test(stage, async () => {
      const { app, counted: seen } = appWith();
      assert.equal(await statusOf(app.answer(incoming(method, url, headers))), status);
      assert.deepEqual(seen, counted);
    });
  }
  await t.test('a refusal by the quota stops the engine', async () => {
    const { app } = appWith({ allowed: false, headers: { 'X-RateLimit-Plan': 'none' } });
    const answered = await app.answer(incoming('DELETE', 'http://x/sheets/demo/0', { host: 'localhost' }));
    assert.equal(answered.status, 402);
    assert.equal(answered.headers['X-RateLimit-Plan'], 'none');
  });
});

test('a kept read answer is given at once, as the same object, with its headers', async () => {
  // CORS `*` and one quota decision object: the same parts, so the same answer object (caching.ts, finishedAnswer).
  const { app } = appWith({ allowed: true, headers: { 'X-RateLimit-Plan': 'unlimited' } }, '*');
  const request = () => incoming('GET', 'http://localhost/sheets/demo?_limit=1', { host: 'localhost' });
  const first = await app.answer(request());
  const second = await app.answer(request());
  const third = app.answer(request());
  assert.ok(!(third instanceof Promise), 'not a promise: no turn of the event loop');
  assert.equal(third, second);
  assert.equal(first.status, 200);
  assert.equal(third.headers['Cache-Control'], 'no-cache');
  assert.equal(third.headers['X-RateLimit-Plan'], 'unlimited');
  assert.equal(third.headers['Access-Control-Allow-Origin'], '*');
});
