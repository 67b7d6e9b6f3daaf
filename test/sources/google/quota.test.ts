// Google's per-minute quotas kept on this side (server/sources/google/budget.ts): connections
// signed in with the same credentials share one budget per user and per project, reads and
// writes apart, so requests wait for a slot, or are answered 503 with Retry-After, before Google
// would answer 429. Checked against the emulator with its quotas lowered (and its window
// shortened so the test runs in seconds): without the budget the same load meets 429s.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../../../server/http/app.ts';
import { Secret } from '../../../server/config/config.ts';
import { startEmulator, type QuotaLimits as EmulatorQuota } from '../../../tools/google-emulator/mod.ts';
import { createLogger } from '../../../server/log.ts';
import { openQuotaStore } from '../../../server/quota/quota.ts';
import { admit, Window } from '../../../server/sources/google/budget.ts';
import { Budgets, openGoogleSource, type QuotaLimits } from '../../../server/sources/google/mod.ts';

const TOKEN = 'shared-token';

test('a rolling window: no minute ever holds more than the limit, slots in arrival order', () => {
  // limit 3 per 60 s: [request time, expected send time (or 'refused'), with maxWait 58 s]
  const cases: [number, number | 'refused'][] = [
    [0, 0],
    [1, 1],
    [2, 2],
    [3, 60], // the 4th waits until the 1st is a minute old
    [4, 61],
    [5, 62],
    [6, 'refused'], // its slot (120) is 114 s away: more than 58 s
    [70, 120],
    [71, 121],
    [300, 300],
  ];
  const window = new Window(3, 60);
  for (const [now, expected] of cases) {
    const admission = admit([window], now, 58);
    assert.deepEqual([now, 'waitMs' in admission ? now + admission.waitMs : 'refused'], [now, expected]);
  }
  // Two windows (user and project): the later slot wins, and both take it.
  const user = new Window(2, 10);
  const project = new Window(1, 10);
  assert.deepEqual(admit([user, project], 0, 100), { waitMs: 0 });
  assert.deepEqual(admit([user, project], 1, 100), { waitMs: 9 });
  assert.deepEqual(admit([user], 2, 100), { waitMs: 8 }, 'after the slot at 10, in order');
});

test('connections sharing credentials share the budget; the lowest configured limit applies', () => {
  const budgets = new Budgets(60);
  const limits = (perUser: number): QuotaLimits => ({ readsPerMinutePerUser: perUser, writesPerMinutePerUser: perUser, readsPerMinutePerProject: 100, writesPerMinutePerProject: 100, maxWaitMs: 0 });
  const [a] = budgets.windowsFor('read', 'robot', 'project', limits(5));
  const [b] = budgets.windowsFor('read', 'robot', 'project', limits(3));
  const [other] = budgets.windowsFor('read', 'someone else', 'project', limits(5));
  const [write] = budgets.windowsFor('write', 'robot', 'project', limits(5));
  assert.equal(a, b);
  assert.equal(a.limit, 3);
  assert.notEqual(a, other);
  assert.notEqual(a, write);
});

/** 20 connections on one token, each its own spreadsheet, behind one handler. */
async function twentyConnections(t: { after(fn: () => unknown): void }, emulatorQuota: EmulatorQuota, quota: Partial<QuotaLimits>, budgets: Budgets, retries = 0) {
  const emulator = await startEmulator({ quota: emulatorQuota });
  const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-google-quota-'));
  const store = await openQuotaStore({ stateDir });
  const connections: { id: string; source: Awaited<ReturnType<typeof openGoogleSource>>; keys: []; readOnly: boolean; engine: object }[] = [];
  for (let n = 0; n < 20; n++) {
    const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name', 'Age'], ['Ann', 30], ['Bob', 41]] }], access: { [TOKEN]: 'writer' } });
    const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, retry: { retries, baseDelayMs: 5, maxDelayMs: 20 }, quota, budgets });
    connections.push({ id: `c${n}`, source, keys: [], readOnly: false, engine: {} });
  }
  const app = createApp({ connections, quota: store, bodyBytes: 1024 * 1024, cors: '*', log: createLogger('silent') });
  t.after(async () => {
    for (const connection of connections) await connection.source.close();
    await store.close();
    await emulator.close();
    await rm(stateDir, { recursive: true, force: true });
  });
  /** 500 requests at once, a third each: no-cache reads, POSTs, PATCHes (a read and a write). */
  const burst = () =>
    Promise.all(
      Array.from({ length: 500 }, async (_, n) => {
        const base = `http://x/sheets/c${n % 20}`;
        const json = (method: string, body: unknown): RequestInit => ({ method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
        const request = n % 3 === 0 ? new Request(base, { headers: { 'Cache-Control': 'no-cache' } }) : n % 3 === 1 ? new Request(base, json('POST', { Name: `P${n}`, Age: n })) : new Request(`${base}/0`, json('PATCH', { Age: n }));
        const response = await app.fetch(request);
        const body = await response.text();
        return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
      }),
    );
  return { emulator, burst };
}

// The emulator allows 150 reads and 150 writes per user per 2 s (and 200 per project); the
// budget is told the same, over a window a second longer, as in production (61 s for Google's
// minute: a request reaches Google a little after its slot is taken, later still when the event
// loop is busy). The window is short so the test runs in seconds; Google's is a minute.
const WINDOW_MS = 2_000;
const EMULATOR_QUOTA: EmulatorQuota = { readPerMinutePerUser: 150, writePerMinutePerUser: 150, readPerMinutePerProject: 200, writePerMinutePerProject: 200, windowMs: WINDOW_MS };
const SAME_LIMITS: Partial<QuotaLimits> = { readsPerMinutePerUser: 150, writesPerMinutePerUser: 150, readsPerMinutePerProject: 200, writesPerMinutePerProject: 200, maxWaitMs: 60_000 };

test('500 mixed requests over 20 connections on one credential: no upstream 429, all served', async (t) => {
  const { emulator, burst } = await twentyConnections(t, EMULATOR_QUOTA, SAME_LIMITS, new Budgets(WINDOW_MS + 1_000));
  const answers = await burst();
  const statuses = new Map<number, number>();
  for (const { status } of answers) statuses.set(status, (statuses.get(status) ?? 0) + 1);
  assert.deepEqual([...statuses.keys()].filter((status) => status >= 300), [], `every request served (${JSON.stringify([...statuses])}; ${answers.find((answer) => answer.status >= 300)?.body})`);
  assert.equal(emulator.requests.filter((request) => request.status === 429).length, 0, 'Google never said 429');
  // Group commit folds each connection's queued writes into one request, so fewer than 500 go
  // upstream; still more than one window lets through for one kind (the next test meets 429s).
  assert.ok(emulator.requests.length > 150, `the load did reach upstream (${emulator.requests.length} requests)`);
});

test('without the budget the same load meets 429s upstream (the test above can fail)', async (t) => {
  const unlimited: Partial<QuotaLimits> = { readsPerMinutePerUser: 100_000, writesPerMinutePerUser: 100_000, readsPerMinutePerProject: 100_000, writesPerMinutePerProject: 100_000 };
  const { emulator, burst } = await twentyConnections(t, EMULATOR_QUOTA, unlimited, new Budgets(WINDOW_MS + 1_000));
  const answers = await burst();
  assert.ok(emulator.requests.some((request) => request.status === 429), 'Google answered 429');
  assert.ok(answers.some((answer) => answer.status === 503));
});

test('past the longest wait: 503 with Retry-After at once, nothing sent', async (t) => {
  // A real minute here: five reads a minute, no waiting.
  const { emulator, burst } = await twentyConnections(
    t,
    { readPerMinutePerUser: 5, writePerMinutePerUser: 5 },
    { readsPerMinutePerUser: 5, writesPerMinutePerUser: 5, maxWaitMs: 0 },
    new Budgets(),
  );
  const answers = await burst();
  assert.equal(emulator.requests.filter((request) => request.status === 429).length, 0, 'Google never said 429');
  assert.ok(emulator.requests.filter((request) => request.method === 'GET').length <= 5);
  assert.ok(emulator.requests.filter((request) => request.method !== 'GET').length <= 5);
  const refused = answers.filter((answer) => answer.status === 503);
  assert.ok(refused.length >= 480, `most are refused (${refused.length})`);
  assert.ok(refused.every((answer) => Number(answer.retryAfter) >= 1 && Number(answer.retryAfter) <= 61), 'Retry-After: when a slot frees');
});
