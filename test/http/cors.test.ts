// The CORS stage (server/http/cors.ts): a preflight's answer, and which browser writes are
// refused before the connection is even looked up (originRefusal) or after it is known to have
// no keys (openWriteRefusal).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { openWriteRefusal, originRefusal, preflightAnswer, type CorsWrites, type Origins } from '../../server/http/cors.ts';
import { incoming } from '../helpers/incoming.ts';

const LISTED: Origins = ['https://app.example'];

test('preflightAnswer: the path\'s methods, the caller\'s origin when listed', async (t) => {
  const cases: [string, Origins, string | null, string, string | undefined][] = [
    // [URL, CORS origins, Origin, Allow-Methods, Allow-Origin]
    ['http://x/sheets/demo', '*', 'https://a.example', 'GET, HEAD, POST, PATCH, OPTIONS', '*'],
    ['http://x/sheets/demo/tabs', '*', null, 'GET, HEAD, OPTIONS', '*'],
    ['http://x/sheets/demo/3', LISTED, 'https://app.example', 'GET, HEAD, PATCH, PUT, DELETE, OPTIONS', 'https://app.example'],
    ['http://x/sheets/demo', LISTED, 'https://other.example', 'GET, HEAD, POST, PATCH, OPTIONS', undefined],
    // A path the engine would refuse: reads only.
    ['http://x/sheets/demo/a/b/c', '*', null, 'GET, HEAD, OPTIONS', '*'],
  ];
  for (const [url, origins, origin, methods, allowOrigin] of cases) {
    await t.test(`${url} from ${origin}`, () => {
      const answered = preflightAnswer(origins, incoming('OPTIONS', url, { 'access-control-request-method': 'POST' }), origin);
      assert.equal(answered.status, 204);
      assert.equal(answered.headers['Access-Control-Allow-Methods'], methods);
      assert.equal(answered.headers['Access-Control-Allow-Origin'], allowOrigin);
    });
  }
});

test('originRefusal: a write from an origin a CORS list leaves out', async (t) => {
  const cases: [Origins, string, string | null, string | undefined, boolean][] = [
    // [CORS origins, method, Origin, Host, refused]
    ['*', 'POST', 'https://evil.example', 'api.example', false],
    [LISTED, 'GET', 'https://evil.example', 'api.example', false],
    [LISTED, 'OPTIONS', 'https://evil.example', 'api.example', false],
    [LISTED, 'POST', null, 'api.example', false],
    [LISTED, 'POST', 'https://app.example', 'api.example', false],
    [LISTED, 'POST', 'https://evil.example', 'api.example', true],
    [LISTED, 'DELETE', 'https://evil.example', 'api.example', true],
    // The server's own page (the dashboard's playground) is no other site.
    [LISTED, 'POST', 'https://api.example', 'api.example', false],
    [LISTED, 'POST', 'http://localhost:3000', undefined, false],
  ];
  for (const [origins, method, origin, host, refused] of cases) {
    await t.test(`${JSON.stringify(origins)} ${method} from ${origin} to ${host}`, () => {
      const request = incoming(method, 'http://localhost:3000/sheets/demo', host === undefined ? {} : { host });
      const error = originRefusal(origins, request, origin);
      assert.equal(error?.code ?? null, refused ? 'origin_not_allowed' : null);
    });
  }
});

test('openWriteRefusal: another site\'s write to a connection without keys', async (t) => {
  const cases: [Origins, CorsWrites, string, string | null, boolean, boolean][] = [
    // [CORS origins, cors.writes, method, Origin, open, refused]
    ['*', 'same-origin', 'POST', 'https://evil.example', true, true],
    ['*', 'same-origin', 'POST', 'https://evil.example', false, false],
    ['*', 'same-origin', 'GET', 'https://evil.example', true, false],
    ['*', 'same-origin', 'POST', null, true, false],
    ['*', 'same-origin', 'POST', 'https://api.example', true, false],
    ['*', 'same-origin', 'POST', 'null', true, true],
    ['*', 'any', 'POST', 'https://evil.example', true, false],
    ['*', ['https://friend.example'], 'PATCH', 'https://friend.example', true, false],
    ['*', ['https://friend.example'], 'PATCH', 'https://evil.example', true, true],
    [LISTED, 'same-origin', 'POST', 'https://app.example', true, false],
  ];
  for (const [origins, writes, method, origin, open, refused] of cases) {
    await t.test(`${JSON.stringify(origins)} writes ${JSON.stringify(writes)} ${method} from ${origin}${open ? '' : ' (keyed)'}`, () => {
      const error = openWriteRefusal(origins, writes, incoming(method, 'http://api.example/sheets/demo', { host: 'api.example' }), origin, open);
      assert.equal(error?.code ?? null, refused ? 'permission_denied' : null);
    });
  }
});
