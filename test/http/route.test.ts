// The route stage (server/http/route.ts): what the router answers itself, what it hands on to the
// rest of the pipeline as a sheet route, and which targets a repeat finds without the router.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConnectionRegistry } from '../../server/connections.ts';
import type { AdminHandler } from '../../server/http/request.ts';
import type { Answer } from '../../server/http/respond.ts';
import { createRoutes, pathAndQuery, type SheetRoute } from '../../server/http/route.ts';
import { connectionOf, incoming } from '../helpers/incoming.ts';

function routesWith(admin?: AdminHandler) {
  const served: SheetRoute[] = [];
  const routes = createRoutes({
    connections: new ConnectionRegistry([connectionOf(), connectionOf({ id: 'closed', keys: [{ digest: new Uint8Array(32), scope: 'read' }] })]),
    admin,
    bodyLimits: { maxBytes: 1024, timeoutMs: 1000, inFlight: new Set() },
    serveSheet: (_request, route): Answer => {
      served.push(route);
      return { status: 299, headers: {}, body: route.rawId };
    },
  });
  return { routes, served };
}

test('the router answers what is not a sheet, and hands a sheet on', async (t) => {
  const cases: [string, string, number, string | null][] = [
    // [method, URL, status, the sheet route's raw id (null: answered by the router)]
    ['GET', 'http://x/healthz', 200, null],
    // A load balancer's probe may be a HEAD; another method is answered 405, not 404.
    ['HEAD', 'http://x/healthz', 200, null],
    ['POST', 'http://x/healthz', 405, null],
    ['GET', 'http://x/', 200, null],
    ['POST', 'http://x/', 405, null],
    ['GET', 'http://x/nowhere', 404, null],
    ['GET', 'http://x/_admin/connections', 404, null],
    ['GET', 'http://x/sheets/demo', 299, 'demo'],
    ['POST', 'http://x/sheets/demo%20book/tabs/People', 299, 'demo%20book'],
  ];
  for (const [method, url, status, rawId] of cases) {
    await t.test(`${method} ${url}`, async () => {
      const { routes, served } = routesWith();
      const answered = await routes.fetch(incoming(method, url));
      assert.equal(answered.status, status);
      assert.equal(served[0]?.rawId ?? null, rawId);
    });
  }
});

test('the root index lists only the open connections', async () => {
  const { routes } = routesWith();
  const answered = await routes.fetch(incoming('GET', 'http://x/'));
  assert.deepEqual(JSON.parse(String(answered.body)).connections.map((connection: { id: string }) => connection.id), ['demo']);
});

test('with the admin API on, /_admin/... goes to it', async () => {
  const { routes } = routesWith(async (request) => ({ status: 200, headers: {}, body: new URL(request.url).pathname }));
  assert.equal((await routes.fetch(incoming('GET', 'http://x/_admin/connections'))).body, '/_admin/connections');
  assert.equal((await routes.fetch(incoming('GET', 'http://x/_admin'))).body, '/_admin');
});

test('a GET or HEAD of a target routed before is found without the router, with its tab', async (t) => {
  const cases: [string, string, boolean][] = [
    // [method, URL, noted after one routing]
    ['GET', 'http://x/sheets/demo?_limit=1', true],
    ['HEAD', 'http://x/sheets/demo/tabs/People', true],
    ['POST', 'http://x/sheets/demo', false],
    ['OPTIONS', 'http://x/sheets/demo', false],
    ['GET', `http://x/sheets/demo?Name=${'a'.repeat(520)}`, false],
  ];
  for (const [method, url, noted] of cases) {
    await t.test(`${method} ${url.slice(0, 60)}`, async () => {
      const { routes, served } = routesWith();
      assert.equal(routes.noted(incoming(method, url)), undefined);
      await routes.fetch(incoming(method, url));
      const found = routes.noted(incoming(method, url));
      assert.equal(found, noted ? served[0] : undefined);
    });
  }
  const { routes } = routesWith();
  await routes.fetch(incoming('GET', 'http://x/sheets/demo/tabs/People/2'));
  assert.deepEqual(routes.noted(incoming('GET', 'http://x/sheets/demo/tabs/People/2'))?.scope, { tab: 'People' });
  // The same target sent to another host is the same route.
  assert.notEqual(routes.noted(incoming('GET', 'http://other:8080/sheets/demo/tabs/People/2')), undefined);
});

test('pathAndQuery', async (t) => {
  const cases: [string, string][] = [
    ['http://h:1/sheets/a?b', '/sheets/a?b'],
    ['/sheets/a?b', '/sheets/a?b'],
    ['http://h', '/'],
    ['https://h/', '/'],
  ];
  for (const [url, expected] of cases) await t.test(url, () => assert.equal(pathAndQuery(url), expected));
});
