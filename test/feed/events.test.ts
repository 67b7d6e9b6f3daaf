// The change feed over real HTTP on this runtime's listener: `GET /sheets/crm/events` streams
// each acknowledged write as one event; a client away for 200 writes resumes with Last-Event-ID
// and gets exactly those, in order; an id no longer kept gets `reset`; a key limited to tabs
// sees only its tabs' events; comments keep an idle stream; a refused write emits nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createApp } from '../../server/http/app.ts';
import { digestKey } from '../../server/auth.ts';
import { MemoryEventLog } from '../../server/feed/event-log.ts';
import { Feed } from '../../server/feed/feed.ts';
import { createLogger } from '../../server/log.ts';
import { memorySource } from '../../server/sources/memory.ts';
import type { SheetRow, Tab } from '../../lib/workbook.ts';
import { defer, postJson, runtimeListen, RUNTIME, type TestContext } from '../helpers/http.ts';
import { openEvents } from '../helpers/event-stream.ts';

function row(...cells: string[]): SheetRow {
  return { text: cells, value: cells.map((cell) => (cell === '' ? null : cell)) };
}

function tab(name: string, ...rows: string[][]): Tab {
  return { name, rows: rows.map((cells) => row(...cells)) };
}

const log = createLogger('silent');

/** A real listener over a memory source with tabs Orders and People, keys `all` and `orders` (Orders only, read). */
async function serve(t: TestContext, options: { heartbeatMs?: number; retention?: { maxEvents: number; maxAgeMs: number } } = {}): Promise<{ url: string; feed: Feed }> {
  const source = memorySource({ tabs: [tab('Orders', ['Item', 'Qty'], ['pen', '1']), tab('People', ['Name'], ['Ann'])] });
  const feed = new Feed(new MemoryEventLog(options.retention), log, { watchEveryMs: 60_000 });
  const app = createApp({
    connections: [{ id: 'crm', source, keys: [{ digest: digestKey('all') }, { digest: digestKey('orders'), scope: 'read', tabs: ['Orders'] }], readOnly: false, engine: {} }],
    quota: { take: () => ({ allowed: true, headers: {} }), peek: () => ({}) },
    bodyBytes: 1024 * 1024,
    cors: '*',
    log,
    feed,
    ...(options.heartbeatMs === undefined ? {} : { eventsHeartbeatMs: options.heartbeatMs }),
  });
  const listener = await (await runtimeListen())(app, { host: '127.0.0.1', port: 0 });
  defer(t, async () => {
    await feed.close();
    await listener.close();
  });
  return { url: `http://127.0.0.1:${listener.port}`, feed };
}

const ALL = { 'X-Api-Key': 'all' };

function post(url: string, body: unknown, init: { headers: Record<string, string> }): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { ...init.headers, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

test(`the change feed as server-sent events (${RUNTIME})`, async (t) => {
  await t.test('a write is one event with its rows and indexes; the stream is no-store event-stream', async (t) => {
    const { url } = await serve(t);
    const stream = await openEvents(`${url}/sheets/crm/events`, ALL);
    defer(t, () => stream.close());
    assert.equal(stream.response.status, 200);
    assert.equal(stream.response.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(stream.response.headers.get('cache-control'), 'no-store');
    assert.equal((await post(`${url}/sheets/crm/tabs/Orders`, [{ Item: 'ink', Qty: 2 }], { headers: ALL })).status, 201);
    const patched = await fetch(`${url}/sheets/crm/tabs/Orders/Item/pen`, { method: 'PATCH', headers: { ...ALL, 'Content-Type': 'application/json' }, body: '{"Qty":5}' });
    assert.equal(patched.status, 200);
    assert.equal((await fetch(`${url}/sheets/crm/tabs/Orders/Item/ink`, { method: 'DELETE', headers: ALL })).status, 200);
    const [created, updated, deleted] = await stream.next(3);
    assert.equal(created.event, 'rows.created');
    assert.deepEqual({ ...created.data, at: undefined }, { id: created.id, type: 'rows.created', connection: 'crm', tab: 'Orders', at: undefined, rows: [{ Item: 'ink', Qty: '2' }], indexes: [1] });
    assert.match(String(created.data.at), /^\d{4}-\d\d-\d\dT/);
    assert.deepEqual([updated.event, updated.data.rows, updated.data.indexes], ['rows.updated', [{ Item: 'pen', Qty: '5' }], [0]]);
    assert.deepEqual([deleted.event, deleted.data.rows, deleted.data.indexes], ['rows.deleted', [{ Item: 'ink', Qty: '2' }], [1]]);
    assert.ok(compare(created.id!, updated.id!) < 0 && compare(updated.id!, deleted.id!) < 0, `${created.id} ${updated.id} ${deleted.id}`);
  });

  await t.test('a refused write (bad JSON, If-Match failing) or one changing nothing emits nothing; the next one does', async (t) => {
    const { url } = await serve(t);
    const stream = await openEvents(`${url}/sheets/crm/events`, ALL);
    defer(t, () => stream.close());
    assert.equal((await fetch(`${url}/sheets/crm/tabs/Orders`, { method: 'POST', headers: { ...ALL, 'Content-Type': 'application/json' }, body: '[{' })).status, 400);
    assert.equal((await fetch(`${url}/sheets/crm/tabs/Orders/Item/pen`, { method: 'PATCH', headers: { ...ALL, 'Content-Type': 'application/json', 'If-Match': '"nope"' }, body: '{"Qty":3}' })).status, 412);
    assert.equal((await fetch(`${url}/sheets/crm/tabs/Orders/Item/nothing`, { method: 'DELETE', headers: ALL })).status, 200);
    assert.equal((await post(`${url}/sheets/crm/tabs/People`, [{ Name: 'Bo' }], { headers: ALL })).status, 201);
    const [only] = await stream.next(1);
    assert.deepEqual([only.event, only.data.tab, only.data.rows], ['rows.created', 'People', [{ Name: 'Bo' }]]);
  });

  await t.test('an upsert that updates and appends emits rows.updated, then rows.created', async (t) => {
    const { url } = await serve(t);
    const stream = await openEvents(`${url}/sheets/crm/tabs/Orders/events`, ALL);
    defer(t, () => stream.close());
    const answer = await post(`${url}/sheets/crm/tabs/Orders?_upsert=Item`, [{ Item: 'pen', Qty: 9 }, { Item: 'cap', Qty: 1 }], { headers: ALL });
    assert.ok(answer.status < 300, String(answer.status));
    const events = await stream.next(2);
    assert.deepEqual(events.map((event) => [event.event, event.data.rows, event.data.indexes]), [
      ['rows.updated', [{ Item: 'pen', Qty: '9' }], [0]],
      ['rows.created', [{ Item: 'cap', Qty: '1' }], [1]],
    ]);
  });

  await t.test('a client away for 200 writes resumes with Last-Event-ID and gets exactly those, in order', async (t) => {
    const { url } = await serve(t);
    const first = await openEvents(`${url}/sheets/crm/events`, ALL);
    assert.equal((await post(`${url}/sheets/crm/tabs/People`, [{ Name: 'seen' }], { headers: ALL })).status, 201);
    const [seen] = await first.next(1);
    first.close();
    for (let i = 0; i < 200; i++) assert.equal((await post(`${url}/sheets/crm/tabs/People`, [{ Name: `p${i}` }], { headers: ALL })).status, 201);
    const again = await openEvents(`${url}/sheets/crm/events`, { ...ALL, 'Last-Event-ID': seen.id! });
    defer(t, () => again.close());
    const missed = await again.next(200);
    assert.deepEqual(missed.map((event) => (event.data.rows as { Name: string }[])[0].Name), Array.from({ length: 200 }, (_, i) => `p${i}`));
    assert.deepEqual(missed.map((event) => event.data.indexes), Array.from({ length: 200 }, (_, i) => [i + 2]));
    const ids = [seen.id!, ...missed.map((event) => event.id!)];
    for (let i = 1; i < ids.length; i++) assert.ok(compare(ids[i - 1], ids[i]) < 0, `${ids[i - 1]} before ${ids[i]}`);
    // Nothing more than the missed ones: the next event is the next write.
    assert.equal((await post(`${url}/sheets/crm/tabs/People`, [{ Name: 'live' }], { headers: ALL })).status, 201);
    const [live] = await again.next(1);
    assert.deepEqual(live.data.rows, [{ Name: 'live' }]);
    assert.equal(again.pending.length, 0);
    // ?lastEventId= does the same for a first connection (EventSource cannot send the header then).
    const byQuery = await openEvents(`${url}/sheets/crm/events?lastEventId=${encodeURIComponent(missed[197].id!)}`, ALL);
    defer(t, () => byQuery.close());
    assert.deepEqual((await byQuery.next(3)).map((event) => event.id), [missed[198].id, missed[199].id, live.id]);
  });

  await t.test('streams of one view share its events: each joining while writes go on gets every later event once, in order', async (t) => {
    const { url } = await serve(t);
    const names = (events: { data: Record<string, unknown> }[]) => events.map((event) => (event.data.rows as { Name?: string; Item?: string }[])[0].Name ?? (event.data.rows as { Item: string }[])[0].Item);
    /** Events until the one whose row is named `last`, included. */
    const until = async (stream: Awaited<ReturnType<typeof openEvents>>, last: string) => {
      const got: { id: string | undefined; data: Record<string, unknown> }[] = [];
      while (names(got).at(-1) !== last) got.push(...(await stream.next(1)));
      return got;
    };
    const first = await openEvents(`${url}/sheets/crm/events`, ALL);
    const ordersOnly = await openEvents(`${url}/sheets/crm/events`, { 'X-Api-Key': 'orders' });
    defer(t, () => [first, ordersOnly].forEach((stream) => stream.close()));
    const joined: { at: number; stream: Awaited<ReturnType<typeof openEvents>> }[] = [];
    let resumed: Awaited<ReturnType<typeof openEvents>> | null = null;
    let resumeAfter = '';
    for (let i = 0; i < 60; i++) {
      assert.equal((await post(`${url}/sheets/crm/tabs/People`, [{ Name: `w${i}` }], { headers: ALL })).status, 201);
      if (i === 10 || i === 25) joined.push({ at: i + 1, stream: await openEvents(`${url}/sheets/crm/events`, ALL) });
      if (i === 40) {
        resumeAfter = (await first.next(20))[19].id!;
        resumed = await openEvents(`${url}/sheets/crm/events`, { ...ALL, 'Last-Event-ID': resumeAfter });
      }
    }
    defer(t, () => [...joined.map((each) => each.stream), resumed!].forEach((stream) => stream.close()));
    assert.equal((await post(`${url}/sheets/crm/tabs/People`, [{ Name: 'end' }], { headers: ALL })).status, 201);
    assert.equal((await post(`${url}/sheets/crm/tabs/Orders`, [{ Item: 'cap', Qty: 1 }], { headers: ALL })).status, 201);
    const all = Array.from({ length: 60 }, (_, i) => `w${i}`).concat('end');
    assert.deepEqual(names(await until(first, 'end')), all.slice(20), 'the first stream: every event once, in order');
    for (const { at, stream } of joined) {
      const got = names(await until(stream, 'end'));
      const from = all.indexOf(got[0]);
      assert.ok(from >= at - 1 && from <= at, `a stream opened after ${at} writes starts at ${got[0]}`);
      assert.deepEqual(got, all.slice(from), 'then every event once, in order');
    }
    assert.deepEqual(names(await until(resumed!, 'end')), all.slice(20), 'a resumed stream: exactly the events after its id, then the live ones');
    assert.deepEqual(names(await ordersOnly.next(1)), ['cap'], 'a key limited to Orders saw none of the People writes');
  });

  await t.test('an id past the retention, or never given, gets reset carrying the newest id', async (t) => {
    const { url } = await serve(t, { retention: { maxEvents: 5, maxAgeMs: 60_000 } });
    const first = await openEvents(`${url}/sheets/crm/events`, ALL);
    for (let i = 0; i < 8; i++) assert.equal((await post(`${url}/sheets/crm/tabs/People`, [{ Name: `p${i}` }], { headers: ALL })).status, 201);
    const events = await first.next(8);
    first.close();
    for (const from of [events[0].id!, '1-0', 'not-an-id']) {
      const late = await openEvents(`${url}/sheets/crm/events`, { ...ALL, 'Last-Event-ID': from });
      const [reset] = await late.next(1);
      late.close();
      assert.equal(reset.event, 'reset', from);
      assert.equal(reset.id, events[7].id);
      assert.equal(reset.data.latest, events[7].id);
    }
    // The oldest id still kept (the 4th of 8, the last 5 being kept) resumes without a reset.
    const kept = await openEvents(`${url}/sheets/crm/events`, { ...ALL, 'Last-Event-ID': events[3].id! });
    defer(t, () => kept.close());
    assert.deepEqual((await kept.next(4)).map((event) => event.id), events.slice(4).map((event) => event.id));
  });

  await t.test('a key limited to a tab sees only its events; without read, no stream', async (t) => {
    const { url } = await serve(t);
    const orders = await openEvents(`${url}/sheets/crm/events`, { 'X-Api-Key': 'orders' });
    defer(t, () => orders.close());
    assert.equal(orders.response.status, 200);
    assert.equal((await post(`${url}/sheets/crm/tabs/People`, [{ Name: 'hidden' }], { headers: ALL })).status, 201);
    assert.equal((await post(`${url}/sheets/crm/tabs/Orders`, [{ Item: 'shown' }], { headers: ALL })).status, 201);
    const [only] = await orders.next(1);
    assert.deepEqual([only.data.tab, only.data.rows], ['Orders', [{ Item: 'shown', Qty: '' }]]);
    // Its tab's own stream works; another tab's is 404 as the tab is for it.
    const people = await fetch(`${url}/sheets/crm/tabs/People/events`, { headers: { 'X-Api-Key': 'orders' } });
    assert.equal(people.status, 404);
    assert.equal(((await people.json()) as { error: string }).error, 'tab_not_found');
    const noKey = await fetch(`${url}/sheets/crm/events`);
    assert.equal(noKey.status, 401);
    await noKey.arrayBuffer();
  });

  await t.test('bad requests: an unknown parameter is 400 naming it; POST is 405', async (t) => {
    const { url } = await serve(t);
    const typo = await fetch(`${url}/sheets/crm/events?lastEventID=1-0`, { headers: ALL });
    assert.equal(typo.status, 400);
    assert.match(((await typo.json()) as { message: string }).message, /lastEventID.*lastEventId.*a cache-buster named _, as _=1700000000/);
    const posted = await fetch(`${url}/sheets/crm/events`, { method: 'POST', headers: ALL, body: '{}' });
    assert.equal(posted.status, 405);
    assert.equal(posted.headers.get('allow'), 'GET, HEAD');
    await posted.arrayBuffer();
  });

  await t.test('an idle stream gets a comment line every heartbeat', async (t) => {
    const { url } = await serve(t, { heartbeatMs: 50 });
    const stream = await openEvents(`${url}/sheets/crm/events`, ALL);
    defer(t, () => stream.close());
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.ok(stream.comments.filter((comment) => comment === 'keep-alive').length >= 3, JSON.stringify(stream.comments));
  });

  await t.test('a client that hangs up frees its subscription', async (t) => {
    const { url, feed } = await serve(t);
    let listening = 0;
    const listen = feed.listen.bind(feed);
    feed.listen = async (connection, listener, ended) => {
      listening++;
      const stop = await listen(connection, listener, ended);
      return () => {
        listening--;
        stop();
      };
    };
    const stream = await openEvents(`${url}/sheets/crm/events`, ALL);
    assert.equal(listening, 1);
    stream.close();
    const deadline = Date.now() + 5000;
    // The hang-up is noticed at the next write to the socket at the latest: a write's event.
    while (listening > 0 && Date.now() < deadline) {
      await post(`${url}/sheets/crm/tabs/People`, [{ Name: 'x' }], { headers: ALL }).then((answer) => answer.arrayBuffer());
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal(listening, 0);
  });
});

function compare(a: string, b: string): number {
  const [x, y] = [a.split('-').map(Number), b.split('-').map(Number)];
  return x[0] - y[0] || x[1] - y[1];
}
