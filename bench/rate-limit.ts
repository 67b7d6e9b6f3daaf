// What a plan's rate limit costs a request (issue 26, part 6; figures in docs/benchmarks.md):
// the same server with and without `"rateLimit"` on its plan, measured paired as bench/pairs.ts
// does: both servers pinned to CPU 0, each loaded at the same time by its own `wrk -t1 -c32` on
// CPU 1, so the two share one core's time and each serves in proportion to its own cost per
// request. Twice: counts in memory (no store), then shared through Redis (both servers with the
// same `store`; redis-server on CPU 1 with the loaders, so the figure is what the check costs
// the sheetrest process). The request is the cheapest there is, a kept read (`GET
// /sheets/demo?_limit=20` with a key), so the check's share is as large as it gets. The limit
// is far above what wrk sends: every request is served, none is refused.
// Per round the ratio B/A (limited / not); the median over the rounds is the figure.
//   node bench/rate-limit.ts [node|deno|bun] [ROUNDS] [SECONDS]
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { CAN_PIN, freePort, startProcess, startRedisServer, stopProcess, wrk, type Runtime, type Target } from './processes.ts';

const RUNTIME = (process.argv[2] ?? 'node') as Runtime;
const ROUNDS = Number(process.argv[3] ?? 6);
const SECONDS = Number(process.argv[4] ?? 4);
const KEY = 'bench-key';
if (spawnSync('wrk', ['--version']).error !== undefined) throw new Error('wrk is not installed (apt-get install -y wrk)');
const hasRedis = spawnSync('redis-server', ['--version']).error === undefined;
if (!CAN_PIN) console.log('(taskset or a second core is missing: the runs are unpinned)');

const work = await mkdtemp(join(tmpdir(), 'sheetrest-rate-limit-'));
const cleanups: (() => unknown)[] = [() => rm(work, { recursive: true, force: true })];


const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

try {
  const rows = ['Name,Age,City', ...Array.from({ length: 1000 }, (_, n) => `Person ${n},${20 + (n % 50)},${['Lisbon', 'Oslo', 'Lima'][n % 3]}`)].join('\n');
  const start = async (label: string, store: object, rateLimit: object): Promise<Target> => {
    await writeFile(join(work, `${label}.csv`), `${rows}\n`);
    const config = {
      stateDir: join(work, `state-${label}`),
      log: { level: 'warn' },
      ...store,
      connections: [{ id: 'demo', source: { type: 'file', path: `${label}.csv` }, keys: [{ key: KEY }], plan: { name: 'bench', ...rateLimit } }],
    };
    const file = join(work, `sheetrest-${label}.json`);
    await writeFile(file, JSON.stringify(config));
    const port = await freePort();
    return startProcess({ name: label, runtime: RUNTIME, args: ['server/main.ts', '--config', file, '--port', String(port)], port, probe: '/sheets/demo?_limit=20', probeStatus: 401, log: join(work, `${label}.log`), cpu: 0 });
  };
  const limit = { rateLimit: { requests: 1_000_000_000, perSeconds: 60 } };
  const stores: [string, object][] = [['memory', {}]];
  if (hasRedis) {
    const redis = await startRedisServer();
    cleanups.push(() => redis.child.kill('SIGKILL'));
    stores.push(['redis', { store: { type: 'redis', url: redis.url } }]);
  } else console.log('(redis-server is not installed: the Redis pair is left out)');

  console.log(`# ${RUNTIME}: kept reads, GET /sheets/demo?_limit=20 with X-Api-Key (1,000 rows), wrk -t1 -c32, ${SECONDS} s a run, ${ROUNDS} rounds, paired, ${CAN_PIN ? 'servers on CPU 0, wrk and Redis on CPU 1' : 'unpinned'}\n`);
  console.log('| counts | round | no limit req/s | rate limit req/s | limit / no limit |');
  console.log('|---|---:|---:|---:|---:|');
  for (const [name, store] of stores) {
    const without = await start(`${name}-plain`, store, {});
    const limited = await start(`${name}-limited`, store, limit);
    const path = '/sheets/demo?_limit=20';
    const headers = { 'X-Api-Key': KEY };
    try {
      // A second of each first, so no server is timed while its JIT warms up.
      await Promise.all([wrk(without.url + path, 1, headers), wrk(limited.url + path, 1, headers)]);
      const ratios: number[] = [];
      for (let round = 1; round <= ROUNDS; round++) {
        const [a, b] = round % 2 === 1
          ? await Promise.all([wrk(without.url + path, SECONDS, headers), wrk(limited.url + path, SECONDS, headers)])
          : await Promise.all([wrk(limited.url + path, SECONDS, headers), wrk(without.url + path, SECONDS, headers)]).then(([second, first]) => [first, second]);
        ratios.push(b / a);
        console.log(`| ${name} | ${round} | ${Math.round(a).toLocaleString('en-US')} | ${Math.round(b).toLocaleString('en-US')} | ${(b / a).toFixed(2)} |`);
      }
      console.log(`| ${name} | median | | | **${median(ratios).toFixed(2)}** |`);
    } finally {
      await Promise.all([stopProcess(without), stopProcess(limited)]);
    }
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}
