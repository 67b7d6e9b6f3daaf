// Three sheetrest processes sharing one Redis, in front of the Sheets emulator, as behind a load
// balancer: a plan of 150 serves exactly 150 of 3x100 concurrent requests; a POST on one
// instance is seen by the next GET on the others; 50 concurrent PATCH and DELETE by match spread
// over the three leave the spreadsheet as a serial run does; and killing an instance while it
// holds a spreadsheet's write lease holds the others' writes back by at most the lease time,
// losing nothing acknowledged. Separate processes, not in-process servers: one process shares
// its write queue between connections, which would hide an interleaving the lease must prevent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { createClient } from 'redis';
import { startEmulator, type Emulator, type EmulatorCell } from '../../tools/google-emulator/mod.ts';
import { defer, RUNTIME, spawnServer, tempDir, type Child, type TestContext } from '../helpers/http.ts';
import { startRedis } from '../helpers/redis.ts';

const WRITER = 'writer-token';
const LEASE_MS = 1000;
const SPREADSHEETS = ['quota', 'crm', 'spread', 'serial', 'lease', 'burst'] as const;

interface Cluster {
  readonly emulator: Emulator;
  readonly ids: Record<(typeof SPREADSHEETS)[number], string>;
  readonly instances: Child[];
  readonly redisUrl: string;
}

function people(count: number): EmulatorCell[][] {
  return [['Name', 'Age'], ...Array.from({ length: count }, (_, i): EmulatorCell[] => [`r${String(i).padStart(2, '0')}`, i])];
}

/** Google's per-minute quotas would refuse this many requests; they are not what is tested here. */
const NO_QUOTA = { readPerMinutePerUser: 1e6, writePerMinutePerUser: 1e6, readPerMinutePerProject: 1e6, writePerMinutePerProject: 1e6 };
/** Nor is sheetrest's own budget of them (budget.ts), which would hold these writes back. */
const NO_BUDGET = { readsPerMinutePerUser: 1e6, writesPerMinutePerUser: 1e6, readsPerMinutePerProject: 1e6, writesPerMinutePerProject: 1e6 };

async function startCluster(t: TestContext, redisUrl: string): Promise<Cluster> {
  const emulator = await startEmulator({ quota: NO_QUOTA });
  defer(t, () => emulator.close());
  const ids = Object.fromEntries(SPREADSHEETS.map((name) => [name, emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people(60) }], access: { [WRITER]: 'writer' } })])) as Cluster['ids'];
  const source = (name: (typeof SPREADSHEETS)[number]) => ({ type: 'google', spreadsheetId: ids[name], rootUrl: emulator.rootUrl, accessToken: WRITER, retries: 0, timeoutMs: 5000, freshnessMs: 60_000, quota: NO_BUDGET });
  const dir = await tempDir(t);
  const instances = await Promise.all([0, 1, 2].map(async (n) => {
    const config = {
      stateDir: dir.path(`state-${n}`),
      log: { level: 'warn' },
      store: { type: 'redis', url: redisUrl, leaseMs: LEASE_MS, leaseWaitMs: 20_000 },
      connections: [
        { id: 'quota', source: source('quota'), plan: { name: 'p150', monthlyRequests: 150 } },
        ...SPREADSHEETS.filter((name) => name !== 'quota').map((name) => ({ id: name, source: source(name) })),
      ],
    };
    await writeFile(dir.path(`sheetrest-${n}.json`), JSON.stringify(config));
    return spawnServer(t, ['--config', dir.path(`sheetrest-${n}.json`)], 30_000);
  }));
  return { emulator, ids, instances, redisUrl };
}

async function json(url: string, init: RequestInit = {}): Promise<{ status: number; body: unknown }> {
  const answer = await fetch(url, init);
  return { status: answer.status, body: await answer.json() };
}

const send = (method: string, body?: unknown): RequestInit => ({ method, headers: { 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

/** The tab as Google holds it now, through a fresh read on `instance`. */
async function rowsOf(instance: Child, connection: string): Promise<unknown> {
  return (await json(`${instance.url}/sheets/${connection}`, { headers: { 'Cache-Control': 'no-cache' } })).body;
}

test(`three instances sharing Redis behave as one (${RUNTIME})`, async (t) => {
  const redis = await startRedis(t);
  if (typeof redis === 'string') return t.skip(redis);
  const cluster = await startCluster(t, redis.url);
  const [a, b, c] = cluster.instances;

  await t.test('3x100 concurrent requests against a plan of 150 serve exactly 150', async () => {
    const statuses = await Promise.all(Array.from({ length: 300 }, async (_, i) => {
      const answer = await fetch(`${cluster.instances[i % 3].url}/sheets/quota?_limit=1`);
      await answer.arrayBuffer();
      return answer.status;
    }));
    assert.equal(statuses.filter((status) => status === 200).length, 150);
    assert.equal(statuses.filter((status) => status === 402).length, 150);
  });

  await t.test('a POST on A is seen by an immediate GET on B and C', async () => {
    // B and C hold a snapshot (fresh for 60 s) from before the write.
    for (const instance of [b, c]) assert.equal(((await json(`${instance.url}/sheets/crm`)).body as unknown[]).length, 60);
    for (let round = 0; round < 5; round++) {
      const name = `new-${round}`;
      assert.equal((await json(`${a.url}/sheets/crm`, send('POST', { Name: name, Age: 100 + round }))).status, 201);
      for (const instance of [b, c, a]) {
        const found = await json(`${instance.url}/sheets/crm/Name/${name}`);
        assert.deepEqual(found.body, [{ Name: name, Age: String(100 + round) }], `${name} on ${instance.url}`);
      }
    }
  });

  await t.test('50 concurrent PATCH and DELETE by match over the three leave the spreadsheet as a serial run does', async () => {
    const operations = Array.from({ length: 50 }, (_, i): [string, string, unknown] => {
      const name = `r${String(i).padStart(2, '0')}`;
      return i % 2 === 0 ? ['DELETE', `/Name/${name}`, undefined] : ['PATCH', `/Name/${name}`, { Age: 1000 + i }];
    });
    // Every instance starts from a snapshot, so planning on a stale one would show.
    for (const instance of cluster.instances) await rowsOf(instance, 'spread');
    const answers = await Promise.all(operations.map(([method, path, body], i) => json(`${cluster.instances[i % 3].url}/sheets/spread${path}`, send(method, body))));
    assert.deepEqual(answers.map((answer) => (answer.status === 200 ? 200 : JSON.stringify(answer.body))), operations.map(() => 200));
    for (const [method, path, body] of operations) assert.equal((await json(`${a.url}/sheets/serial${path}`, send(method, body))).status, 200);
    const serial = await rowsOf(a, 'serial');
    assert.equal((serial as unknown[]).length, 35);
    for (const instance of cluster.instances) assert.deepEqual(await rowsOf(instance, 'spread'), serial);
  });

  await t.test('600 concurrent POSTs over the three (batches under the lease): every row exactly once, each client in its order', async () => {
    // 60 clients, 20 per instance, each sending 10 POSTs one after another.
    const answers = await Promise.all(Array.from({ length: 60 }, async (_, client) => {
      const statuses: number[] = [];
      for (let seq = 0; seq < 10; seq++) {
        const answer = await fetch(`${cluster.instances[client % 3].url}/sheets/burst`, send('POST', { Name: `c${client}-${seq}`, Age: seq }));
        await answer.arrayBuffer();
        statuses.push(answer.status);
      }
      return statuses;
    }));
    assert.deepEqual(answers.flat().filter((status) => status !== 201), []);
    const names = ((await rowsOf(a, 'burst')) as { Name: string }[]).map((row) => row.Name).filter((name) => name.startsWith('c'));
    assert.equal(names.length, 600);
    assert.equal(new Set(names).size, 600, 'no row twice');
    for (let client = 0; client < 60; client++) {
      const order = names.filter((name) => name.startsWith(`c${client}-`)).map((name) => Number(name.split('-')[1]));
      assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], `client ${client}'s rows in its order`);
    }
    const appends = cluster.emulator.requests.filter((request) => request.path.includes(cluster.ids.burst) && request.method === 'POST').length;
    assert.ok(appends < 600, `grouped: ${appends} upstream writes for 600 POSTs`);
  });

  await t.test('killing an instance holding the lease delays writes by at most the lease time and loses nothing acknowledged', async () => {
    const acknowledged: string[] = [];
    for (const [n, instance] of cluster.instances.entries()) {
      const name = `before-${n}`;
      assert.equal((await json(`${instance.url}/sheets/lease`, send('POST', { Name: name, Age: n }))).status, 201);
      acknowledged.push(name);
    }
    const client = createClient({ url: cluster.redisUrl });
    await client.connect();
    defer(t, () => client.close());
    const leaseKey = `sheetrest:sheet:${cluster.emulator.rootUrl} ${cluster.ids.lease}:lease`;
    // A's write hangs upstream while A holds the lease; A dies then.
    cluster.emulator.setLatency(30_000);
    const doomed = fetch(`${a.url}/sheets/lease/Name/r05`, send('PATCH', { Age: 555 })).catch(() => null);
    let holder: string | null = null;
    for (let attempt = 0; attempt < 200 && holder === null; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      holder = await client.get(leaseKey);
    }
    assert.notEqual(holder, null, 'A took the lease');
    a.signal('SIGKILL');
    await a.exited;
    cluster.emulator.setLatency(0);
    // Nobody renews it now: it ends within the lease time by itself.
    const left = await client.pTTL(leaseKey);
    assert.ok(left > 0 && left <= LEASE_MS, `the dead holder's lease ends within ${LEASE_MS} ms (${left} ms left)`);
    const started = performance.now();
    const after = await Promise.all([b, c].map((instance, n) => json(`${instance.url}/sheets/lease`, send('POST', { Name: `after-${n}`, Age: n }))));
    const waited = Math.round(performance.now() - started);
    assert.deepEqual(after.map((answer) => answer.status), [201, 201]);
    acknowledged.push('after-0', 'after-1');
    assert.ok(Number(await client.get(leaseKey.replace(/:lease$/, ':fence'))) > Number(holder), 'a later holder got a larger fencing token');
    const names = ((await rowsOf(b, 'lease')) as { Name: string }[]).map((row) => row.Name);
    for (const name of acknowledged) assert.ok(names.includes(name), `${name} is in the spreadsheet`);
    t.diagnostic(`writes after the kill waited ${waited} ms (lease ${LEASE_MS} ms)`);
    await doomed;
  });
});
