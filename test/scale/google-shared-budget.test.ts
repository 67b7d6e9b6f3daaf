// Google's per-minute budget shared by several instances through Redis (server/sources/google/budget-redis.ts):
// three sources standing for three instances (each with its own process budget and its own Redis
// connection) on one credential send no more than the limit per window between them, so the
// emulator (its quota lowered, its window shortened so the test runs in seconds) never answers
// 429; without the shared budget the same load does meet 429s. With Redis away each instance
// falls back to its own budget. Needs redis-server (skipped, with the reason, without it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Secret } from '../../server/config/config.ts';
import { startEmulator, type QuotaLimits as EmulatorQuota } from '../../tools/google-emulator/mod.ts';
import { createLogger } from '../../server/log.ts';
import { redisBudget } from '../../server/sources/google/budget-redis.ts';
import { openRedis, type Redis } from '../../server/redis/client.ts';
import { Budgets, openGoogleSource, type GoogleSource, type QuotaLimits } from '../../server/sources/google/mod.ts';
import type { TestContext } from '../helpers/http.ts';
import { startRedis } from '../helpers/redis.ts';

const TOKEN = 'shared-token';
const INSTANCES = 3;
// The emulator allows 20 reads per user per 2 s; each instance's budget is told the same over
// 3 s (a second more, as production's 61 s for Google's minute). 60 reads, 20 per instance.
const EMULATOR_QUOTA: EmulatorQuota = { readPerMinutePerUser: 20, writePerMinutePerUser: 20, readPerMinutePerProject: 20, writePerMinutePerProject: 20, windowMs: 2_000 };
const LIMITS: Partial<QuotaLimits> = { readsPerMinutePerUser: 20, writesPerMinutePerUser: 20, readsPerMinutePerProject: 20, writesPerMinutePerProject: 20, maxWaitMs: 30_000 };
const BUDGET_WINDOW_MS = 3_000;

async function instances(t: TestContext, shared: boolean) {
  const redis = await startRedis(t);
  if (typeof redis === 'string') return redis;
  const emulator = await startEmulator({ quota: EMULATOR_QUOTA });
  t.after(() => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name'], ['Ann']] }], access: { [TOKEN]: 'writer' } });
  const notes: string[] = [];
  const sources: GoogleSource[] = [];
  const connections: Redis[] = [];
  for (let n = 0; n < INSTANCES; n++) {
    const connection = await openRedis({ url: redis.url, log: createLogger('silent') });
    connections.push(connection);
    const source = await openGoogleSource({
      spreadsheetId,
      rootUrl: emulator.rootUrl,
      auth: { kind: 'accessToken', token: new Secret(TOKEN) },
      retry: { retries: 0 },
      quota: LIMITS,
      // Each instance's process budget, as in its own process.
      budgets: new Budgets(BUDGET_WINDOW_MS),
      ...(shared ? { sharedBudget: redisBudget({ redis: connection, windowMs: BUDGET_WINDOW_MS, log: (message) => notes.push(message) }) } : {}),
    });
    sources.push(source);
  }
  t.after(async () => {
    for (const source of sources) await source.close();
    for (const connection of connections) await connection.close();
  });
  /** `count` fresh reads of every instance at once; the statuses (200, or the error's code). */
  const burst = (count: number) =>
    Promise.all(
      sources.flatMap((source) =>
        Array.from({ length: count }, () =>
          source.read({ tab: 'People', fresh: true }).then(
            () => 'ok',
            (error: unknown) => String((error as { code?: unknown }).code),
          ),
        ),
      ),
    );
  return { redis, emulator, burst, notes };
}

test('instances sharing Redis share the budget: no upstream 429 across them', async (t) => {
  const set = await instances(t, true);
  if (typeof set === 'string') return t.skip(set);
  const answers = await set.burst(20);
  assert.deepEqual(answers.filter((answer) => answer !== 'ok'), [], 'every read served');
  assert.equal(set.emulator.requests.filter((request) => request.status === 429).length, 0, 'Google never said 429');
  assert.equal(set.emulator.requests.length, 60, 'each read reached upstream once');
});

test('without the shared budget the same load meets 429s (the test above can fail)', async (t) => {
  const set = await instances(t, false);
  if (typeof set === 'string') return t.skip(set);
  const answers = await set.burst(20);
  assert.ok(set.emulator.requests.some((request) => request.status === 429), 'Google answered 429');
  assert.ok(answers.includes('upstream_unavailable'));
});

test('past the longest wait the shared budget refuses (the source answers 503 with Retry-After), whichever instance asks; a refusal takes nothing', async (t) => {
  const redis = await startRedis(t);
  if (typeof redis === 'string') return t.skip(redis);
  const connections = await Promise.all([0, 1].map(() => openRedis({ url: redis.url, log: createLogger('silent') })));
  t.after(() => Promise.all(connections.map((connection) => connection.close())));
  const [a, b] = connections.map((connection) => redisBudget({ redis: connection, windowMs: 60_000, log: () => undefined }));
  const windows = [{ key: 'read user robot', limit: 2 }, { key: 'read project p', limit: 3 }];
  assert.deepEqual(await a.admit(windows, 0), { waitMs: 0 });
  assert.deepEqual(await b.admit(windows, 0), { waitMs: 0 });
  const refused = await a.admit(windows, 0);
  assert.ok(refused !== null && 'refusedForMs' in refused && refused.refusedForMs > 59_000 && refused.refusedForMs <= 60_000, JSON.stringify(refused));
  // Another user of the same project: its own window has room, the project's one slot left.
  assert.deepEqual(await b.admit([{ key: 'read user other', limit: 2 }, { key: 'read project p', limit: 3 }], 0), { waitMs: 0 });
  const project = await b.admit([{ key: 'read user third', limit: 2 }, { key: 'read project p', limit: 3 }], 0);
  assert.ok(project !== null && 'refusedForMs' in project, 'the project window is full');
  // A refusal takes nothing: with a long enough wait the next slot is the first one's, a window on.
  const queued = await a.admit(windows, 120_000);
  assert.ok(queued !== null && 'waitMs' in queued && queued.waitMs > 59_000 && queued.waitMs <= 60_000, JSON.stringify(queued));
});

test('Redis away: each instance falls back to its own budget, says so once, and shares again once Redis is back', async (t) => {
  const set = await instances(t, true);
  if (typeof set === 'string') return t.skip(set);
  await set.redis.stop();
  const answers = await set.burst(2);
  assert.deepEqual(answers, Array.from({ length: 6 }, () => 'ok'), 'reads are served on the local budget');
  assert.equal(set.notes.filter((note) => note.includes('cannot be shared')).length, INSTANCES, 'once per instance');
  await set.redis.restart();
  // The client reconnects within a second; reads keep being served meanwhile.
  for (let tries = 0; tries < 50 && set.notes.filter((note) => note.includes('again')).length < INSTANCES; tries++) {
    await set.burst(1);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(set.notes.filter((note) => note.includes('shared through redis again')).length, INSTANCES);
});
