// The quota stage (server/http/quota.ts): what a request counts as, and the answer when the
// billing plan refuses it. How plans count is test/quota/'s.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiError } from '../../lib/errors.ts';
import { operationOf, quotaRefusal } from '../../server/http/quota.ts';

test('operationOf', async (t) => {
  const cases: [string, string][] = [
    ['GET', 'read'], ['HEAD', 'read'], ['OPTIONS', 'read'], ['POST', 'create'],
    ['PATCH', 'update'], ['PUT', 'update'], ['DELETE', 'delete'], ['PROPFIND', 'read'],
  ];
  for (const [method, operation] of cases) await t.test(method, () => assert.equal(operationOf(method), operation));
});

test('quotaRefusal: 402 with the quota\'s headers and CORS\', and no cache may keep it', () => {
  const headers = { 'X-RateLimit-Limit': '2', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Plan': 'tiny', 'X-RateLimit-Reset': '1711929600' };
  const error = apiError('throttle', 'The monthly allowance of 2 requests on the plan "tiny" is used up; it renews at 2024-04-01T00:00:00Z.');
  const answered = quotaRefusal({ allowed: false, headers, error }, { 'Access-Control-Allow-Origin': '*' });
  assert.equal(answered.status, 402);
  assert.equal(JSON.parse(String(answered.body)).error, 'throttle');
  assert.equal(answered.headers['X-RateLimit-Plan'], 'tiny');
  assert.equal(answered.headers['Access-Control-Allow-Origin'], '*');
  assert.equal(answered.headers['Cache-Control'], 'no-store');
});

test('quotaRefusal without an error of its own says the allowance is used up', () => {
  const answered = quotaRefusal({ allowed: false, headers: {} }, {});
  assert.equal(answered.status, 402);
  assert.match(String(answered.body), /quota is used up/);
});
