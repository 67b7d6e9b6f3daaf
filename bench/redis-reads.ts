// What Redis costs a cached read (issue 21, part 10; docs/scaling.md, figures in
// docs/benchmarks.md): one sheetrest instance without Redis and one with, the same config and the
// same spreadsheet served by the Sheets emulator, measured paired as bench/pairs.ts does: both
// servers pinned to CPU 0, each loaded at the same time by its own `wrk -t1 -c32` on CPU 1, so
// the two share one core's time and each serves in proportion to its own cost per read (a slow
// spell of this shared machine falls on both at once; runs one after the other differed by 2x
// here). redis-server runs on CPU 1 with the loaders: the figure is what Redis costs the
// sheetrest process, not Redis's own CPU. Rounds alternate which of the two wrk starts first.
// Per round the ratio B/A (with Redis / without); the median over the rounds is the figure. Cached reads: `GET
// /sheets/open?_limit=20` of a tab fresh for 60 s, on a connection without a plan (no quota round
// trip, the version kept locally) and on one with a monthly limit (one quota script per read).
//   node bench/redis-reads.ts [node|deno|bun] [ROUNDS] [SECONDS]
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { startEmulator, type EmulatorCell } from '../tools/google-emulator/mod.ts';
import { CAN_PIN, freePort, startProcess, startRedisServer, stopProcess, wrk, type Runtime, type Target } from './processes.ts';

const RUNTIME = (process.argv[2] ?? 'node') as Runtime;
const ROUNDS = Number(process.argv[3] ?? 6);
const SECONDS = Number(process.argv[4] ?? 4);
const TOKEN = 'bench-reader';
if (spawnSync('wrk', ['--version']).error !== undefined) throw new Error('wrk is not installed (apt-get install -y wrk)');
if (spawnSync('redis-server', ['--version']).error !== undefined) throw new Error('redis-server is not installed (apt-get install -y redis-server)');
if (!CAN_PIN) console.log('(taskset or a second core is missing: the runs are unpinned)');

const work = await mkdtemp(join(tmpdir(), 'sheetrest-redis-reads-'));
const cleanups: (() => unknown)[] = [() => rm(work, { recursive: true, force: true })];


function people(count: number): EmulatorCell[][] {
  return [['Name', 'Age', 'City'], ...Array.from({ length: count }, (_, n): EmulatorCell[] => [`Person ${n}`, 20 + (n % 50), ['Lisbon', 'Oslo', 'Lima'][n % 3]])];
}


const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

try {
  const redis = await startRedisServer();
  cleanups.push(() => redis.child.kill('SIGKILL'));
  const noBudget = { readsPerMinutePerUser: 1e9, writesPerMinutePerUser: 1e9, readsPerMinutePerProject: 1e9, writesPerMinutePerProject: 1e9 };
  const emulator = await startEmulator({ quota: { readPerMinutePerUser: 1e9, writePerMinutePerUser: 1e9, readPerMinutePerProject: 1e9, writePerMinutePerProject: 1e9 } });
  cleanups.push(() => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people(1000) }], access: { [TOKEN]: 'writer' } });
  const source = { type: 'google', spreadsheetId, rootUrl: emulator.rootUrl, accessToken: TOKEN, freshnessMs: 60_000, retries: 0, quota: noBudget };
  const start = async (label: string, store: object): Promise<Target> => {
    const config = {
      stateDir: join(work, `state-${label}`),
      log: { level: 'warn' },
      ...store,
      connections: [
        { id: 'open', source },
        { id: 'limited', source, plan: { name: 'big', monthlyRequests: 1_000_000_000 } },
      ],
    };
    const file = join(work, `sheetrest-${label}.json`);
    await writeFile(file, JSON.stringify(config));
    const port = await freePort();
    return startProcess({ name: label, runtime: RUNTIME, args: ['server/main.ts', '--config', file, '--port', String(port)], port, probe: '/sheets/open?_limit=20', log: join(work, `${label}.log`), cpu: 0 });
  };
  const without = await start('alone', {});
  const withRedis = await start('redis', { store: { type: 'redis', url: redis.url } });
  cleanups.push(() => Promise.all([stopProcess(without), stopProcess(withRedis)]));

  console.log(`# ${RUNTIME}: cached reads, GET /sheets/<connection>?_limit=20 (1,000 rows, fresh for 60 s), wrk -t1 -c32, ${SECONDS} s a run, ${ROUNDS} rounds, paired, ${CAN_PIN ? 'servers on CPU 0, wrk and Redis on CPU 1' : 'unpinned'}\n`);
  console.log('| connection | round | no Redis req/s | Redis req/s | Redis / no Redis |');
  console.log('|---|---:|---:|---:|---:|');
  for (const connection of ['open', 'limited']) {
    const path = `/sheets/${connection}?_limit=20`;
    // A second of each first, so no server is timed while its JIT warms up.
    await Promise.all([wrk(without.url + path, 1), wrk(withRedis.url + path, 1)]);
    const ratios: number[] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const [a, b] = round % 2 === 1
        ? await Promise.all([wrk(without.url + path, SECONDS), wrk(withRedis.url + path, SECONDS)])
        : await Promise.all([wrk(withRedis.url + path, SECONDS), wrk(without.url + path, SECONDS)]).then(([second, first]) => [first, second]);
      ratios.push(b / a);
      console.log(`| ${connection} | ${round} | ${Math.round(a).toLocaleString('en-US')} | ${Math.round(b).toLocaleString('en-US')} | ${(b / a).toFixed(2)} |`);
    }
    console.log(`| ${connection} | median | | | **${median(ratios).toFixed(2)}** |`);
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup();
}
