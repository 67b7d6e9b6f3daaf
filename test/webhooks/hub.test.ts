// Where the webhooks run (server/webhooks/hub.ts, hub-worker.ts) on every runtime: the engine in a
// worker thread of its own, handed the events of journaled writes and records, delivers each in
// the connection's order, signed; a second hub on the same state folder numbers after the
// first; a worker that cannot start, or that stops mid-run, leaves the engine to the main
// thread, which delivers every event handed over (those the worker had not yet written too).
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import type { ConnectionConfig } from '../../server/config/config.ts';
import { Secret } from '../../server/config/secret.ts';
import { compareEventIds } from '../../server/feed/event-log.ts';
import { createLogger } from '../../server/log.ts';
import { openWebhooks, type WebhookHub } from '../../server/webhooks/hub.ts';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from '../../server/webhooks/webhooks.ts';
import { tempDir } from '../helpers/http.ts';
import { receiver } from '../helpers/webhook-receiver.ts';

const SECRET = 'whsec_hub_test_9a7e';


function verifies(header: string, body: string): boolean {
  const parts = Object.fromEntries(header.split(',').map((part) => part.split('=') as [string, string]));
  return parts.v1 === createHmac('sha256', SECRET).update(`${parts.t}.${body}`).digest('hex');
}

const draft = (n: number) => ({ type: 'rows.created' as const, connection: 'crm', tab: 'T', at: new Date().toISOString(), rows: [{ n: String(n) }], indexes: [n] });

/** `count` writes as a file source makes them (numbered, journaled, answered) and every fifth a record (an outside edit): the ids carried, in order. */
async function write(hub: WebhookHub, from: number, count: number): Promise<string[]> {
  const sink = hub.sinkFor('crm')!;
  const ids: string[] = [];
  for (let n = from; n < from + count; n++) {
    if (n % 5 === 4) {
      await hub.record('crm', [draft(n)]);
      continue;
    }
    const carried = hub.carry('crm', [draft(n)]);
    if (carried === null) {
      // Not carried (the engine moving to the main thread): the write records them, as Feed.wrote does.
      assert.ok(n > 0, 'a connection with webhooks carries its writes\' events');
      await hub.record('crm', [draft(n)]);
      continue;
    }
    ids.push(...carried.events.map((event) => event.id));
    sink.journaled(carried.events);
    carried.settle();
    // A few writes per turn, as under load.
    if (n % 3 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return ids;
}

async function deliveredAll(got: { body: string }[], count: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (new Set(got.map((each) => (JSON.parse(each.body) as { indexes: number[] }).indexes[0])).size < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
}

function checkOrder(got: { id: string; body: string; signature: string }[], count: number): void {
  const first = new Map<string, number>();
  for (const each of got) if (!first.has(each.id)) first.set(each.id, (JSON.parse(each.body) as { indexes: number[] }).indexes[0]);
  assert.deepEqual([...first.values()].sort((a, b) => a - b), Array.from({ length: count }, (_, n) => n), 'every event delivered');
  const ids = [...first.keys()];
  assert.deepEqual(ids, [...ids].sort(compareEventIds), 'first deliveries in id order');
  for (const each of got) assert.ok(verifies(each.signature, each.body), 'signed');
  // Duplicates only with the same id and body.
  const byId = new Map<string, string>();
  for (const each of got) {
    if (byId.has(each.id)) assert.equal(byId.get(each.id), each.body);
    byId.set(each.id, each.body);
  }
}

function capturingLog() {
  const lines: string[] = [];
  return { log: createLogger('debug', (line) => lines.push(line)), lines };
}

async function hubFor(dir: string, url: string, settings: Partial<WebhookSettings>, log = capturingLog().log): Promise<WebhookHub> {
  const connection = { id: 'crm', webhooks: [{ name: 'a', url, secret: new Secret(SECRET) }] } as unknown as ConnectionConfig;
  return openWebhooks(dir, [connection], { ...DEFAULT_WEBHOOK_SETTINGS, allowPrivateTargets: true, retryBaseMs: 20, retryCapMs: 40, ...settings }, log);
}

test('the engine in its worker delivers every write\'s and record\'s event in order, signed; a second hub numbers after the first', async (t) => {
  const target = await receiver(t);
  const dir = await tempDir(t);
  const { log, lines } = capturingLog();
  const first = await hubFor(dir.path('state'), target.url, {}, log);
  let ids: string[];
  try {
    assert.ok(first.carries('crm'));
    ids = await write(first, 0, 60);
    await deliveredAll(target.got, 60);
    assert.deepEqual((await first.deliveries('crm', 'a'))!.filter((each) => each.status === 'delivered').length, 60);
    assert.deepEqual(first.list('crm'), [{ name: 'a', url: target.url, events: null }]);
    await first.sinkFor('crm')!.keep([]);
  } finally {
    await first.close();
  }
  checkOrder(target.got, 60);
  const second = await hubFor(dir.path('state'), target.url, {}, log);
  try {
    const later = await write(second, 60, 10);
    assert.ok(compareEventIds(later[0], ids.at(-1)!) > 0, `${later[0]} after ${ids.at(-1)}`);
    await deliveredAll(target.got, 70);
  } finally {
    await second.close();
  }
  checkOrder(target.got, 70);
  await log.flush();
  assert.ok(!lines.join('').includes(SECRET), 'no log line holds the secret');
  assert.equal(lines.filter((line) => line.includes('webhooks worker')).length, 0, lines.join(''));
});

test('a webhooks worker that cannot start leaves the engine to the main thread: every event delivered in order, said once', async (t) => {
  const target = await receiver(t);
  const dir = await tempDir(t);
  const { log, lines } = capturingLog();
  const hub = await hubFor(dir.path('state'), target.url, { engineWorker: new URL('./fixtures/broken-worker.js', import.meta.url) }, log);
  try {
    await write(hub, 0, 30);
    await deliveredAll(target.got, 30);
  } finally {
    await hub.close();
  }
  checkOrder(target.got, 30);
  await log.flush();
  assert.equal(lines.filter((line) => line.includes('the webhooks worker did not start')).length, 1);
});

test('a webhooks worker that stops mid-run: the main thread takes over, events it had not written included, none lost', async (t) => {
  const target = await receiver(t);
  const dir = await tempDir(t);
  const { log, lines } = capturingLog();
  const hub = await hubFor(dir.path('state'), target.url, { engineWorker: new URL('./fixtures/dying-hub-worker.js', import.meta.url) }, log);
  try {
    await write(hub, 0, 80);
    await deliveredAll(target.got, 80);
    // keep() after the stop is answered by the engine here.
    await hub.sinkFor('crm')!.keep([]);
  } finally {
    await hub.close();
  }
  checkOrder(target.got, 80);
  await log.flush();
  assert.equal(lines.filter((line) => line.includes('the webhooks worker stopped')).length, 1, lines.join(''));
});

test('a webhooks worker that stops when the main thread cannot open the engine either: said once, and every call fails with why', async (t) => {
  const target = await receiver(t);
  const dir = await tempDir(t);
  const { log, lines } = capturingLog();
  const hub = await hubFor(dir.path('state'), target.url, { engineWorker: new URL('./fixtures/dying-hub-worker.js', import.meta.url) }, log);
  // The outboxes' folder becomes a file: the worker goes on with its open outbox, an engine opened now cannot.
  const { rename, writeFile } = await import('node:fs/promises');
  await rename(dir.path('state/webhooks'), dir.path('state/webhooks-moved'));
  await writeFile(dir.path('state/webhooks'), 'not a folder');
  try {
    const sink = hub.sinkFor('crm')!;
    const deadline = Date.now() + 20_000;
    for (let n = 0; !lines.some((line) => line.includes('in the main thread either')) && Date.now() < deadline; n++) {
      const carried = hub.carry('crm', [draft(n)]);
      if (carried !== null) {
        sink.journaled(carried.events);
        carried.settle();
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await assert.rejects(hub.record('crm', [draft(1_000)])!);
    assert.equal(hub.carry('crm', [draft(1_001)]), null, 'nothing is carried for an engine that does not run');
    await assert.rejects(hub.sinkFor('crm')!.keep([]), 'a fold does not let its journal forget events no outbox holds');
  } finally {
    await hub.close();
  }
  await log.flush();
  assert.equal(lines.filter((line) => line.includes('the webhooks worker stopped')).length, 1, lines.join(''));
  assert.equal(lines.filter((line) => line.includes('could not be started in the main thread either')).length, 1, lines.join(''));
});

test('an outbox the worker cannot open for a journal\'s events is logged, and the other connections deliver on', async (t) => {
  const target = await receiver(t);
  const dir = await tempDir(t);
  const { log, lines } = capturingLog();
  const hub = await hubFor(dir.path('state'), target.url, {}, log);
  const { rename, writeFile } = await import('node:fs/promises');
  try {
    await write(hub, 0, 5);
    await deliveredAll(target.got, 5);
    // crm's outbox file is open now; another connection's cannot be opened (its folder is a file).
    await rename(dir.path('state/webhooks'), dir.path('state/webhooks-moved'));
    await writeFile(dir.path('state/webhooks'), 'not a folder');
    hub.sinkFor('other')!.journaled([{ id: '1718000000000-0', type: 'rows.created', connection: 'other', tab: 'T', at: new Date().toISOString(), rows: [], indexes: [0] } as never]);
    await write(hub, 5, 5);
    await deliveredAll(target.got, 10);
  } finally {
    await hub.close();
  }
  checkOrder(target.got, 10);
  await log.flush();
  assert.equal(lines.filter((line) => line.includes('a webhook outbox could not take the events of journaled writes') && line.includes('other')).length, 1, lines.join(''));
});
