// Webhooks with several instances: three in-process servers on one redis-server and one
// Google spreadsheet (the emulator), writes spread over them, a receiver on loopback failing a
// fifth of deliveries. Every acknowledged write's event reaches the receiver, each id is
// accepted once (exactly one instance delivers), and first deliveries come in the connection's
// order (the Redis stream's). Then the instance delivering may stop: another takes over from
// the cursor in Redis, and every event is still delivered in order (a repeat only with its id).
// Skipped, with the reason, where redis-server is missing.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { loadConfig, type Config } from '../../server/config/config.ts';
import { compareEventIds } from '../../server/feed/event-log.ts';
import { startEmulator } from '../../tools/google-emulator/mod.ts';
import { burst, defer, RUNTIME, startServer, tempDir, type TestContext } from '../helpers/http.ts';
import { redisOrSkip } from '../helpers/redis.ts';

const WRITER = 'writer-token';

interface Accepted {
  readonly id: string;
  readonly name: string;
}

async function receiver(t: TestContext) {
  const accepted: Accepted[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (Math.random() < 0.2) {
        response.writeHead(500).end();
        return;
      }
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      accepted.push({ id: String(request.headers['sheetrest-event-id']), name: event.rows?.[0]?.Name ?? '' });
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(t, () => new Promise<void>((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`, accepted };
}

async function until(ms: number, what: string, done: () => boolean): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) assert.fail(`${what}: not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Every name acknowledged was accepted; first deliveries in increasing id order. */
function check(accepted: readonly Accepted[], acknowledged: readonly string[]): Map<string, number> {
  const firsts: string[] = [];
  const times = new Map<string, number>();
  const nameOf = new Map<string, string>();
  for (const each of accepted) {
    if (!times.has(each.id)) firsts.push(each.id);
    times.set(each.id, (times.get(each.id) ?? 0) + 1);
    const before = nameOf.get(each.id);
    assert.ok(before === undefined || before === each.name, `a repeat of ${each.id} carries the same event`);
    nameOf.set(each.id, each.name);
  }
  for (let i = 1; i < firsts.length; i++) assert.ok(compareEventIds(firsts[i - 1], firsts[i]) < 0, `first deliveries in order: ${firsts[i - 1]} before ${firsts[i]}`);
  const names = new Set(nameOf.values());
  for (const name of acknowledged) assert.ok(names.has(name), `the event of the acknowledged write ${name} was delivered`);
  return times;
}

test(`three instances on one Redis: every event delivered once, in the connection's order, and handed over when one stops (${RUNTIME})`, { timeout: 120_000 }, async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const emulator = await startEmulator();
  defer(t, () => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name', 'Age']] }], access: { [WRITER]: 'writer' } });
  const hook = await receiver(t);
  const configs: Config[] = [];
  for (let i = 0; i < 3; i++) {
    const dir = await tempDir(t);
    await writeFile(dir.path('sheetrest.json'), JSON.stringify({
      store: { type: 'redis', url: redis.url },
      log: { level: 'silent' },
      webhooks: { allowPrivateTargets: true, retryBaseMs: 5, retryCapMs: 50, timeoutMs: 2_000 },
      connections: [{ id: 'people', source: { type: 'google', spreadsheetId, rootUrl: emulator.rootUrl, accessToken: WRITER, retries: 0 }, webhooks: [{ name: 'r', url: hook.url, secret: { env: 'HOOK_SECRET' } }] }],
    }));
    configs.push(await loadConfig(dir.path('sheetrest.json'), { env: { HOOK_SECRET: 'whsec_instances_test' } }));
  }
  const servers: Awaited<ReturnType<typeof startServer>>[] = [];
  for (const config of configs) servers.push(await startServer(t, config));

  const acknowledged: string[] = [];
  const writeThrough = async (urls: readonly string[], from: number, count: number) => {
    await burst(count, 6, async (i) => {
      const name = `w${from + i}`;
      const response = await fetch(`${urls[i % urls.length]}/sheets/people`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ Name: name, Age: i }) });
      await response.body?.cancel();
      if (response.status === 201) acknowledged.push(name);
    });
  };

  await writeThrough(servers.map((server) => server.url), 0, 90);
  assert.ok(acknowledged.length >= 80, `most writes acknowledged (${acknowledged.length} of 90)`);
  await until(30_000, 'every acknowledged event delivered', () => new Set(hook.accepted.map((each) => each.name)).size >= acknowledged.length);
  // A moment for a second instance to deliver something twice, if it would.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const times = check(hook.accepted, acknowledged);
  assert.deepEqual([...times.entries()].filter(([, count]) => count > 1), [], 'each event accepted once: one instance delivers');

  await t.test('the delivering instance stops: another goes on from the cursor in Redis', async () => {
    // Whichever holds the lease: stop each in turn until one is left.
    await servers[0].close();
    await writeThrough([servers[1].url, servers[2].url], 90, 30);
    await servers[1].close();
    await writeThrough([servers[2].url], 120, 20);
    await until(30_000, 'every acknowledged event delivered after the handovers', () => new Set(hook.accepted.map((each) => each.name)).size >= acknowledged.length);
    check(hook.accepted, acknowledged);
  });
});
