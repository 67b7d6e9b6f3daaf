// GET /sheets/book/aggregate?_agg=count()&_group=City and `_select`/`Link` through the whole
// server in process (server/http/app.ts): counted by the quota as a read, kept by the answer
// cache and revalidated with its ETag (304), `Link` exposed to scripts by CORS, 405 with Allow
// for a write method. The engine's answers themselves are pinned by fixtures/aggregate.json and select.json.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Operation } from '../../lib/parse-request.ts';
import type { Workbook } from '../../lib/workbook.ts';
import { createApp } from '../../server/http/app.ts';
import { createLogger } from '../../server/log.ts';
import { memorySource } from '../../server/sources/memory.ts';

const workbook = (): Workbook => ({
  tabs: [
    {
      name: 'People',
      rows: [
        { text: ['Name', 'City', 'Amount'], value: ['Name', 'City', 'Amount'] },
        { text: ['Ann', 'Lisbon', '10'], value: ['Ann', 'Lisbon', 10] },
        { text: ['Bob', 'Porto', '5'], value: ['Bob', 'Porto', 5] },
        { text: ['Cid', 'lisbon', '2.5'], value: ['Cid', 'lisbon', 2.5] },
      ],
    },
  ],
});

function serve() {
  const operations: Operation[] = [];
  const source = memorySource(workbook());
  const app = createApp({
    connections: [{ id: 'book', source, keys: [], readOnly: false, engine: {} }],
    quota: { take: (_id, _plan, operation) => (operations.push(operation), { allowed: true, headers: {} }), peek: () => ({}) },
    bodyBytes: 1024 * 1024,
    cors: '*',
    log: createLogger('silent'),
  });
  return { call: (path: string, init?: RequestInit) => app.fetch(new Request('http://x' + path, init)), operations };
}

test('an aggregate over HTTP: counted as a read, kept, revalidated with its ETag', async () => {
  const { call, operations } = serve();
  const path = '/sheets/book/aggregate?_agg=count(),sum(Amount)&_group=City';
  const first = await call(path);
  assert.equal(first.status, 200);
  assert.deepEqual(await first.json(), [{ City: 'Lisbon', 'count()': '2', 'sum(Amount)': '12.5' }, { City: 'Porto', 'count()': '1', 'sum(Amount)': '5' }]);
  assert.equal(first.headers.get('x-total-count'), '2');
  assert.equal(first.headers.get('x-sheet-rows'), '3');
  const tag = first.headers.get('etag');
  assert.ok(tag !== null);
  const again = await call(path);
  assert.equal(again.headers.get('etag'), tag);
  assert.equal(await again.text(), '[{"City":"Lisbon","count()":"2","sum(Amount)":"12.5"},{"City":"Porto","count()":"1","sum(Amount)":"5"}]');
  const revalidated = await call(path, { headers: { 'If-None-Match': tag } });
  assert.equal(revalidated.status, 304);
  assert.equal(await revalidated.text(), '');
  assert.deepEqual(operations, ['read', 'read', 'read']);
});

test('a write between two aggregates: the second sees it (the kept answer is not reused)', async () => {
  const { call } = serve();
  const path = '/sheets/book/aggregate?_agg=count()&_group=City';
  assert.deepEqual(await (await call(path)).json(), [{ City: 'Lisbon', 'count()': '2' }, { City: 'Porto', 'count()': '1' }]);
  const posted = await call('/sheets/book', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Dee","City":"Oslo","Amount":1}' });
  assert.equal(posted.status, 201);
  assert.deepEqual(await (await call(path)).json(), [{ City: 'Lisbon', 'count()': '2' }, { City: 'Porto', 'count()': '1' }, { City: 'Oslo', 'count()': '1' }]);
});

test('POST /aggregate is 405 with Allow; a preflight allows GET and HEAD', async () => {
  const { call } = serve();
  const refused = await call('/sheets/book/aggregate?_agg=count()', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' });
  assert.equal(refused.status, 405);
  assert.equal(refused.headers.get('allow'), 'GET, HEAD');
  assert.equal(((await refused.json()) as { error: string }).error, 'method_not_allowed');
  const preflight = await call('/sheets/book/aggregate', { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'GET' } });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get('access-control-allow-methods'), 'GET, HEAD, OPTIONS');
});

test('Link is sent on a read with _limit and exposed to scripts', async () => {
  const { call } = serve();
  const answer = await call('/sheets/book?_select=Name&_limit=1&_offset=1', { headers: { Origin: 'https://app.example' } });
  assert.equal(answer.status, 200);
  assert.deepEqual(await answer.json(), [{ Name: 'Bob' }]);
  assert.equal(answer.headers.get('link'), '<?_select=Name&_limit=1&_offset=0>; rel="first", <?_select=Name&_limit=1&_offset=0>; rel="prev", <?_select=Name&_limit=1&_offset=2>; rel="next", <?_select=Name&_limit=1&_offset=2>; rel="last"');
  assert.ok((answer.headers.get('access-control-expose-headers') ?? '').split(', ').includes('Link'));
});
