// Webhooks' cost to writes, paired (as bench/feed.ts): `POST /sheets/bench` of one row to two
// servers of this tree at once, both pinned to CPU 0 and loaded by their own `wrk -t1 -c32` on
// CPU 1: A with 1, then 10 webhooks to a receiver on CPU 1 (bench/webhook-receiver.ts), B with
// none. A/B is the ratio of their POST rates (target at least 0.85); the receiver gives the
// delivery latency from the event's emission (right after the write is acknowledged) to its
// arrival, p50 and p99, over the deliveries made while the load ran and the moments after.
// `cpu ms/write` is the CPU time each server process used (all its threads, from /proc/<pid>/stat:
// utime + stime) from the start of the timed window to the end of the 2 s after it (so the
// deliveries still queued are counted), divided by the writes it acknowledged (rate x seconds):
// the pinning shares CPU 0 between A's threads and B, so what the feed costs shows here too. In
// brackets, the main thread's alone (the one that answers requests).
//   node bench/webhooks.ts [node,deno,bun] [ROUNDS] [SECONDS]
// WEBHOOK_EVENTS=tab.changed gives the control without deliveries: the webhooks' filter matches
// no write, so the outbox (and the journal lines carrying the events) is written, nothing sent.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { CAN_PIN, freePort, ROOT, startProcess, stopProcess, wrk, type Runtime, type Target } from './processes.ts';
import { generate, writeBenchBook, writePostScript } from './rows.ts';

const RUNTIMES = (process.argv[2] ?? 'node').split(',') as Runtime[];
const ROUNDS = Number(process.argv[3] ?? 2);
const SECONDS = Number(process.argv[4] ?? 4);
if (spawnSync('wrk', ['--version']).error !== undefined) throw new Error('wrk is not installed (apt-get install -y wrk)');

const work = await mkdtemp(join(tmpdir(), 'sheetrest-webhooks-'));
const rows = generate(1000);
const book = join(work, 'bench.xlsx');
await writeBenchBook(book, rows);
const post = join(work, 'post.lua');
await writePostScript(post, rows);

/** A server of the bench book with `hooks` webhooks to `receiver` (its own copy and state folder). */
async function sheetrest(runtime: Runtime, label: string, hooks: number, receiver: string): Promise<Target> {
  const home = join(work, `${runtime}-${label}-${Date.now()}`);
  await mkdir(home, { recursive: true });
  await copyFile(book, join(home, 'bench.xlsx'));
  const port = await freePort();
  const events = process.env.WEBHOOK_EVENTS === undefined ? {} : { events: process.env.WEBHOOK_EVENTS.split(',') };
  const webhooks = Array.from({ length: hooks }, (_, n) => ({ url: `${receiver}/hook/${n}`, secret: `bench-secret-${n}`, name: `hook-${n + 1}`, ...events }));
  const config = {
    port,
    stateDir: join(home, 'state'),
    log: { level: 'warn' },
    webhooks: { allowPrivateTargets: true },
    connections: [{ id: 'bench', source: { type: 'file', path: join(home, 'bench.xlsx') }, ...(hooks > 0 ? { webhooks } : {}) }],
  };
  await writeFile(join(home, 'sheetrest.json'), JSON.stringify(config));
  const args = [join(ROOT, 'server/main.ts'), '--config', join(home, 'sheetrest.json')];
  return startProcess({ name: `sheetrest ${label}`, runtime, args, port, probe: '/sheets/bench?_limit=1', log: join(home, 'stderr.log'), cpu: 0 });
}

/**
 * CPU time a process used so far, all its threads (user + system), in ms, or its main thread's
 * alone (the one answering requests; its task id is the process id); NaN without /proc.
 */
function cpuMs(target: Target, thread: 'all' | 'main' = 'all'): number {
  try {
    const pid = target.process.pid;
    // After `pid (comm) state`: utime and stime are the 12th and 13th fields, in clock ticks (100 a second).
    const fields = readFileSync(thread === 'all' ? `/proc/${pid}/stat` : `/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return NaN;
  }
}

async function startReceiver(): Promise<{ url: string; stop(): Promise<string> }> {
  const port = await freePort();
  const command = [process.execPath, join(ROOT, 'bench/webhook-receiver.ts'), String(port)];
  const child = spawn(CAN_PIN ? 'taskset' : command[0], CAN_PIN ? ['-c', '1', ...command] : command.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
  while (!output.includes('listening')) {
    if (child.exitCode !== null) throw new Error('the receiver exited');
    await sleep(20);
  }
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise((done) => {
        child.once('exit', () => done(/received.*/.exec(output)?.[0] ?? 'received nothing'));
        child.kill('SIGTERM');
      }),
  };
}

console.log(`# webhooks, paired: A with 1 or 10 webhooks, B with none (both ${ROOT}); POST one row, ${SECONDS}s each, ${ROUNDS} rounds, wrk -t1 -c32, ${CAN_PIN ? 'servers on CPU 0, loaders and receiver on CPU 1' : 'unpinned'}; load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}\n`);
console.log('| runtime | round | webhooks | A req/s | B req/s | A/B | A cpu ms/write (main thread) | B cpu ms/write (main thread) | deliveries, latency ms |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---|');
try {
  for (const runtime of RUNTIMES) {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const hooks of [1, 10]) {
        const receiver = await startReceiver();
        const a = await sheetrest(runtime, 'A', hooks, receiver.url);
        const b = await sheetrest(runtime, 'B', 0, receiver.url);
        let received = '';
        try {
          await Promise.all([wrk(a.url + '/sheets/bench', 1, {}, post), wrk(b.url + '/sheets/bench', 1, {}, post)]);
          await sleep(1000);
          const cpuBefore = [cpuMs(a), cpuMs(b), cpuMs(a, 'main'), cpuMs(b, 'main')];
          const [aRate, bRate] = round % 2 === 1
            ? await Promise.all([wrk(a.url + '/sheets/bench', SECONDS, {}, post), wrk(b.url + '/sheets/bench', SECONDS, {}, post)])
            : await Promise.all([wrk(b.url + '/sheets/bench', SECONDS, {}, post), wrk(a.url + '/sheets/bench', SECONDS, {}, post)]).then(([bRate, aRate]) => [aRate, bRate]);
          // The deliveries still queued when the load stops are timed too, so wait for them a moment.
          await sleep(2000);
          const [aCpu, bCpu, aMain, bMain] = [cpuMs(a) - cpuBefore[0], cpuMs(b) - cpuBefore[1], cpuMs(a, 'main') - cpuBefore[2], cpuMs(b, 'main') - cpuBefore[3]];
          received = await receiver.stop();
          const perWrite = (ms: number, rate: number) => (ms / (rate * SECONDS)).toFixed(3);
          console.log(`| ${runtime} | ${round} | ${hooks} | ${Math.round(aRate).toLocaleString('en-US')} | ${Math.round(bRate).toLocaleString('en-US')} | ${(aRate / bRate).toFixed(2)} | ${perWrite(aCpu, aRate)} (${perWrite(aMain, aRate)}) | ${perWrite(bCpu, bRate)} (${perWrite(bMain, bRate)}) | ${received} |`);
        } finally {
          await Promise.all([a, b].map(stopProcess));
        }
      }
    }
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
