// The engine stage for GET and HEAD (server/http/read.ts): a read built by the engine and kept,
// the kept answer given again (at once, as the same object) while its tab is served, its 304,
// and a source that has to be waited for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { AnswerCache } from '../../server/http/answer-cache.ts';
import { answerRead } from '../../server/http/read.ts';
import type { Answer } from '../../server/http/respond.ts';
import type { SheetRoute } from '../../server/http/route.ts';
import { connectionOf, incoming, people } from '../helpers/incoming.ts';

const route = (): SheetRoute => ({ rawId: 'demo', scope: { tab: null } });

test('a read is built by the engine, then given again at once as the same object', () => {
  const answers = new AnswerCache(1024 * 1024);
  const connection = connectionOf();
  const sheetRoute = route();
  const first = answerRead(answers, connection, incoming('GET', 'http://x/sheets/demo/Name/Ann'), sheetRoute) as Answer;
  assert.equal(first.status, 200);
  assert.deepEqual(JSON.parse(typeof first.body === 'string' ? first.body : new TextDecoder().decode(first.body)), [{ Name: 'Ann', Age: '30' }]);
  const again = answerRead(answers, connection, incoming('GET', 'http://x/sheets/demo/Name/Ann'), sheetRoute);
  assert.ok(!(again instanceof Promise), 'a kept answer is not waited for');
  assert.equal(again, first);
  // Its ETag names it: the kept answer's 304.
  const notModified = answerRead(answers, connection, incoming('GET', 'http://x/sheets/demo/Name/Ann', { 'if-none-match': first.headers.ETag }), sheetRoute) as Answer;
  assert.equal(notModified.status, 304);
  assert.equal(notModified.headers.ETag, first.headers.ETag);
});

test('another connection object (changed by the admin API) does not get the old one\'s answers', () => {
  const answers = new AnswerCache(1024 * 1024);
  const sheetRoute = route();
  const first = answerRead(answers, connectionOf(), incoming('GET', 'http://x/sheets/demo'), sheetRoute);
  const other = answerRead(answers, connectionOf({ engine: { hiddenTabs: 'hide' } }), incoming('GET', 'http://x/sheets/demo'), sheetRoute);
  assert.notEqual(other, first);
});

test('with no answers kept, every read is built', () => {
  const connection = connectionOf();
  const first = answerRead(null, connection, incoming('GET', 'http://x/sheets/demo'), route()) as Answer;
  const again = answerRead(null, connection, incoming('GET', 'http://x/sheets/demo'), route()) as Answer;
  assert.notEqual(again, first);
  assert.deepEqual(again, first);
});

test('a request the engine refuses is its error', () => {
  const answered = answerRead(null, connectionOf(), incoming('GET', 'http://x/sheets/demo?_limit=x'), route()) as Answer;
  assert.equal(answered.status, 400);
  assert.equal(answered.headers['Cache-Control'], 'no-store');
});

test('a source with nothing at hand is waited for, and told the tab and freshness asked for', async () => {
  const base = connectionOf();
  const asked: unknown[] = [];
  const source = { ...base.source, readNow: undefined, read: async (options?: unknown) => (asked.push(options), people()) };
  const answered = answerRead(null, connectionOf({ source }), incoming('GET', 'http://x/sheets/demo/tabs/People', { 'cache-control': 'no-cache' }), { rawId: 'demo', scope: { tab: 'People' } });
  assert.ok(answered instanceof Promise);
  assert.equal((await answered).status, 200);
  assert.deepEqual(asked, [{ fresh: true, tab: 'People' }]);
});
