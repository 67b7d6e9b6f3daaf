// Webhooks through the admin API over real HTTP, with a receiver on loopback (so
// webhooks.allowPrivateTargets is on): `POST /_admin/connections/crm/webhooks {"url": ...}` ->
// 201 with the secret shown once; the next write to crm reaches the receiver signed with it, and
// `GET .../webhooks/hook-1/deliveries` shows it delivered; `POST .../ping` sends the test event
// and answers the receiver's status; `DELETE` stops deliveries at once. Webhooks persist across
// a restart (admin.json) and in Redis; a private target is refused with 400 when not allowed.
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { test } from 'node:test';
import { configForFile, type Config } from '../../server/config/config.ts';
import { postJson, RUNTIME, startServer, tempDir, writeXlsx, type TempDir, type TestContext } from '../helpers/http.ts';
import { redisOrSkip } from '../helpers/redis.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const FAST = { allowPrivateTargets: true, retryBaseMs: 10, retryCapMs: 100, timeoutMs: 2_000 };

interface Reply {
  readonly status: number;
  // deno-lint-ignore no-explicit-any
  readonly body: any;
}

async function call(base: string, method: string, path: string, body?: unknown): Promise<Reply> {
  const init: RequestInit = { method, headers: { ...AUTH, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) } };
  if (body !== undefined) init.body = JSON.stringify(body);
  const response = await fetch(base + path, init);
  const text = await response.text();
  return { status: response.status, body: text === '' ? null : JSON.parse(text) };
}

/** Polls `done` every 20 ms until it holds; fails after `ms`. */
async function within(ms: number, done: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > end) assert.fail(`not done within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

interface Delivered {
  readonly id: string;
  readonly type: string;
  readonly signature: string;
  readonly body: string;
}

/** A receiver on loopback keeping every delivery; `answer` is the status it gives (204 unless changed). */
async function receiver(t: TestContext) {
  const got: Delivered[] = [];
  const state = { answer: 204 };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      got.push({ id: String(request.headers['sheetrest-event-id']), type: JSON.parse(body).type, signature: String(request.headers['sheetrest-signature']), body });
      response.writeHead(state.answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, got, state };
}

function verifies(delivered: Delivered, secret: string): boolean {
  const { t, v1 } = Object.fromEntries(delivered.signature.split(',').map((part) => part.split('='))) as { t: string; v1: string };
  const expected = Buffer.from(createHmac('sha256', secret).update(`${t}.${delivered.body}`).digest('hex'));
  const given = Buffer.from(v1 ?? '');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

async function folder(t: TestContext): Promise<TempDir> {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  await writeXlsx(dir.path('crm.xlsx'), 'Leads', [['Lead', 'Stage'], ['Acme', 'new']]);
  return dir;
}

function configFor(dir: TempDir, extra: Record<string, unknown> = {}, state = 'state'): Config {
  return configForFile(dir.path('book.xlsx'), { stateDir: dir.path(state), log: { level: 'silent' }, webhooks: FAST, ...extra } as never, { env: { SHEETREST_ADMIN_TOKEN: TOKEN } });
}

/** An open admin connection crm, so writes need no key. */
async function createCrm(url: string, dir: TempDir): Promise<void> {
  const made = await call(url, 'POST', '/_admin/connections', { id: 'crm', source: { type: 'file', path: dir.path('crm.xlsx') }, open: true });
  assert.equal(made.status, 201, JSON.stringify(made.body));
}

async function write(url: string, lead: string): Promise<void> {
  const response = await postJson(`${url}/sheets/crm`, { Lead: lead, Stage: 'new' });
  assert.equal(response.status, 201);
  await response.body?.cancel();
}

test(`webhooks through the admin API: made with the secret shown once, delivered, listed, pinged, deleted (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const hook = await receiver(t);
  const { url } = await startServer(t, configFor(dir));
  await createCrm(url, dir);

  const made = await call(url, 'POST', '/_admin/connections/crm/webhooks', { url: hook.url });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.equal(made.body.name, 'hook-1');
  assert.equal(made.body.events, null);
  assert.equal(made.body.origin, 'admin');
  assert.match(made.body.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
  const secret = made.body.secret as string;

  const listed = await call(url, 'GET', '/_admin/connections/crm/webhooks');
  assert.equal(listed.status, 200);
  assert.deepEqual(listed.body.map((each: { name: string }) => each.name), ['hook-1']);
  assert.ok(!JSON.stringify(listed.body).includes(secret), 'the secret is shown once, never listed');
  assert.deepEqual(listed.body[0].links, { deliveries: '/_admin/connections/crm/webhooks/hook-1/deliveries', ping: '/_admin/connections/crm/webhooks/hook-1/ping' });

  await write(url, 'Initech');
  await within(10_000, () => hook.got.length >= 1);
  assert.equal(hook.got[0].type, 'rows.created');
  assert.ok(verifies(hook.got[0], secret), 'signed with the secret shown at creation');
  let deliveries: Reply = { status: 0, body: null };
  await within(5_000, async () => {
    deliveries = await call(url, 'GET', '/_admin/connections/crm/webhooks/hook-1/deliveries');
    return deliveries.body?.[0]?.status === 'delivered';
  });
  assert.equal(deliveries.status, 200);
  assert.deepEqual({ ...deliveries.body[0] }, { eventId: hook.got[0].id, type: 'rows.created', status: 'delivered', attempts: 1, lastStatus: 204, nextTry: null });

  await t.test('a given secret and an events filter', async () => {
    const given = await call(url, 'POST', '/_admin/connections/crm/webhooks', { url: hook.url, name: 'deletes', events: ['rows.deleted'], secret: 'a-secret-of-my-own-0123' });
    assert.equal(given.status, 201, JSON.stringify(given.body));
    assert.equal(given.body.secret, 'a-secret-of-my-own-0123');
    assert.deepEqual(given.body.events, ['rows.deleted']);
    const before = hook.got.length;
    await write(url, 'Hooli');
    await within(10_000, () => hook.got.length >= before + 1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(hook.got.length, before + 1, 'a rows.created event goes to hook-1 only');
    assert.ok(verifies(hook.got.at(-1)!, secret));
  });

  await t.test('ping: the test event, answered with the receiver\'s status', async () => {
    const ping = await call(url, 'POST', '/_admin/connections/crm/webhooks/deletes/ping');
    assert.equal(ping.status, 200, JSON.stringify(ping.body));
    assert.equal(ping.body.status, 204);
    assert.match(ping.body.eventId, /^ping-/);
    const sent = hook.got.find((each) => each.id === ping.body.eventId)!;
    assert.equal(sent.type, 'ping');
    assert.ok(verifies(sent, 'a-secret-of-my-own-0123'));
    hook.state.answer = 503;
    const failing = await call(url, 'POST', '/_admin/connections/crm/webhooks/deletes/ping');
    assert.equal(failing.status, 200);
    assert.equal(failing.body.status, 503);
    hook.state.answer = 204;
  });

  await t.test('bad requests', async () => {
    const bad = async (method: string, path: string, body: unknown, status: number, code: string, message: RegExp) => {
      const reply = await call(url, method, path, body);
      assert.equal(reply.status, status, JSON.stringify(reply.body));
      assert.equal(reply.body.error, code);
      assert.match(reply.body.message, message);
    };
    await bad('POST', '/_admin/connections/crm/webhooks', { url: hook.url, name: 'hook-1' }, 409, 'conflict', /has a webhook "hook-1" already/);
    await bad('POST', '/_admin/connections/crm/webhooks', { url: 'ftp://x/y' }, 400, 'invalid_body', /url: expected an http:\/\/ or https:\/\/ URL/);
    await bad('POST', '/_admin/connections/crm/webhooks', { url: hook.url, event: ['rows.created'] }, 400, 'invalid_body', /event/);
    await bad('POST', '/_admin/connections/crm/webhooks', { url: hook.url, events: ['row.created'] }, 400, 'invalid_body', /events\[0\]: expected "rows\.created"/);
    await bad('POST', '/_admin/connections/crm/webhooks', { url: hook.url, secret: 'short' }, 400, 'invalid_body', /secret: expected a secret of 16 to 256 characters/);
    await bad('POST', '/_admin/connections/nope/webhooks', { url: hook.url }, 404, 'not_found', /no connection "nope"/);
    await bad('POST', '/_admin/connections/book/webhooks', { url: hook.url }, 403, 'permission_denied', /config file/);
    await bad('GET', '/_admin/connections/crm/webhooks/nope/deliveries', undefined, 404, 'not_found', /no webhook "nope"/);
    await bad('POST', '/_admin/connections/crm/webhooks/nope/ping', undefined, 404, 'not_found', /no webhook "nope"/);
    await bad('DELETE', '/_admin/connections/crm/webhooks/nope', undefined, 404, 'not_found', /no webhook "nope"/);
  });

  await t.test('DELETE stops deliveries at once', async () => {
    assert.equal((await call(url, 'DELETE', '/_admin/connections/crm/webhooks/hook-1')).status, 204);
    assert.equal((await call(url, 'DELETE', '/_admin/connections/crm/webhooks/deletes')).status, 204);
    assert.deepEqual((await call(url, 'GET', '/_admin/connections/crm/webhooks')).body, []);
    const before = hook.got.length;
    await write(url, 'Umbrella');
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.equal(hook.got.length, before, 'no delivery after the webhook was deleted');
  });
});

test(`a private target is refused with 400 naming why, unless allowed (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const { url } = await startServer(t, configFor(dir, { webhooks: { ...FAST, allowPrivateTargets: false } }));
  await createCrm(url, dir);
  const reply = await call(url, 'POST', '/_admin/connections/crm/webhooks', { url: 'http://127.0.0.1:9/hook' });
  assert.equal(reply.status, 400);
  assert.equal(reply.body.error, 'invalid_body');
  assert.match(reply.body.message, /url: refused: its host 127\.0\.0\.1 is a loopback address \(set "webhooks": \{"allowPrivateTargets": true\} to allow it\)/);
  assert.deepEqual((await call(url, 'GET', '/_admin/connections/crm/webhooks')).body, []);
});

test(`a webhook made with the admin API survives a restart, and events written before it are delivered after (${RUNTIME})`, async (t) => {
  const dir = await folder(t);
  const hook = await receiver(t);
  const first = await startServer(t, configFor(dir));
  await createCrm(first.url, dir);
  const made = (await call(first.url, 'POST', '/_admin/connections/crm/webhooks', { url: hook.url, name: 'kept' })).body;
  hook.state.answer = 500;
  await write(first.url, 'Initech');
  await within(10_000, () => hook.got.length >= 1);
  await first.close();
  const stored = await readFile(dir.path('state/admin.json'), 'utf8');
  assert.ok(stored.includes('"kept"'), 'admin.json keeps the webhook');

  hook.state.answer = 204;
  const second = await startServer(t, configFor(dir));
  const listed = (await call(second.url, 'GET', '/_admin/connections/crm/webhooks')).body;
  assert.deepEqual(listed.map((each: { name: string; url: string }) => [each.name, each.url]), [['kept', hook.url]]);
  const failedId = hook.got[0].id;
  await within(10_000, async () => {
    const deliveries = (await call(second.url, 'GET', '/_admin/connections/crm/webhooks/kept/deliveries')).body;
    return deliveries[0]?.status === 'delivered';
  });
  const last = hook.got.at(-1)!;
  assert.equal(last.id, failedId, 'the event the receiver refused before the restart is delivered after it');
  assert.ok(verifies(last, made.secret));
});

test(`with Redis as the store, webhooks are kept there: another instance lists and delivers them (${RUNTIME})`, async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const dir = await folder(t);
  const hook = await receiver(t);
  const store = { store: { type: 'redis', url: redis.url } };
  const first = await startServer(t, configFor(dir, store, 'state-a'));
  await createCrm(first.url, dir);
  const made = (await call(first.url, 'POST', '/_admin/connections/crm/webhooks', { url: hook.url, name: 'shared' })).body;
  assert.match(made.secret, /^whsec_/);
  await first.close();

  // Another state folder: nothing of the first instance's but Redis.
  const second = await startServer(t, configFor(dir, store, 'state-b'));
  const listed = (await call(second.url, 'GET', '/_admin/connections/crm/webhooks')).body;
  assert.deepEqual(listed.map((each: { name: string }) => each.name), ['shared']);
  await write(second.url, 'Initech');
  await within(10_000, () => hook.got.length >= 1);
  assert.ok(verifies(hook.got[0], made.secret));
  assert.equal((await call(second.url, 'DELETE', '/_admin/connections/crm/webhooks/shared')).status, 204);
  assert.deepEqual((await call(second.url, 'GET', '/_admin/connections/crm/webhooks')).body, []);
});
