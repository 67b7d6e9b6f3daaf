// The change feed's cost to writes, paired (as bench/ab.ts): `POST /sheets/bench` of one row to a
// server from this tree (A, the feed on) and one from a tree without the feed (B, e.g. a worktree
// of the commit before it), both pinned to CPU 0 and loaded at the same time by their own
// `wrk -t1 -c32` on CPU 1; with 0, then 100 event streams open on A (read by a process of their
// own on CPU 1). A/B is the ratio of their POST rates: the target is at least 0.85.
//   node bench/feed.ts OTHER_TREE [node,deno,bun] [ROUNDS] [SECONDS]
//   e.g. git worktree add /tmp/nofeed fe383b6 && ln -s $PWD/node_modules /tmp/nofeed/node_modules
//        node bench/feed.ts /tmp/nofeed node,deno,bun 2 4
import { spawn, spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';
import { CAN_PIN, freePort, ROOT, startProcess, stopProcess, wrk, type Runtime, type Target } from './processes.ts';
import { generate, writeBenchBook, writePostScript } from './rows.ts';

const OTHER = process.argv[2];
if (OTHER === undefined) throw new Error('usage: node bench/feed.ts OTHER_TREE [node,deno,bun] [ROUNDS] [SECONDS]');
const RUNTIMES = (process.argv[3] ?? 'node,deno,bun').split(',') as Runtime[];
const ROUNDS = Number(process.argv[4] ?? 2);
const SECONDS = Number(process.argv[5] ?? 4);
const STREAMS = 100;
if (spawnSync('wrk', ['--version']).error !== undefined) throw new Error('wrk is not installed (apt-get install -y wrk)');

const work = await mkdtemp(join(tmpdir(), 'sheetrest-feed-'));
const rows = generate(1000);
const book = join(work, 'bench.xlsx');
await writeBenchBook(book, rows);
const post = join(work, 'post.lua');
await writePostScript(post, rows);

async function sheetrest(tree: string, runtime: Runtime, label: string): Promise<Target> {
  const home = join(work, `${runtime}-${label}-${Date.now()}`);
  await mkdir(home, { recursive: true });
  await copyFile(book, join(home, 'bench.xlsx'));
  const port = await freePort();
  const args = [join(tree, 'server/main.ts'), join(home, 'bench.xlsx'), '--port', String(port), '--log-level', 'warn', '--state-dir', join(home, 'state')];
  return startProcess({ name: `sheetrest ${label}`, runtime, args, port, probe: '/sheets/bench?_limit=1', log: join(home, 'stderr.log'), cpu: 0 });
}

/** STREAMS event streams on `url`, read by a process of their own; resolves once all are open. */
async function openStreams(url: string): Promise<{ stop(): Promise<string> }> {
  const command = [process.execPath, join(ROOT, 'bench/sse-clients.ts'), `${url}/sheets/bench/events`, String(STREAMS)];
  const child = spawn(CAN_PIN ? 'taskset' : command[0], CAN_PIN ? ['-c', '1', ...command] : command.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
  await new Promise<void>((done, fail) => {
    const check = setInterval(() => {
      if (output.includes('open')) {
        clearInterval(check);
        done();
      } else if (child.exitCode !== null) {
        clearInterval(check);
        fail(new Error('the stream clients exited'));
      }
    }, 50);
  });
  return {
    stop: () =>
      new Promise((done) => {
        child.once('exit', () => done((Number(/bytes (\d+)/.exec(output)?.[1] ?? NaN) / 1e6).toFixed(1)));
        child.kill('SIGTERM');
      }),
  };
}

console.log(`# change feed, paired: A = ${ROOT} (feed), B = ${resolve(OTHER)} (no feed); POST one row, ${SECONDS}s each, ${ROUNDS} rounds, wrk -t1 -c32, ${CAN_PIN ? 'servers on CPU 0, loaders and stream readers on CPU 1' : 'unpinned'}; load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}\n`);
console.log('| runtime | round | load | A req/s | B req/s | A/B | MB read by the streams |');
console.log('|---|---:|---|---:|---:|---:|---:|');
try {
  for (const runtime of RUNTIMES) {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const streams of [0, STREAMS]) {
        const a = await sheetrest(ROOT, runtime, 'A');
        const b = await sheetrest(resolve(OTHER), runtime, 'B');
        try {
          await Promise.all([wrk(a.url + '/sheets/bench', 1, {}, post), wrk(b.url + '/sheets/bench', 1, {}, post)]);
          const readers = streams === 0 ? null : await openStreams(a.url);
          const [aRate, bRate] = round % 2 === 1
            ? await Promise.all([wrk(a.url + '/sheets/bench', SECONDS, {}, post), wrk(b.url + '/sheets/bench', SECONDS, {}, post)])
            : await Promise.all([wrk(b.url + '/sheets/bench', SECONDS, {}, post), wrk(a.url + '/sheets/bench', SECONDS, {}, post)]).then(([bRate, aRate]) => [aRate, bRate]);
          const read = readers === null ? '-' : await readers.stop();
          console.log(`| ${runtime} | ${round} | POST, ${streams} streams | ${Math.round(aRate).toLocaleString('en-US')} | ${Math.round(bRate).toLocaleString('en-US')} | ${(aRate / bRate).toFixed(2)} | ${read} |`);
        } finally {
          await Promise.all([a, b].map(stopProcess));
        }
      }
    }
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
