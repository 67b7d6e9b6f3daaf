// Memory benchmark: resident memory of sheetrest serving a 1,000-row CSV, idle and after a
// read-only load, on Node, Deno and Bun, beside a bare server of the same runtime answering the
// same bytes (bench/bare-server.ts). `node bench/memory.ts`; BENCH_SECONDS (load per phase,
// default 8) and BENCH_RUNTIMES (node,deno,bun) change the defaults. Loads 127.0.0.1 only, with
// wrk when installed, else autocannon.
//
// `node bench/memory.ts mixed [minutes]` (issue 20, part 13): a server on a copy of the demo
// workbook takes minutes (default 5; BENCH_MINUTES too) of mixed reads and writes
// (bench/mixed-load.ts); its resident set after the load is compared with that of a fresh
// server started on the file the load left, each after the same warm-up reads and a settling
// pause (BENCH_SETTLE_SECONDS, default 30: long enough for the fold of what the load wrote and
// a quiet spell after it). Target: at most 1.5x. BENCH_RUNTIMES defaults to node in this mode.
//
import autocannon from 'autocannon';
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { mixedLoad, MIXED_CONNECTIONS, warmUp, type MixedLoadResult } from './mixed-load.ts';
import { freePort, memoryMb, ROOT, startProcess, stopProcess, type Runtime, type Target } from './processes.ts';

const MIXED = process.argv[2] === 'mixed';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const RUNTIMES = (process.env.BENCH_RUNTIMES ?? (MIXED ? 'node' : 'node,deno,bun')).split(',') as Runtime[];
const TOOL = process.env.BENCH_TOOL ?? (spawnSync('wrk', ['--version']).error === undefined ? 'wrk' : 'autocannon');
const dir = await mkdtemp(join(tmpdir(), 'sheetrest-memory-'));

/** Starts a server whose arguments name its port as PORT. */
async function run(runtime: Runtime, args: string[], probe: string, env: Record<string, string> = {}): Promise<Target> {
  const port = await freePort();
  const name = `${runtime} ${args[0]}`;
  return startProcess({ name, runtime, args: args.map((arg) => arg.replace('PORT', String(port))), port, probe, log: join(dir, `${runtime}-${port}.log`), env });
}

async function load(url: string): Promise<void> {
  if (TOOL === 'wrk') {
    spawnSync('wrk', ['-t1', '-c16', `-d${SECONDS}s`, url]);
    return;
  }
  await autocannon({ url, connections: 16, duration: SECONDS });
}

interface Figures {
  readonly idle: number;
  readonly loaded: number;
  readonly peak: number;
}

/** Idle two seconds after the first answer; then all rows, then a filter, SECONDS each. */
async function measure(running: Target, allRows: string, filter: string | null): Promise<Figures> {
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const idle = Math.round(memoryMb(running.process, 'VmRSS'));
  await load(running.url + allRows);
  if (filter !== null) await load(running.url + filter);
  return { idle, loaded: Math.round(memoryMb(running.process, 'VmRSS')), peak: Math.round(memoryMb(running.process, 'VmHWM')) };
}

/** The read-only benchmark: idle and after a read load, beside a bare server. */
async function readLoadBench(): Promise<void> {
  const CITIES = ['Lisbon', 'Berlin', 'Paris', 'Seoul', 'Zürich', 'Porto', 'Oslo', 'Lima'];
  let csv = 'Name,Age,City,Score\n';
  for (let i = 0; i < 1000; i++) csv += `Person ${i},${18 + ((i * 13) % 60)},${CITIES[(i * 5) % CITIES.length]},${((i * 37) % 1000) / 10}\n`;
  const book = join(dir, 'bench.csv');
  await writeFile(book, csv);

  const rows: Array<[string, Figures]> = [];
  try {
    for (const runtime of RUNTIMES) {
      const env: Record<string, string> = runtime === 'node' ? { NODE_COMPILE_CACHE: join(dir, 'compile-cache') } : {};
      const entry = runtime === 'node' ? 'server/cli.js' : 'server/main.ts';
      const serve = (extra: Record<string, string> = {}) =>
        run(runtime, [entry, book, '--port', 'PORT', '--log-level', 'warn', '--state-dir', join(dir, `state-${runtime}`)], '/sheets/bench?_limit=1', { ...env, ...extra });
      if (runtime === 'node') {
        const first = await serve();
        rows.push(['Node, first start (types stripped)', await measure(first, '/sheets/bench', null)]);
        await stopProcess(first);
      }
      const server = await serve();
      const bytes = join(dir, `rows-${runtime}.json`);
      await writeFile(bytes, new Uint8Array(await (await fetch(`${server.url}/sheets/bench`)).arrayBuffer()));
      rows.push([runtime === 'node' ? 'Node' : runtime === 'deno' ? 'Deno' : 'Bun', await measure(server, '/sheets/bench', '/sheets/bench/City/Lisbon')]);
      await stopProcess(server);
      if (runtime === 'node') {
        const capped = await serve({ NODE_OPTIONS: '--max-semi-space-size=2' });
        rows.push(['Node, semi-space 2 MB', await measure(capped, '/sheets/bench', '/sheets/bench/City/Lisbon')]);
        await stopProcess(capped);
      }
      // The bare server answers the same bytes on every path; a compile cache for Node's as well.
      for (let pass = runtime === 'node' ? 0 : 1; pass < 2; pass++) {
        const bare = await run(runtime, ['bench/bare-server.ts', bytes, 'PORT'], '/', env);
        if (pass === 1) rows.push([`bare ${runtime} server`, await measure(bare, '/', '/')]);
        await stopProcess(bare);
      }
      console.error(`${runtime} done`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  console.log(`# Memory: 1,000-row CSV, resident set (MB); load ${SECONDS}s all rows + ${SECONDS}s of a 1/8 filter, 16 connections, ${TOOL}\n`);
  console.log('| server | idle | after the read load | peak |');
  console.log('|---|---:|---:|---:|');
  for (const [name, { idle, loaded, peak }] of rows) console.log(`| ${name} | ${idle} | ${loaded} | ${peak} |`);
}

const MINUTES = Number(process.argv[3] ?? process.env.BENCH_MINUTES ?? 5);
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 30);
/** The target of issue 20, part 13: after the load, at most this times a fresh start on the resulting file. */
const MIXED_TARGET = 1.5;

interface MixedFigures {
  readonly runtime: Runtime;
  /** RSS of a fresh server on the demo workbook, after the warm-up reads and the pause. */
  readonly fresh: number;
  /** RSS of the same server after the load, the warm-up reads and the pause; its peak. */
  readonly loaded: number;
  readonly peak: number;
  /** RSS of a fresh server on the file the load left, after the warm-up reads and the pause. */
  readonly restarted: number;
  readonly load: MixedLoadResult;
}

/** The warm-up reads, then the settling pause, then the resident set (MB). */
async function settledRss(server: Target): Promise<number> {
  await warmUp(server.url);
  await new Promise((resolve) => setTimeout(resolve, SETTLE_SECONDS * 1000));
  return Math.round(memoryMb(server.process, 'VmRSS'));
}

/** Issue 20, part 13: a mixed load's server against a fresh one on the file it left. */
async function mixedBench(): Promise<void> {
  const figures: MixedFigures[] = [];
  try {
    for (const runtime of RUNTIMES) {
      // The connection is named after the file: demo.
      await mkdir(join(dir, runtime));
      const book = join(dir, runtime, 'demo.xlsx');
      await copyFile(join(ROOT, 'fixtures/demo.xlsx'), book);
      const env: Record<string, string> = runtime === 'node' ? { NODE_COMPILE_CACHE: join(dir, 'compile-cache') } : {};
      const entry = runtime === 'node' ? 'server/cli.js' : 'server/main.ts';
      const serve = () => run(runtime, [entry, book, '--port', 'PORT', '--log-level', 'warn', '--state-dir', join(dir, `state-${runtime}`)], '/sheets/demo?_limit=1', env);
      if (runtime === 'node') await stopProcess(await serve()); // fills the compile cache: both measured starts read it
      const server = await serve();
      const fresh = await settledRss(server);
      console.error(`${runtime}: fresh ${fresh} MB; ${MINUTES} min of mixed load`);
      const load = await mixedLoad(server.url, MINUTES * 60);
      const loaded = await settledRss(server);
      const peak = Math.round(memoryMb(server.process, 'VmHWM'));
      // Stopping folds what the journal still holds into the file: the next start reads it all from the file.
      await stopProcess(server);
      const again = await serve();
      const restarted = await settledRss(again);
      await stopProcess(again);
      figures.push({ runtime, fresh, loaded, peak, restarted, load });
      console.error(`${runtime}: after the load ${loaded} MB (peak ${peak}), a fresh start on the result ${restarted} MB, ${load.rows} rows`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  console.log(`# Memory under mixed load: demo workbook, ${MINUTES} min, ${MIXED_CONNECTIONS} connections; resident set (MB) after ${SETTLE_SECONDS} s settling\n`);
  console.log('| runtime | fresh start | after the load | peak | fresh start on the result | ratio (target <= 1.5) | rows after | requests |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---|');
  for (const { runtime, fresh, loaded, peak, restarted, load } of figures) {
    const ratio = loaded / restarted;
    const requests = Object.entries(load.counts).sort().map(([kind, count]) => `${kind}: ${count}`).join(', ');
    console.log(`| ${runtime} | ${fresh} | ${loaded} | ${peak} | ${restarted} | ${ratio.toFixed(2)} ${ratio <= MIXED_TARGET ? 'pass' : 'FAIL'} | ${load.rows} | ${requests} |`);
  }
  if (figures.some(({ loaded, restarted }) => loaded / restarted > MIXED_TARGET)) process.exitCode = 1;
}

if (MIXED) await mixedBench();
else await readLoadBench();
