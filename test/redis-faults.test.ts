// Redis failing under a running server: hung (SIGSTOP, what a network partition looks like: the
// connection stays up and nothing answers), killed, restarted empty or from its append-only
// file. Every request is answered while it fails (503 with Retry-After for what needs Redis,
// reads of connections without a monthly limit served), everything comes back once Redis
// answers, and no write with an Idempotency-Key lands twice. Each test starts its own
// redis-server; without one installed they are skipped, saying why.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { loadConfig, type Config } from '../server/config.ts';
import { startEmulator, type Emulator } from '../server/google-emulator/mod.ts';
import { defer, RUNTIME, startServer, tempDir, type TestContext } from './http-helpers.ts';
import { startRedis, type RedisSettings, type TestRedis } from './redis-helpers.ts';

const WRITER = 'writer-token';
const KEY = 'reader-writer-key';
/** Far longer than a bounded Redis call may take: a request still waiting then is hung. */
const HUNG_MS = 15_000;

async function redisOrSkip(t: TestContext & { skip(message?: string): void }, settings: RedisSettings = {}): Promise<TestRedis | null> {
  const redis = await startRedis(t, settings);
  if (typeof redis === 'string') {
    t.skip(redis);
    return null;
  }
  return redis;
}

interface Setup {
  readonly emulator: Emulator;
  readonly spreadsheetId: string;
  readonly config: Config;
}

/** One spreadsheet behind three connections: open, open with a monthly limit, and keyed. */
async function setup(t: TestContext, redisUrl: string, store: Record<string, unknown> = {}): Promise<Setup> {
  const emulator = await startEmulator();
  defer(t, () => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name', 'Age'], ['Ann', 30]] }], access: { [WRITER]: 'writer' } });
  const source = { type: 'google', spreadsheetId, rootUrl: emulator.rootUrl, accessToken: WRITER, retries: 0, freshnessMs: 60_000 };
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
