// Redis failing under a running server: hung (SIGSTOP, what a network partition looks like: the
// connection stays up and nothing answers), killed, restarted empty or from its append-only
// file. Every request is answered while it fails (503 with Retry-After for what needs Redis,
// reads of connections without a monthly limit served), everything comes back once Redis
// answers, and no write with an Idempotency-Key lands twice. Each test starts its own
// redis-server; without one installed they are skipped, saying why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import { createClient } from 'redis';
import { loadConfig, type Config } from '../../server/config/config.ts';
import { createLogger } from '../../server/log.ts';
import { sharedAdminState, type AdminSnapshot } from '../../server/admin/redis-state.ts';
import { redisKeyStore } from '../../server/idempotency/redis-store.ts';
import { openRedis } from '../../server/redis/client.ts';
import { startEmulator, type Emulator } from '../../tools/google-emulator/mod.ts';
import { defer, RUNTIME, startServer, tempDir, type TestContext } from '../helpers/http.ts';
import { redisOrSkip, type RedisSettings, type TestRedis } from '../helpers/redis.ts';

const WRITER = 'writer-token';
const KEY = 'reader-writer-key';
/** Far longer than a bounded Redis call may take: a request still waiting then is hung. */
const HUNG_MS = 15_000;


interface Setup {
  readonly emulator: Emulator;
  readonly spreadsheetId: string;
  readonly config: Config;
}

/**
 * A pass-through in front of the emulator that runs `before` ahead of each request it forwards:
 * `await redis.stop()` there kills Redis after sheetrest sent its write to Google and before
 * Google answered it, i.e. between the write and the storing of its Idempotency-Key.
 */
async function proxyOf(t: TestContext, target: string, before: (method: string) => Promise<void>): Promise<string> {
  const server = createServer((incoming: IncomingMessage, outgoing) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of incoming) chunks.push(chunk as Buffer);
      const method = incoming.method ?? 'GET';
      await before(method);
      const headers = Object.fromEntries(Object.entries(incoming.headers).filter(([name, value]) => typeof value === 'string' && !['host', 'connection', 'content-length'].includes(name))) as Record<string, string>;
      const answer = await fetch(new URL(incoming.url ?? '/', target), { method, headers, ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) }) });
      const body = Buffer.from(await answer.arrayBuffer());
      outgoing.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json', 'content-length': String(body.byteLength) });
      outgoing.end(body);
    })().catch(() => outgoing.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  defer(t, () => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}`;
}

/** `action`, run once, before the first write sent to Google. */
function onFirstWrite(action: () => Promise<void> | void): (method: string) => Promise<void> {
  let done = false;
  return async (method) => {
    if (method === 'GET' || done) return;
    done = true;
    await action();
  };
}

/** One spreadsheet behind three connections: open, open with a monthly limit, and keyed. */
async function setup(t: TestContext, redisUrl: string, store: Record<string, unknown> = {}, before?: (method: string) => Promise<void>): Promise<Setup> {
  const emulator = await startEmulator();
  defer(t, () => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name', 'Age'], ['Ann', 30]] }], access: { [WRITER]: 'writer' } });
  const rootUrl = before === undefined ? emulator.rootUrl : await proxyOf(t, emulator.rootUrl, before);
  const source = { type: 'google', spreadsheetId, rootUrl, accessToken: WRITER, retries: 0, freshnessMs: 60_000 };
  const dir = await tempDir(t);
  await writeFile(dir.path('sheetrest.json'), JSON.stringify({
    stateDir: dir.path('state'),
    store: { type: 'redis', url: redisUrl, ...store },
    connections: [
      { id: 'open', source },
      { id: 'limited', source, plan: { name: 'p', monthlyRequests: 1000 } },
      { id: 'keyed', source, keys: [{ key: KEY }] },
    ],
  }));
  return { emulator, spreadsheetId, config: await loadConfig(dir.path('sheetrest.json')) };
}

interface Outcome {
  readonly status: number;
  readonly retryAfter: string | null;
  readonly replayed: boolean;
  readonly body: string;
}

/** A request's outcome, or status 0 when it got no answer within HUNG_MS. */
async function send(url: string, init: RequestInit = {}): Promise<Outcome> {
  try {
    const answer = await fetch(url, { ...init, signal: AbortSignal.timeout(HUNG_MS) });
    return { status: answer.status, retryAfter: answer.headers.get('retry-after'), replayed: answer.headers.get('idempotent-replayed') === 'true', body: await answer.text() };
  } catch {
    return { status: 0, retryAfter: null, replayed: false, body: '' };
  }
}

const post = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({ method: 'POST', headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) });

/** Retries `request` every 50 ms (up to 10 s) until its status is `wanted`; the last outcome. */
async function until(wanted: number, request: () => Promise<Outcome>): Promise<Outcome> {
  let outcome = await request();
  for (let attempt = 0; attempt < 200 && outcome.status !== wanted; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    outcome = await request();
  }
  return outcome;
}

function namesIn(emulator: Emulator, spreadsheetId: string): string[] {
  return emulator.sheet(spreadsheetId, 'People').rows.slice(1).map((row) => String(row[0]?.formattedValue));
}

test(`a hung Redis: what needs it answers 503 with Retry-After, unlimited reads are served, and all is back once it answers (${RUNTIME})`, async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const { emulator, spreadsheetId, config } = await setup(t, redis.url);
  const served = await startServer(t, config);
  for (const path of ['open', 'limited']) assert.equal((await send(`${served.url}/sheets/${path}`)).status, 200);
  redis.pause();
  defer(t, () => redis.resume());
  // Twice: the first round finds the connection hung (each call waits for its deadline), the
  // second finds it known to be down (each call refused at once).
  for (const round of ['first', 'second']) {
    const started = performance.now();
    const [read, write, limited, keyed] = await Promise.all([
      send(`${served.url}/sheets/open`),
      send(`${served.url}/sheets/open`, post({ Name: `Cy-${round}`, Age: 2 })),
      send(`${served.url}/sheets/limited`),
      send(`${served.url}/sheets/open`, post({ Name: `Di-${round}`, Age: 3 }, { 'Idempotency-Key': `hung-${round}` })),
    ]);
    t.diagnostic(`${round} round while Redis hangs answered in ${Math.round(performance.now() - started)} ms`);
    assert.equal(read.status, 200, 'a read of a connection without a limit is served from the kept tab');
    assert.deepEqual(JSON.parse(read.body), [{ Name: 'Ann', Age: '30' }]);
    for (const [name, outcome, message] of [
      ['a write', write, /Writes are paused: the shared store \(Redis\) is unreachable/],
      ['a request counted against a plan', limited, /counted against a monthly plan: the shared store \(Redis\) is unreachable/],
      ['a write with an Idempotency-Key', keyed, /the shared store \(Redis\) is unreachable/],
    ] as const) {
      assert.equal(outcome.status, 503, `${name}: ${outcome.status} ${outcome.body}`);
      assert.equal(JSON.parse(outcome.body).error, 'upstream_unavailable');
      assert.match(JSON.parse(outcome.body).message, message);
      assert.equal(outcome.retryAfter, '1');
    }
  }
  assert.deepEqual(namesIn(emulator, spreadsheetId), ['Ann'], 'nothing was written while Redis hung');
  redis.resume();
  assert.equal((await until(201, () => send(`${served.url}/sheets/open`, post({ Name: 'Ed', Age: 4 })))).status, 201);
  assert.equal((await send(`${served.url}/sheets/limited`)).status, 200);
  const keyed = await send(`${served.url}/sheets/open`, post({ Name: 'Di-first', Age: 3 }, { 'Idempotency-Key': 'hung-first' }));
  assert.deepEqual([keyed.status, keyed.replayed], [201, false], 'a key refused while Redis hung runs once it is back');
  assert.deepEqual(namesIn(emulator, spreadsheetId), ['Ann', 'Ed', 'Di-first']);
});

/** Two instances sharing Redis, as behind a load balancer. */
async function pair(t: TestContext, config: Config) {
  return [await startServer(t, config), await startServer(t, { ...config, stateDir: `${config.stateDir}-b` })] as const;
}

const keyedPost = (key: string, name: string) => post({ Name: name, Age: 1 }, { 'Idempotency-Key': key });

/**
 * Retries `request` until it is answered 201, allowing only what a retry may meet meanwhile:
 * 503 (Redis away) and 409 (the first try's answer not stored yet). Fails on anything else.
 */
async function retryUntilStored(request: () => Promise<Outcome>): Promise<Outcome> {
  const seen: number[] = [];
  const last = await until(201, async () => {
    const outcome = await request();
    seen.push(outcome.status);
    return outcome;
  });
  assert.deepEqual(seen.filter((status) => ![201, 409, 503].includes(status)), [], `only 409 and 503 before the answer: ${seen.join(' ')}`);
  return last;
}

test(`Redis killed between a write and its Idempotency-Key's receipt, back from its append-only file: the retry is replayed on any instance, not written again (${RUNTIME})`, async (t) => {
  const redis = await redisOrSkip(t, { aof: true });
  if (redis === null) return;
  const { emulator, spreadsheetId, config } = await setup(t, redis.url, {}, onFirstWrite(() => redis.stop()));
  const [a, b] = await pair(t, config);
  assert.equal((await send(`${a.url}/sheets/open`)).status, 200);
  const first = await send(`${a.url}/sheets/open`, keyedPost('order-1', 'Bo'));
  assert.deepEqual([first.status, first.replayed], [201, false], 'the write landed, so it is answered');
  await redis.restart();
  const onB = await retryUntilStored(() => send(`${b.url}/sheets/open`, keyedPost('order-1', 'Bo')));
  assert.deepEqual([onB.status, onB.replayed, onB.body], [201, true, first.body], 'the retry on B gets the first answer');
  const onA = await send(`${a.url}/sheets/open`, keyedPost('order-1', 'Bo'));
  assert.deepEqual([onA.status, onA.replayed], [201, true]);
  assert.deepEqual(namesIn(emulator, spreadsheetId), ['Ann', 'Bo'], 'written once');
});

test(`while a receipt cannot be stored, the instance that wrote answers the retry from memory, another refuses it, and once Redis is back both replay it (${RUNTIME})`, async (t) => {
  const redis = await redisOrSkip(t, { aof: true });
  if (redis === null) return;
  const { emulator, spreadsheetId, config } = await setup(t, redis.url, {}, onFirstWrite(() => redis.stop()));
  const [a, b] = await pair(t, config);
  assert.equal((await send(`${a.url}/sheets/open`)).status, 200);
  const first = await send(`${a.url}/sheets/open`, keyedPost('order-2', 'Cy'));
  assert.equal(first.status, 201);
  const whileDown = await send(`${a.url}/sheets/open`, keyedPost('order-2', 'Cy'));
  assert.deepEqual([whileDown.status, whileDown.replayed, whileDown.body], [201, true, first.body], 'A answers the retry from memory while Redis is away');
  const elsewhere = await send(`${b.url}/sheets/open`, keyedPost('order-2', 'Cy'));
  assert.equal(elsewhere.status, 503, 'B cannot know the key without Redis');
  await redis.restart();
  // Before A stores the receipt, B finds the key marked as running with no one working on it.
  const client = createClient({ url: redis.url });
  await client.connect();
  defer(t, () => client.close());
  const record = await client.get('sheetrest:idem:open:open:order-2');
  assert.ok(record !== null, 'the key was marked in Redis before the write ran');
  const onB = await retryUntilStored(() => send(`${b.url}/sheets/open`, keyedPost('order-2', 'Cy')));
  assert.deepEqual([onB.replayed, onB.body], [true, first.body]);
  assert.deepEqual(namesIn(emulator, spreadsheetId), ['Ann', 'Cy'], 'written once');
});

test(`Redis hung mid-write: the write is answered, retries meanwhile are refused, and once it answers the retry is replayed (${RUNTIME})`, async (t) => {
  const redis = await redisOrSkip(t, { aof: true });
  if (redis === null) return;
  defer(t, () => redis.resume());
  const { emulator, spreadsheetId, config } = await setup(t, redis.url, {}, onFirstWrite(() => redis.pause()));
  const [a, b] = await pair(t, config);
  assert.equal((await send(`${a.url}/sheets/open`)).status, 200);
  const first = await send(`${a.url}/sheets/open`, keyedPost('order-3', 'Di'));
  assert.deepEqual([first.status, first.replayed], [201, false]);
  const elsewhere = await send(`${b.url}/sheets/open`, keyedPost('order-3', 'Di'));
  assert.equal(elsewhere.status, 503, 'B cannot know the key while Redis hangs');
  redis.resume();
  const onB = await retryUntilStored(() => send(`${b.url}/sheets/open`, keyedPost('order-3', 'Di')));
  assert.deepEqual([onB.replayed, onB.body], [true, first.body]);
  assert.deepEqual(namesIn(emulator, spreadsheetId), ['Ann', 'Di'], 'written once');
});

test(`Redis restarted empty mid-write: the instance that wrote stores the receipt again, so retries are replayed (${RUNTIME})`, async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const { emulator, spreadsheetId, config } = await setup(t, redis.url, {}, onFirstWrite(() => redis.stop()));
  const [a, b] = await pair(t, config);
  assert.equal((await send(`${a.url}/sheets/open`)).status, 200);
  const first = await send(`${a.url}/sheets/open`, keyedPost('order-4', 'Ed'));
  assert.equal(first.status, 201);
  await redis.restart();
  // A answers a retry from what it holds, and stores it again on its own once Redis answers.
  const onA = await retryUntilStored(() => send(`${a.url}/sheets/open`, keyedPost('order-4', 'Ed')));
  assert.deepEqual([onA.replayed, onA.body], [true, first.body]);
  // B only once it is stored: a retry reaching B before would find nothing (a Redis restarted
  // empty forgets, docs/scaling.md).
  const client = createClient({ url: redis.url });
  await client.connect();
  defer(t, () => client.close());
  let stored: string | null = null;
  for (let attempt = 0; attempt < 200 && stored === null; attempt++) {
    stored = await client.get('sheetrest:idem:open:open:order-4');
    if (stored === null) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.equal(JSON.parse(stored ?? '{}').body, first.body, 'A stored the receipt again');
  const onB = await retryUntilStored(() => send(`${b.url}/sheets/open`, keyedPost('order-4', 'Ed')));
  assert.deepEqual([onB.status, onB.replayed, onB.body], [201, true, first.body]);
  assert.deepEqual(namesIn(emulator, spreadsheetId), ['Ann', 'Ed'], 'written once');
});

test(`a key marked as running in Redis is never written again: 409 conflict while its try runs elsewhere or was cut off (${RUNTIME})`, async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const { emulator, spreadsheetId, config } = await setup(t, redis.url, { leaseMs: 2000, leaseWaitMs: 200 });
  const served = await startServer(t, config);
  const client = createClient({ url: redis.url });
  await client.connect();
  defer(t, () => client.close());
  const cases: [string, string, boolean, RegExp][] = [
    ['another instance works on it (its lease is held)', 'running-1', true, /still running on another instance/],
    ['its instance was cut off or stopped (no lease)', 'cut-1', false, /was cut off before its answer was stored/],
  ];
  for (const [name, key, leased, message] of cases) {
    await t.test(name, async () => {
      await client.set(`sheetrest:idem:open:open:${key}`, '{"running":"elsewhere"}', { PX: 60_000 });
      if (leased) await client.set(`sheetrest:idem:open:open:${key}:lease`, 'elsewhere', { PX: 60_000 });
      const outcome = await send(`${served.url}/sheets/open`, keyedPost(key, 'Never'));
      assert.equal(outcome.status, 409);
      assert.equal(JSON.parse(outcome.body).error, 'conflict');
      assert.match(JSON.parse(outcome.body).message, message);
      assert.ok(Number(outcome.retryAfter) >= 1);
    });
  }
  await t.test('the first try ending undecided takes its mark back: a retry runs', async () => {
    emulator.failNext({ status: 500, path: /:append$|:batchUpdate$/ });
    const failed = await send(`${served.url}/sheets/open`, keyedPost('undecided-1', 'Fay'));
    assert.ok(failed.status >= 500, `${failed.status} ${failed.body}`);
    assert.equal(await client.get('sheetrest:idem:open:open:undecided-1'), null, 'no mark left');
    const again = await send(`${served.url}/sheets/open`, keyedPost('undecided-1', 'Fay'));
    assert.deepEqual([again.status, again.replayed], [201, false]);
  });
  assert.deepEqual(namesIn(emulator, spreadsheetId), ['Ann', 'Fay'], 'nothing written for a key running elsewhere');
});

test(`an instance out of touch with Redis past maxStaleMs refuses requests with keys until it has caught up (injected clock) (${RUNTIME})`, async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  const silent = createLogger('silent');
  const lease = { leaseMs: 1000, leaseWaitMs: 1000 };
  const [mine, theirs] = [await openRedis({ url: redis.url, log: silent }), await openRedis({ url: redis.url, log: silent })];
  defer(t, () => mine.close());
  defer(t, () => theirs.close());
  let clock = 1_000_000;
  const state = sharedAdminState(mine, lease, silent, { maxStaleMs: 5000, now: () => clock });
  defer(t, () => state.close());
  const other = sharedAdminState(theirs, lease, silent);
  let served: AdminSnapshot = { revision: 0, connections: [] };
  let applying = true;
  await state.follow(() => served, async (snapshot) => {
    if (!applying) throw new Error('cannot apply now');
    served = snapshot;
  });
  assert.equal(state.stale(), null, 'in touch at start');
  clock += 5000;
  assert.equal(state.stale(), null, 'maxStaleMs itself is still in touch');
  clock += 1;
  const refusal = state.stale();
  assert.equal(refusal?.code, 'upstream_unavailable');
  assert.match(refusal?.message ?? '', /has not reached the shared store \(Redis\) for 5 s, so it cannot tell whether API keys were revoked/);
  assert.deepEqual(refusal?.headers, { 'Retry-After': '1' });
  await state.check();
  assert.equal(state.stale(), null, 'back in touch, nothing to catch up');
  // Another instance changes the state; this one reaches Redis but cannot apply it yet.
  applying = false;
  await other.underLock(() => other.save([]));
  clock += 5001;
  await state.check();
  assert.notEqual(state.stale(), null, 'in touch but behind: still refused');
  applying = true;
  await state.check();
  assert.equal(state.stale(), null, 'caught up');
  assert.notEqual(served.revision, 0);
});

test(`a real partition (SIGSTOP): requests with keys answer 503 once maxStaleMs has passed, open reads go on, and keys work again once Redis answers (${RUNTIME})`, async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  defer(t, () => redis.resume());
  const { config } = await setup(t, redis.url, { maxStaleMs: 2000 });
  const served = await startServer(t, config);
  const keyed = () => send(`${served.url}/sheets/keyed`, { headers: { 'X-Api-Key': KEY } });
  assert.equal((await keyed()).status, 200);
  assert.equal((await send(`${served.url}/sheets/open`)).status, 200);
  redis.pause();
  const refused = await until(503, keyed);
  assert.equal(refused.status, 503, `${refused.status} ${refused.body}`);
  assert.equal(refused.retryAfter, '1');
  assert.match(JSON.parse(refused.body).message, /cannot tell whether API keys were revoked/);
  assert.equal((await send(`${served.url}/sheets/keyed`)).status, 503, 'with no key at all too: the keys it knows may be stale');
  assert.equal((await send(`${served.url}/sheets/open`)).status, 200, 'an open connection is served on');
  redis.resume();
  assert.equal((await until(200, keyed)).status, 200);
});

/** Google's per-minute quotas and sheetrest's budget of them are not what the burst tests. */
const NO_QUOTA = { readPerMinutePerUser: 1e6, writePerMinutePerUser: 1e6, readPerMinutePerProject: 1e6, writePerMinutePerProject: 1e6 };
const NO_BUDGET = { readsPerMinutePerUser: 1e6, writesPerMinutePerUser: 1e6, readsPerMinutePerProject: 1e6, writesPerMinutePerProject: 1e6 };
const CLIENTS = 6;
const WRITES_PER_CLIENT = 6;

test(`Redis failing mid-burst of keyed writes through two instances: every request answered, nothing lost, nothing written twice (${RUNTIME})`, async (t) => {
  const faults: [string, RedisSettings, (redis: TestRedis) => Promise<void>][] = [
    ['hung for 2.5 s', {}, async (redis) => {
      redis.pause();
      await new Promise((resolve) => setTimeout(resolve, 2500));
      redis.resume();
    }],
    ['killed, back from its append-only file after 0.5 s', { aof: true }, async (redis) => {
      await redis.stop();
      await new Promise((resolve) => setTimeout(resolve, 500));
      await redis.restart();
    }],
    ['killed and restarted empty', {}, async (redis) => {
      await redis.stop();
      await redis.restart();
    }],
  ];
  for (const [name, settings, fault] of faults) {
    await t.test(name, async (t) => {
      const redis = await redisOrSkip(t, settings);
      if (redis === null) return;
      defer(t, () => redis.resume());
      const emulator = await startEmulator({ quota: NO_QUOTA });
      defer(t, () => emulator.close());
      const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name', 'Age']] }], access: { [WRITER]: 'writer' } });
      const dir = await tempDir(t);
      const source = { type: 'google', spreadsheetId, rootUrl: emulator.rootUrl, accessToken: WRITER, retries: 0, freshnessMs: 60_000, quota: NO_BUDGET };
      await writeFile(dir.path('sheetrest.json'), JSON.stringify({ stateDir: dir.path('state'), store: { type: 'redis', url: redis.url, leaseMs: 1000 }, connections: [{ id: 'open', source }] }));
      const instances = await pair(t, await loadConfig(dir.path('sheetrest.json')));
      let acknowledged = 0;
      let faulted: Promise<void> | null = null;
      const unanswered: string[] = [];
      const refusals = new Map<number, number>();
      // Each client writes its rows in order, retrying a refused one with its key on the other instance.
      const client = async (c: number) => {
        for (let w = 0; w < WRITES_PER_CLIENT; w++) {
          const key = `c${c}-w${w}`;
          let status = 0;
          for (let attempt = 0; attempt < 400 && status !== 201; attempt++) {
            const outcome = await send(`${instances[(c + attempt) % 2].url}/sheets/open`, keyedPost(key, key));
            status = outcome.status;
            if (status === 0) unanswered.push(key);
            if (status !== 201) {
              refusals.set(status, (refusals.get(status) ?? 0) + 1);
              await new Promise((resolve) => setTimeout(resolve, 25));
            }
          }
          assert.equal(status, 201, `${key} acknowledged in the end`);
          if (++acknowledged === 8) faulted = fault(redis);
        }
      };
      await Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
      await faulted;
      t.diagnostic(`refusals while Redis failed: ${JSON.stringify(Object.fromEntries(refusals))}`);
      assert.deepEqual(unanswered, [], 'every request answered');
      assert.deepEqual([...refusals.keys()].filter((status) => status !== 503 && status !== 409), [], 'refused only with 503 or 409');
      const names = namesIn(emulator, spreadsheetId);
      const expected = Array.from({ length: CLIENTS }, (_, c) => Array.from({ length: WRITES_PER_CLIENT }, (_, w) => `c${c}-w${w}`)).flat();
      assert.deepEqual([...names].sort(), [...expected].sort(), 'every acknowledged row once, none twice');
      for (let c = 0; c < CLIENTS; c++) {
        const own = names.filter((row) => row.startsWith(`c${c}-`));
        assert.deepEqual(own, expected.filter((row) => row.startsWith(`c${c}-`)), `client ${c}'s rows in its order`);
      }
    });
  }
});

test(`an Idempotency-Key claim whose answer was lost, landing once Redis goes on, is taken back: the key is free, not left marked (${RUNTIME})`, async (t) => {
  const redis = await redisOrSkip(t);
  if (redis === null) return;
  defer(t, () => redis.resume());
  const silent = createLogger('silent');
  const [mine, theirs] = [await openRedis({ url: redis.url, log: silent }), await openRedis({ url: redis.url, log: silent })];
  defer(t, () => mine.close());
  defer(t, () => theirs.close());
  const lease = { leaseMs: 1000, leaseWaitMs: 4000 };
  const [a, b] = [redisKeyStore(mine, 'crm', lease), redisKeyStore(theirs, 'crm', lease)];
  defer(t, () => a.close());
  redis.pause();
  let ran = false;
  await assert.rejects(a.exclusive('open:k', async () => (ran = true)), (error: { code?: string }) => error.code === 'upstream_unavailable');
  assert.equal(ran, false);
  // Going on, Redis runs the claim its socket held (a mark and a lease nobody works under);
  // A takes it back once it reaches Redis again, so B's try runs instead of answering 409.
  redis.resume();
  assert.equal(await b.exclusive('open:k', async () => 'ran on B'), 'ran on B');
});
