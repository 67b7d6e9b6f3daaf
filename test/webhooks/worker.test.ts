// The delivery worker (server/webhooks/poster.ts, delivery-worker.ts) on every runtime: the POSTs
// asked for in one turn go to the worker in one message and come back signed as node:crypto
// verifies; a worker that cannot start, or that stops, leaves the POSTs to the main thread (logged
// once); and a secret is never in an answer's error, a delivery's lastError or a log line.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { Secret } from '../../server/config/secret.ts';
import { createLogger } from '../../server/log.ts';
import { openPoster } from '../../server/webhooks/poster.ts';
import { DEFAULT_WEBHOOK_SETTINGS, Webhooks } from '../../server/webhooks/webhooks.ts';
import { tempDir } from '../helpers/http.ts';
import { receiver } from '../helpers/webhook-receiver.ts';

const SECRET = 'whsec_never_to_be_seen_4c1d';


/** A port nothing listens on (a refused connection). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function verifies(header: string, body: string, secret: string): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=') as [string, string]));
  return parts.v1 === createHmac('sha256', secret).update(`${parts.t}.${body}`).digest('hex');
}

function capturingLog() {
  const lines: string[] = [];
  return { log: createLogger('debug', (line) => lines.push(line)), lines };
}

const delivery = (url: string, n: number) => ({ url, secret: SECRET, eventId: `1718000000000-${n}`, body: JSON.stringify({ id: `1718000000000-${n}`, n }) });

test('the POSTs asked for in one turn go to the worker in one message, signed, and each gets its own answer', async (t) => {
  const target = await receiver(t);
  const { log, lines } = capturingLog();
  const poster = openPoster({ timeoutMs: 5_000, connections: 8, log });
  const stop = new AbortController().signal;
  const first = await Promise.all(Array.from({ length: 20 }, (_, n) => poster.post(delivery(target.url, n), stop)));
  assert.deepEqual(first, Array.from({ length: 20 }, () => ({ status: 204 })));
  assert.equal(poster.where, 'worker');
  assert.equal(poster.batches, 1, 'twenty POSTs in one turn: one message');
  const second = await Promise.all(Array.from({ length: 5 }, (_, n) => poster.post(delivery(target.url, 20 + n), stop)));
  assert.deepEqual(second.map((answer) => answer.status), [204, 204, 204, 204, 204]);
  assert.equal(poster.batches, 2);
  assert.deepEqual(target.got.map((each) => each.id).sort(), Array.from({ length: 25 }, (_, n) => `1718000000000-${n}`).sort());
  for (const each of target.got) assert.ok(verifies(each.signature, each.body, SECRET), `${each.id} is signed with the secret`);
  await poster.close();
  await log.flush();
  assert.deepEqual(lines, [], 'nothing logged while the worker works');
});

test('a POST aborted while in the worker answers at once; the poster closed answers the rest', async (t) => {
  // A receiver that never answers.
  const server = createServer(() => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
  const { log } = capturingLog();
  const poster = openPoster({ timeoutMs: 30_000, connections: 8, log });
  const stop = new AbortController();
  const aborted = poster.post(delivery(url, 1), stop.signal);
  const open = poster.post(delivery(url, 2), new AbortController().signal);
  await new Promise((resolve) => setTimeout(resolve, 200));
  stop.abort();
  assert.equal((await aborted).status, 0);
  await poster.close();
  assert.deepEqual(await open, { status: 0, error: 'stopped' });
});

test('a worker that cannot start: POSTs are made in the main thread, logged once', async (t) => {
  const target = await receiver(t);
  const { log, lines } = capturingLog();
  const poster = openPoster({ timeoutMs: 5_000, connections: 8, log, workerModule: new URL('./fixtures/broken-worker.js', import.meta.url) });
  const stop = new AbortController().signal;
  assert.deepEqual(await Promise.all([1, 2, 3].map((n) => poster.post(delivery(target.url, n), stop))), [{ status: 204 }, { status: 204 }, { status: 204 }]);
  assert.equal(poster.where, 'main thread');
  assert.deepEqual((await poster.post(delivery(target.url, 4), stop)).status, 204);
  assert.equal(target.got.length, 4);
  for (const each of target.got) assert.ok(verifies(each.signature, each.body, SECRET));
  await poster.close();
  await log.flush();
  assert.equal(lines.length, 1, `one line: ${lines.join('')}`);
  assert.match(lines[0], /the webhook delivery worker did not start: webhooks are sent from the main thread/);
  assert.ok(!lines[0].includes(SECRET));
});

test('a worker that stops: its POSTs answer 0 (to be tried again), later ones go from the main thread, logged once', async (t) => {
  const target = await receiver(t);
  const { log, lines } = capturingLog();
  const poster = openPoster({ timeoutMs: 5_000, connections: 8, log, workerModule: new URL('./fixtures/dying-worker.js', import.meta.url) });
  const stop = new AbortController().signal;
  assert.deepEqual(await poster.post(delivery(target.url, 1), stop), { status: 0, error: 'the delivery worker stopped' });
  assert.equal(poster.where, 'main thread');
  assert.deepEqual(await poster.post(delivery(target.url, 2), stop), { status: 204 });
  await poster.close();
  await log.flush();
  assert.equal(lines.length, 1, `one line: ${lines.join('')}`);
  assert.match(lines[0], /the webhook delivery worker stopped: webhooks are sent from the main thread from now on/);
  assert.ok(!lines[0].includes(SECRET));
});

test('a secret is never in an answer\'s error, a delivery\'s lastError or a log line', async (t) => {
  const refused = `http://127.0.0.1:${await closedPort()}/hook`;
  const failing = await receiver(t, 500);
  const dir = await tempDir(t);
  const { log, lines } = capturingLog();
  const poster = openPoster({ timeoutMs: 5_000, connections: 8, log });
  const answer = await poster.post(delivery(refused, 1), new AbortController().signal);
  assert.equal(answer.status, 0);
  assert.ok(answer.error !== undefined && !answer.error.includes(SECRET), answer.error);
  await poster.close();
  const connection = { id: 'crm', webhooks: [{ name: 'refused', url: refused, secret: new Secret(SECRET) }, { name: 'failing', url: failing.url, secret: new Secret(SECRET) }] } as never;
  const webhooks = await Webhooks.open(dir.path('state'), [connection], { ...DEFAULT_WEBHOOK_SETTINGS, allowPrivateTargets: true, retryBaseMs: 20, retryCapMs: 40 }, log);
  await webhooks.record('crm', [{ type: 'rows.created', connection: 'crm', tab: 'T', at: new Date().toISOString(), rows: [], indexes: [0] }]);
  const deadline = Date.now() + 20_000;
  while (((webhooks.deliveries('crm', 'refused')?.[0]?.attempts ?? 0) < 2 || failing.got.length < 2) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  const [onRefused] = webhooks.deliveries('crm', 'refused')!;
  const [onFailing] = webhooks.deliveries('crm', 'failing')!;
  assert.ok(onRefused.attempts >= 2 && onRefused.lastStatus === 0 && onRefused.lastError !== undefined, JSON.stringify(onRefused));
  assert.equal(onFailing.lastStatus, 500);
  assert.ok(!JSON.stringify([onRefused, onFailing]).includes(SECRET));
  const ping = await webhooks.ping('crm', 'refused');
  assert.ok(ping !== undefined && ping.status === 0 && !JSON.stringify(ping).includes(SECRET));
  await webhooks.close();
  await log.flush();
  assert.ok(!lines.join('').includes(SECRET), 'no log line holds the secret');
});

test('receivers that never answer hold up no write: every record resolves while their POSTs hang', async (t) => {
  let open = 0;
  const urls: string[] = [];
  for (let n = 0; n < 3; n++) {
    const server = createServer(() => void open++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }));
    urls.push(`http://127.0.0.1:${(server.address() as { port: number }).port}/hook`);
  }
  const dir = await tempDir(t);
  const connection = { id: 'crm', webhooks: urls.map((url, n) => ({ name: `hook-${n}`, url, secret: new Secret(SECRET) })) } as never;
  const webhooks = await Webhooks.open(dir.path('state'), [connection], { ...DEFAULT_WEBHOOK_SETTINGS, allowPrivateTargets: true, timeoutMs: 60_000 }, capturingLog().log);
  try {
    const draft = (n: number) => ({ type: 'rows.created' as const, connection: 'crm', tab: 'T', at: new Date().toISOString(), rows: [], indexes: [n] });
    await webhooks.record('crm', [draft(0)]);
    const deadline = Date.now() + 10_000;
    while (open < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(open, 3, 'each webhook has a POST hanging');
    for (let n = 1; n <= 100; n++) await webhooks.record('crm', [draft(n)]);
    assert.equal(open, 3, 'nothing more was sent: each webhook waits on its first event');
    assert.deepEqual(webhooks.deliveries('crm', 'hook-0')!.map((each) => each.status), ['pending']);
  } finally {
    await webhooks.close();
  }
});

test('webhooks whose worker cannot start still deliver every event, in order, from the main thread', async (t) => {
  const target = await receiver(t);
  const dir = await tempDir(t);
  const { log, lines } = capturingLog();
  const connection = { id: 'crm', webhooks: [{ name: 'a', url: target.url, secret: new Secret(SECRET) }] } as never;
  const settings = { ...DEFAULT_WEBHOOK_SETTINGS, allowPrivateTargets: true, deliveryWorker: new URL('./fixtures/broken-worker.js', import.meta.url) };
  const webhooks = await Webhooks.open(dir.path('state'), [connection], settings, log);
  try {
    const draft = (n: number) => ({ type: 'rows.created' as const, connection: 'crm', tab: 'T', at: new Date().toISOString(), rows: [], indexes: [n] });
    for (let n = 0; n < 20; n++) await webhooks.record('crm', [draft(n)]);
    const deadline = Date.now() + 20_000;
    while (target.got.length < 20 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepEqual(target.got.map((each) => (JSON.parse(each.body) as { indexes: number[] }).indexes[0]), Array.from({ length: 20 }, (_, n) => n));
  } finally {
    await webhooks.close();
  }
  await log.flush();
  assert.equal(lines.filter((line) => line.includes('the webhook delivery worker did not start')).length, 1);
});
