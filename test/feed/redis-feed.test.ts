// The change feed through Redis, with a real redis-server (skipped, naming why, without one):
// three instances over one Google spreadsheet, one event stream each, all see every write on
// any of them, with the same ids in the same order; the Redis log resumes after an id, and an id
// past the age retention, or trimmed, or never given, is a reset.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { loadConfig } from '../../server/config/config.ts';
import { RedisEventLog } from '../../server/feed/redis-log.ts';
import { createLogger } from '../../server/log.ts';
import { openRedis } from '../../server/redis/client.ts';
import { startEmulator } from '../../tools/google-emulator/mod.ts';
import { defer, RUNTIME, startServer, tempDir } from '../helpers/http.ts';
import { openEvents } from '../helpers/event-stream.ts';
import { startRedis } from '../helpers/redis.ts';

const TOKEN = 'writer-token';

test(`the change feed through Redis (${RUNTIME})`, async (t) => {
  const redis = await startRedis(t);
  if (typeof redis === 'string') return t.skip(redis);

  await t.test('three instances, one stream each: every write on any of them reaches all three', async (t) => {
    const emulator = await startEmulator();
    defer(t, () => emulator.close());
    const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name'], ['Ann']] }], access: { [TOKEN]: 'writer' } });
    const dir = await tempDir(t);
    const urls: string[] = [];
    for (const n of [0, 1, 2]) {
      const config = {
        stateDir: dir.path(`state-${n}`),
        log: { level: 'silent' },
        store: { type: 'redis', url: redis.url },
        connections: [{ id: 'g', source: { type: 'google', spreadsheetId: id, rootUrl: emulator.rootUrl, accessToken: TOKEN, retries: 0, freshnessMs: 60_000 } }],
      };
      await writeFile(dir.path(`sheetrest-${n}.json`), JSON.stringify(config));
      urls.push((await startServer(t, await loadConfig(dir.path(`sheetrest-${n}.json`)))).url);
    }
    const streams = await Promise.all(urls.map((url) => openEvents(`${url}/sheets/g/events`)));
    defer(t, () => streams.forEach((stream) => stream.close()));
    // No wait: a stream's cursor is fixed when it opens, whenever its reader's XREAD includes it.
    for (let i = 0; i < 9; i++) {
      const answer = await fetch(`${urls[i % 3]}/sheets/g`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify([{ Name: `w${i}` }]) });
      assert.equal(answer.status, 201);
      await answer.arrayBuffer();
    }
    const seen = await Promise.all(streams.map((stream) => stream.next(9)));
    for (const events of seen) {
      assert.deepEqual(events.map((event) => (event.data.rows as { Name: string }[])[0].Name), Array.from({ length: 9 }, (_, i) => `w${i}`));
      assert.deepEqual(events.map((event) => event.id), seen[0].map((event) => event.id));
    }
    // Resuming on another instance than the one that streamed: the same ids.
    const resumed = await openEvents(`${urls[2]}/sheets/g/events`, { 'Last-Event-ID': seen[0][5].id! });
    defer(t, () => resumed.close());
    assert.deepEqual((await resumed.next(3)).map((event) => event.id), seen[0].slice(6).map((event) => event.id));
  });

  await t.test('the Redis log: after an id, reset past the age retention, for an unknown or malformed id', async (t) => {
    const log = createLogger('silent');
    const client = await openRedis({ url: redis.url, log });
    let now = Date.now();
    const events = new RedisEventLog(client, log, { maxEvents: 10_000, maxAgeMs: 60_000 }, () => now);
    defer(t, async () => {
      await events.close();
      await client.close();
    });
    const heard: string[] = [];
    const stop = await events.subscribe('unit', (event) => heard.push(event.id));
    events.append('unit', [1, 2, 3].map((n) => ({ type: 'rows.created' as const, connection: 'unit', tab: 'T', at: new Date().toISOString(), rows: [{ n: String(n) }], indexes: [n] })));
    const deadline = Date.now() + 5000;
    while (heard.length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    stop();
    assert.equal(heard.length, 3);
    const replay = await events.after('unit', heard[0]);
    assert.ok('events' in replay);
    assert.deepEqual(replay.events.map((event) => [event.id, event.rows]), [[heard[1], [{ n: '2' }]], [heard[2], [{ n: '3' }]]]);
    assert.equal(await events.latest('unit'), heard[2]);
    for (const id of ['1-0', 'nope', `${Number(heard[2].split('-')[0]) + 1}-0`]) assert.deepEqual(await events.after('unit', id), { reset: true, latest: heard[2] }, id);
    now += 61_000;
    assert.deepEqual(await events.after('unit', heard[0]), { reset: true, latest: heard[2] });
  });
});
