// The log stage (server/http/request-log.ts): a request line's fields, with the path masked.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger } from '../../server/log.ts';
import { logRequest, requestFields } from '../../server/http/request-log.ts';
import { incoming } from '../helpers/incoming.ts';

test('requestFields', async (t) => {
  const cases: [string, string, number, number, object][] = [
    // [method, URL, status, ms, the line's fields]
    ['GET', 'http://x/sheets/demo?_limit=5&Name=Ann', 200, 0.42, { method: 'GET', path: '/sheets/demo', status: 200, ms: 0.42, connection: 'demo' }],
    ['GET', 'http://x/sheets/demo/Name/Ann', 200, 1, { method: 'GET', path: '/sheets/demo/Name/…', status: 200, ms: 1, connection: 'demo' }],
    ['GET', 'http://x/sheets/demo/tabs/People/Name/Ann%20Lee', 200, 1, { method: 'GET', path: '/sheets/demo/tabs/People/Name/…', status: 200, ms: 1, connection: 'demo' }],
    ['PATCH', 'http://x/sheets/demo/3', 200, 2, { method: 'PATCH', path: '/sheets/demo/3', status: 200, ms: 2, connection: 'demo' }],
    ['GET', 'http://x/sheets/demo/tabs/People', 200, 1, { method: 'GET', path: '/sheets/demo/tabs/People', status: 200, ms: 1, connection: 'demo' }],
    ['GET', 'http://x/sheets/demo%20book#x', 404, 1, { method: 'GET', path: '/sheets/demo%20book', status: 404, ms: 1, connection: 'demo book' }],
    ['GET', 'http://x/healthz', 200, 0.1, { method: 'GET', path: '/healthz', status: 200, ms: 0.1 }],
    ['GET', 'http://x', 200, 0.1, { method: 'GET', path: '/', status: 200, ms: 0.1 }],
    ['GET', 'http://x/sheets', 404, 0.1, { method: 'GET', path: '/sheets', status: 404, ms: 0.1 }],
  ];
  for (const [method, url, status, ms, expected] of cases) {
    await t.test(`${method} ${url} ${status}`, () => assert.deepEqual(JSON.parse(requestFields(method, url, status, ms)), expected));
  }
  await t.test('the same target with another status or method is not given the first one\'s text', () => {
    assert.equal(JSON.parse(requestFields('GET', 'http://x/sheets/demo/3', 200, 1)).status, 200);
    assert.equal(JSON.parse(requestFields('GET', 'http://x/sheets/demo/3', 404, 1)).status, 404);
    assert.equal(JSON.parse(requestFields('DELETE', 'http://x/sheets/demo/3', 404, 1)).method, 'DELETE');
  });
});

test('logRequest writes one line at the info level and hands the answer on', () => {
  const lines: string[] = [];
  const answered = { status: 201, headers: {}, body: '' };
  const log = createLogger('info', (line) => lines.push(line));
  assert.equal(logRequest(log, incoming('POST', 'http://x/sheets/demo?secret=1'), answered, performance.now()), answered);
  assert.equal(lines.length, 1);
  const line = JSON.parse(lines[0]);
  assert.equal(line.msg ?? line.message, 'request');
  assert.equal(line.path, '/sheets/demo');
  assert.equal(line.status, 201);
  assert.doesNotMatch(lines[0], /secret/);
});
