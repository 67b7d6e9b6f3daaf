// The admin token on a connection's own paths (server/admin/sheet-access.ts, docs/api.md "The
// admin token"): `Authorization: Bearer <admin token>` on `/sheets/crm/...` acts as a key with
// every operation and tab, is not counted against the plan, and is never logged; a wrong one is
// the ordinary 401 (no hint), and with the admin API off the header means nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configForFile, type Config } from '../../server/config/config.ts';
import { createLogger } from '../../server/log.ts';
import { RUNTIME, startServer, tempDir, writeXlsx, type TempDir, type TestContext } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const ADMIN = { Authorization: `Bearer ${TOKEN}` };

async function folder(t: TestContext): Promise<TempDir> {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  await writeXlsx(dir.path('crm.xlsx'), 'Leads', [['Lead', 'Stage'], ['Acme', 'new'], ['Globex', 'won']]);
  return dir;
}

function configFor(dir: TempDir, env: Record<string, string> = { SHEETREST_ADMIN_TOKEN: TOKEN }): Config {
  return configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' } }, { env });
}

async function admin(url: string, method: string, path: string, body?: unknown) {
  const response = await fetch(url + path, { method, headers: { ...ADMIN, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

test(`the admin token reads and writes any connection, uncounted, never logged (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const lines: string[] = [];
  const { url } = await startServer(t, configFor(dir), createLogger('info', (line) => lines.push(line)));
  // A closed connection with a plan of 2 requests a month and a rate limit of 1 per minute, and a key that sees nothing but reads.
  const created = await admin(url, 'POST', '/_admin/connections', { id: 'crm', source: { type: 'file', path: dir.path('crm.xlsx') }, plan: { name: 'tiny', monthlyRequests: 2, rateLimit: { requests: 1, perSeconds: 60 } } });
  assert.equal(created.status, 201);

  for (let i = 0; i < 4; i++) {
    const read = await fetch(`${url}/sheets/crm/tabs/Leads?_limit=1`, { headers: ADMIN });
    assert.equal(read.status, 200, `read ${i}`);
    assert.deepEqual(await read.json(), [{ Lead: 'Acme', Stage: 'new' }]);
    // The plan's headers as the count stands: the admin's reads are not counted.
    assert.equal(read.headers.get('x-ratelimit-remaining'), '2');
  }
  const openapi = await fetch(`${url}/sheets/crm/openapi.json`, { headers: ADMIN });
  assert.equal(openapi.status, 200);
  assert.ok(Object.keys((await openapi.json()).paths).length > 0);
  const written = await fetch(`${url}/sheets/crm/tabs/Leads`, { method: 'POST', headers: { ...ADMIN, 'Content-Type': 'application/json' }, body: JSON.stringify({ Lead: 'Initech', Stage: 'new' }) });
  assert.equal(written.status, 201);
  const usage = await admin(url, 'GET', '/_admin/connections/crm/usage');
  assert.equal(usage.body.requests, 0);

  // The connection's own key is still counted (and limited).
  const key = created.body.newKey.key as string;
  assert.equal((await fetch(`${url}/sheets/crm/tabs/Leads`, { headers: { 'X-Api-Key': key } })).status, 200);
  assert.equal((await fetch(`${url}/sheets/crm/tabs/Leads`, { headers: { 'X-Api-Key': key } })).status, 429);
  assert.equal((await admin(url, 'GET', '/_admin/connections/crm/usage')).body.requests, 1);

  // A read-only connection stays read-only for the admin too.
  assert.equal((await admin(url, 'PATCH', '/_admin/connections/crm', { readOnly: true })).status, 200);
  const refused = await fetch(`${url}/sheets/crm/tabs/Leads`, { method: 'POST', headers: { ...ADMIN, 'Content-Type': 'application/json' }, body: '{"Lead": "x"}' });
  assert.equal(refused.status, 403);
  assert.equal((await refused.json()).error, 'write_error');

  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.ok(lines.some((line) => line.includes('/sheets/crm/tabs/Leads')), 'the request lines are logged');
  assert.ok(!lines.some((line) => line.includes(TOKEN)), 'the token is never logged');
});

test(`a wrong admin token on /sheets is the ordinary 401, and counts as a failed sign-in (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const { url } = await startServer(t, configFor(dir));
  await admin(url, 'POST', '/_admin/connections', { id: 'crm', source: { type: 'file', path: dir.path('crm.xlsx') } });
  const none = await fetch(`${url}/sheets/crm/tabs/Leads`);
  const noneBody = await none.json();
  for (const authorization of ['Bearer not-the-admin-token-at-all', `Basic ${TOKEN}`, `Bearer ${TOKEN}x`, 'Bearer']) {
    const wrong = await fetch(`${url}/sheets/crm/tabs/Leads`, { headers: { Authorization: authorization } });
    assert.equal(wrong.status, 401, authorization);
    assert.deepEqual(await wrong.json(), noneBody, `${authorization}: the same answer as no header at all`);
    assert.equal(wrong.headers.get('www-authenticate'), none.headers.get('www-authenticate'));
  }
  // An open connection serves a wrong token as it serves anyone.
  assert.equal((await fetch(`${url}/sheets/book`, { headers: { Authorization: 'Bearer nope-nope-nope-nope' } })).status, 200);
  // Ten wrong tokens in all (3 above, 7 more): the address is locked out of the admin API, and
  // the right token on /sheets means nothing meanwhile (the ordinary 401, no hint).
  for (let i = 0; i < 7; i++) await (await fetch(`${url}/sheets/book`, { headers: { Authorization: `Bearer wrong-${i}-0123456789` } })).body?.cancel();
  const locked = await fetch(`${url}/_admin/connections`, { headers: ADMIN });
  assert.equal(locked.status, 429);
  await locked.body?.cancel();
  const during = await fetch(`${url}/sheets/crm/tabs/Leads`, { headers: ADMIN });
  assert.equal(during.status, 401);
  assert.deepEqual(await during.json(), noneBody);
});

test(`with the admin API off, Authorization on /sheets means nothing (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const config = configFor(dir, {});
  const keyed: Config = { ...config, connections: config.connections.map((connection) => ({ ...connection, keys: [{ digest: new Uint8Array(32), scope: 'read' }] })) } as Config;
  const { url } = await startServer(t, keyed);
  const answer = await fetch(`${url}/sheets/book`, { headers: ADMIN });
  assert.equal(answer.status, 401);
  assert.equal((await answer.json()).error, 'not_authenticated');
});
