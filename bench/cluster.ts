// Scale-out benchmark (docs/scaling.md, figures in docs/benchmarks.md): `node bench/cluster.ts`.
// Starts a redis-server on a free loopback port, the Sheets emulator, and sheetrest instances as
// child processes sharing that Redis, then measures
// - cached reads (`GET /sheets/open?_limit=20`, a snapshot fresh for 60 s) through 1, 2 and 3
//   instances (one wrk per instance, run together), and through one instance without Redis;
// - the shared quota check's added latency: Redis's one-step check and count against the state
//   folder's in-memory one, and the version GET (which a read pays only while its instance's
//   subscription to the versions is down, server/sources/google/shared-versions.ts), each awaited one after another;
// - writes per second on one spreadsheet (POST, and PATCH by match) from 12 clients spread over
//   the instances, against one instance without Redis.
// BENCH_SECONDS (default 5) is each wrk run's length. The figures depend on the machine; on a
// shared 2-core machine, more instances mostly share the same two cores with wrk and Redis.
import { spawn, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator, type EmulatorCell } from '../tools/google-emulator/mod.ts';
import { createLogger } from '../server/log.ts';
import { openQuotaStore } from '../server/quota/quota.ts';
import { openRedisQuota } from '../server/quota/redis-store.ts';
import { openRedis } from '../server/redis/client.ts';
import { spreadsheetCoordination } from '../server/sources/google/shared-spreadsheet.ts';
import { spawnServer, type Child } from '../test/helpers/http.ts';
import { startRedis } from '../test/helpers/redis.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const TOKEN = 'bench-writer';
const cleanups: (() => unknown)[] = [];
const context = { after: (fn: () => unknown) => void cleanups.push(fn) };

const redis = await startRedis(context);
if (typeof redis === 'string') {
  console.log(`skipped: ${redis}`);
  process.exit(0);
}
const redisUrl = redis.url;
/** sheetrest's own budget of Google's per-minute quotas (budget.ts) would hold the benchmark's requests back. */
const NO_BUDGET = { readsPerMinutePerUser: 1e9, writesPerMinutePerUser: 1e9, readsPerMinutePerProject: 1e9, writesPerMinutePerProject: 1e9 };
const emulator = await startEmulator({ quota: { readPerMinutePerUser: 1e9, writePerMinutePerUser: 1e9, readPerMinutePerProject: 1e9, writePerMinutePerProject: 1e9 } });
cleanups.push(() => emulator.close());
const dir = await mkdtemp(join(tmpdir(), 'sheetrest-bench-cluster-'));
cleanups.push(() => rm(dir, { recursive: true, force: true }));

function people(count: number): EmulatorCell[][] {
  return [['Name', 'Age', 'City'], ...Array.from({ length: count }, (_, n): EmulatorCell[] => [`Person ${n}`, 20 + (n % 50), ['Lisbon', 'Oslo', 'Lima'][n % 3]])];
}

let instanceCount = 0;
async function instances(count: number, shared: boolean, spreadsheetId: string): Promise<Child[]> {
  return Promise.all(Array.from({ length: count }, async () => {
    const n = instanceCount++;
    const source = { type: 'google', spreadsheetId, rootUrl: emulator.rootUrl, accessToken: TOKEN, freshnessMs: 60_000, retries: 0, quota: NO_BUDGET };
    const config = {
      stateDir: join(dir, `state-${n}`),
      log: { level: 'warn' },
      ...(shared ? { store: { type: 'redis', url: redisUrl } } : {}),
      connections: [
        { id: 'open', source },
        { id: 'limited', source, plan: { name: 'big', monthlyRequests: 1_000_000_000 } },
      ],
    };
    await writeFile(join(dir, `sheetrest-${n}.json`), JSON.stringify(config));
    return spawnServer(context, ['--config', join(dir, `sheetrest-${n}.json`)], 30_000);
  }));
}

/** Runs wrk against every URL at once (4 connections each); the summed requests per second. */
function wrkTogether(urls: string[]): Promise<number> {
  return Promise.all(urls.map((url) => new Promise<number>((resolve) => {
    const child = spawn('wrk', ['-t1', '-c4', `-d${SECONDS}s`, url], { stdio: ['ignore', 'pipe', 'ignore'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
    child.on('close', () => resolve(Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN)));
  }))).then((all) => all.reduce((sum, rps) => sum + rps, 0));
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
}

async function timeEach(count: number, step: () => unknown): Promise<{ p50: number; p99: number }> {
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await step();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 0.5), p99: percentile(times, 0.99) };
}

const ms = (value: number) => `${value.toFixed(3)} ms`;

try {
  if (spawnSync('wrk', ['--version']).error !== undefined) throw new Error('wrk is needed for the read figures');
  const readSheet = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people(1000) }], access: { [TOKEN]: 'writer' } });
  console.log(`cached reads, GET /sheets/<id>?_limit=20, ${SECONDS} s, 4 connections per instance`);
  const alone = await instances(1, false, readSheet);
  for (const path of ['open', 'limited']) {
    await fetch(`${alone[0].url}/sheets/${path}?_limit=20`).then((answer) => answer.arrayBuffer());
    console.log(`  1 instance, no Redis, /sheets/${path}: ${Math.round(await wrkTogether([`${alone[0].url}/sheets/${path}?_limit=20`]))} req/s`);
  }
  for (const child of alone) child.signal('SIGTERM');
  const cluster = await instances(3, true, readSheet);
  for (const path of ['open', 'limited']) {
    for (const count of [1, 2, 3]) {
      const urls = cluster.slice(0, count).map((child) => `${child.url}/sheets/${path}?_limit=20`);
      for (const url of urls) await fetch(url).then((answer) => answer.arrayBuffer());
      console.log(`  ${count} instance(s) sharing Redis, /sheets/${path}: ${Math.round(await wrkTogether(urls))} req/s`);
    }
  }

  console.log('one check at a time, in this process (5,000 each)');
  const log = createLogger('silent');
  const local = await openQuotaStore({ stateDir: join(dir, 'local-quota') });
  const connection = await openRedis({ url: redis.url, log });
  const shared = await openRedisQuota({ redis: connection, log });
  const plan = { name: 'big', monthlyRequests: 1_000_000_000, operations: ['read' as const] };
  const localTimes = await timeEach(5000, () => local.take('bench', plan, 'read'));
  const sharedTimes = await timeEach(5000, () => shared.take('bench', plan, 'read'));
  const versions = spreadsheetCoordination(connection, 'bench', { leaseMs: 5000, leaseWaitMs: 5000 }, () => undefined);
  const versionTimes = await timeEach(5000, () => versions.version());
  console.log(`  quota, state folder (in memory): p50 ${ms(localTimes.p50)}, p99 ${ms(localTimes.p99)}`);
  console.log(`  quota, Redis (Lua check and count): p50 ${ms(sharedTimes.p50)}, p99 ${ms(sharedTimes.p99)}; added p50 ${ms(sharedTimes.p50 - localTimes.p50)}`);
  console.log(`  spreadsheet version GET (a read while not subscribed): p50 ${ms(versionTimes.p50)}, p99 ${ms(versionTimes.p99)}`);
  await local.close();
  await connection.close();

  console.log('writes to one spreadsheet, 12 clients, 300 writes each kind');
  const writeSheet = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people(300) }], access: { [TOKEN]: 'writer' } });
  const single = await instances(1, false, writeSheet);
  const writers = async (targets: Child[], label: string) => {
    const kinds: [string, (i: number) => [string, { method: string; body: string }]][] = [
      ['POST', (i) => [`/sheets/open`, { method: 'POST', body: JSON.stringify({ Name: `New ${label} ${i}`, Age: 1 }) }]],
      ['PATCH by match', (i) => [`/sheets/open/Name/${encodeURIComponent(`Person ${i}`)}`, { method: 'PATCH', body: JSON.stringify({ Age: 99 }) }]],
    ];
    for (const [kind, request] of kinds) {
      let next = 0;
      const started = performance.now();
      let failed = 0;
      await Promise.all(Array.from({ length: 12 }, async (_, client) => {
        for (let i = next++; i < 300; i = next++) {
          const [path, init] = request(i);
          const answer = await fetch(`${targets[(client + i) % targets.length].url}${path}`, { ...init, headers: { 'Content-Type': 'application/json' } });
          if (answer.status >= 300) failed++;
          await answer.arrayBuffer();
        }
      }));
      const seconds = (performance.now() - started) / 1000;
      console.log(`  ${label}, ${kind}: ${Math.round(300 / seconds)} writes/s${failed > 0 ? ` (${failed} failed)` : ''}`);
    }
  };
  await writers(single, '1 instance, no Redis');
  for (const child of single) child.signal('SIGTERM');
  const three = await instances(3, true, writeSheet);
  // One instance with Redis separates the lease's own cost from three processes on one spreadsheet.
  await writers(three.slice(0, 1), '1 instance with Redis');
  await writers(three, '3 instances sharing Redis');
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}
