// The caching headers stage (server/http/caching.ts), decided without a server: Cache-Control
// and Last-Modified per connection and answer, a kept answer's 304, and the headers an answer
// finally goes out with. test/http/caching.test.ts checks the same over HTTP.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Operation } from '../../lib/parse-request.ts';
import { digestKey } from '../../server/auth.ts';
import type { CacheControl } from '../../server/connections.ts';
import { cachingHeaders, finishedAnswer, NO_STORE_HEADERS, revalidated } from '../../server/http/caching.ts';
import type { Answer } from '../../server/http/respond.ts';
import { connectionOf } from '../helpers/incoming.ts';

const KEYS = [{ digest: digestKey('k'), scope: 'read' as const }];

test('cachingHeaders: Cache-Control', async (t) => {
  const cases: [string, CacheControl | undefined, boolean, Operation, string, number, string][] = [
    // [case, cacheControl, keyed, operation, method, status, Cache-Control]
    ['a read, by default', undefined, false, 'read', 'GET', 200, 'no-cache'],
    ['a 304', undefined, false, 'read', 'GET', 304, 'no-cache'],
    ['a HEAD', undefined, false, 'read', 'HEAD', 200, 'no-cache'],
    ['a keyed read', undefined, true, 'read', 'GET', 200, 'private, no-cache'],
    ['max-age', { maxAge: 60 }, false, 'read', 'GET', 200, 'public, max-age=60'],
    ['max-age and stale-while-revalidate', { maxAge: 60, staleWhileRevalidate: 30 }, false, 'read', 'GET', 200, 'public, max-age=60, stale-while-revalidate=30'],
    ['max-age, keyed', { maxAge: 5 }, true, 'read', 'GET', 200, 'private, max-age=5'],
    ['an error', { maxAge: 60 }, false, 'read', 'GET', 404, 'no-store'],
    ['a write', { maxAge: 60 }, false, 'create', 'POST', 201, 'no-store'],
    ['an OPTIONS answered by the engine', undefined, false, 'read', 'OPTIONS', 200, 'no-store'],
  ];
  for (const [name, cacheControl, withKeys, operation, method, status, expected] of cases) {
    await t.test(name, () => {
      const connection = connectionOf({ cacheControl, keys: withKeys ? KEYS : [] });
      assert.equal(cachingHeaders(connection, operation, method, status)['Cache-Control'], expected);
    });
  }
});

test('cachingHeaders: Last-Modified from the source, made once per time', () => {
  let modified = Date.UTC(2024, 2, 1, 12, 0, 0);
  const base = connectionOf();
  const connection = connectionOf({ source: { ...base.source, lastModified: () => modified } });
  const first = cachingHeaders(connection, 'read', 'GET', 200);
  assert.equal(first['Last-Modified'], 'Fri, 01 Mar 2024 12:00:00 GMT');
  assert.equal(cachingHeaders(connection, 'read', 'GET', 200), first, 'the same object while the time stands');
  modified += 1000;
  assert.equal(cachingHeaders(connection, 'read', 'GET', 200)['Last-Modified'], 'Fri, 01 Mar 2024 12:00:01 GMT');
  assert.equal(cachingHeaders(connection, 'create', 'POST', 201), NO_STORE_HEADERS);
  assert.equal(cachingHeaders(base, 'read', 'GET', 200)['Last-Modified'], undefined, 'a source with no time gives none');
});

test('revalidated: what a kept answer gives a request', async (t) => {
  const kept: Answer = { status: 200, headers: { ETag: '"v1"', 'X-Sheet-Rows': '2', 'Content-Type': 'application/json' }, body: '[]' };
  const kept304: Answer = { status: 304, headers: { ETag: '"v1"' }, body: '' };
  const cases: [string, Answer, string | null, 'kept' | 304 | undefined][] = [
    // [case, kept answer, If-None-Match, what the request gets (undefined: the engine answers)]
    ['a 200, no If-None-Match', kept, null, 'kept'],
    ['a 200, another tag', kept, '"v0"', 'kept'],
    ['a 200, its tag', kept, '"v1"', 304],
    ['a 200, its tag in a list', kept, '"x", W/"v1"', 304],
    ['a 200, *', kept, '*', 304],
    ['a 304, its tag', kept304, '"v1"', 'kept'],
    ['a 304, *', kept304, '*', undefined],
    ['a 304, another tag', kept304, '"v0"', undefined],
  ];
  for (const [name, answer, ifNoneMatch, expected] of cases) {
    await t.test(name, () => {
      const got = revalidated(answer, ifNoneMatch);
      if (expected === 'kept') assert.equal(got, answer);
      else if (expected === undefined) assert.equal(got, undefined);
      else {
        assert.deepEqual(got, { status: 304, headers: { ETag: '"v1"', 'X-Sheet-Rows': '2' }, body: '' });
        assert.equal(revalidated(answer, ifNoneMatch), got, 'the 304 is made once per kept answer');
      }
    });
  }
});

test('finishedAnswer: own headers, then caching, quota and CORS; one object while its parts stay', () => {
  const answered: Answer = { status: 200, headers: { 'Content-Type': 'application/json', 'Cache-Control': 'engine' }, body: '[]' };
  const caching = { 'Cache-Control': 'no-cache' };
  const quota = { 'X-RateLimit-Plan': 'unlimited' };
  const cors = { 'Access-Control-Allow-Origin': 'https://a.example', Vary: 'Origin' };
  const sent = finishedAnswer(answered, caching, quota, cors, false);
  assert.deepEqual(sent, { status: 200, body: '[]', headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache', 'X-RateLimit-Plan': 'unlimited', 'Access-Control-Allow-Origin': 'https://a.example', Vary: 'Origin' } });
  assert.equal(finishedAnswer(answered, caching, quota, cors, false), sent);
  const keyed = finishedAnswer(answered, caching, quota, cors, true);
  assert.notEqual(keyed, sent);
  assert.equal(keyed.headers.Vary, 'Origin, X-Api-Key');
  assert.equal(finishedAnswer(answered, caching, { 'X-RateLimit-Plan': 'unlimited' }, cors, true) === keyed, false, 'another quota object: made again');
  assert.equal(finishedAnswer(answered, caching, quota, {}, true).headers.Vary, 'X-Api-Key');
});
