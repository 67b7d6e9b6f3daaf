// A paired A/B of two trees of this project: the same sheetrest request served by a server
// started from this tree (A) and one started from another checkout (B, e.g. a worktree of the
// commit before a change), both pinned to CPU 0 and loaded at the same time by their own
// `wrk -t1 -c32` on CPU 1. As in bench/pairs.ts, the two share their core's time, so A/B is the
// ratio of their costs per request, steady where two runs one after the other are not.
//   node bench/ab.ts OTHER_TREE [node,deno,bun] [ROUNDS] [SECONDS]
//   e.g. git worktree add /tmp/base 5af5af8 && ln -s $PWD/node_modules /tmp/base/node_modules
//        node bench/ab.ts /tmp/base node,bun,deno 2 4
// Loads (1,000 rows): the kept 304 of an exact filter at --log-level warn and at the default
// info, the kept 200 of that filter, and the whole tab. Needs wrk and taskset.
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';
import { CAN_PIN, freePort, ROOT, startProcess, stopProcess, wrk, type Runtime, type Target } from './processes.ts';
import { generate, writeBenchBook } from './rows.ts';

const OTHER = process.argv[2];
if (OTHER === undefined) throw new Error('usage: node bench/ab.ts OTHER_TREE [node,deno,bun] [ROUNDS] [SECONDS]');
const RUNTIMES = (process.argv[3] ?? 'node,deno,bun').split(',') as Runtime[];
const ROUNDS = Number(process.argv[4] ?? 2);
const SECONDS = Number(process.argv[5] ?? 4);
if (spawnSync('wrk', ['--version']).error !== undefined) throw new Error('wrk is not installed (apt-get install -y wrk)');
if (!CAN_PIN) console.log('(taskset or a second core is missing: the pairs run unpinned)');

const work = await mkdtemp(join(tmpdir(), 'sheetrest-ab-'));
const rows = generate(1000);
const book = join(work, 'bench.xlsx');
await writeBenchBook(book, rows);
const filter = `/sheets/bench/Name/${encodeURIComponent(rows[500].Name)}`;

/** A server of the bench book from `tree` (its own copy and state folder). */
async function sheetrest(tree: string, runtime: Runtime, label: string, level: 'warn' | 'info'): Promise<Target> {
  const home = join(work, `${runtime}-${label}-${level}`);
  await mkdir(home, { recursive: true });
  await copyFile(book, join(home, 'bench.xlsx'));
  const port = await freePort();
  const args = [join(tree, 'server/main.ts'), join(home, 'bench.xlsx'), '--port', String(port), '--log-level', level, '--state-dir', join(home, 'state')];
  return startProcess({ name: `sheetrest ${label}`, runtime, args, port, probe: '/sheets/bench?_limit=1', log: join(home, 'stderr.log'), cpu: 0 });
}

async function etagOf(url: string): Promise<string> {
  const answer = await fetch(url);
  await answer.arrayBuffer();
  return answer.headers.get('etag') ?? '';
}

console.log(`# A/B: A = ${ROOT}, B = ${resolve(OTHER)}; ${SECONDS}s each, ${ROUNDS} rounds, 1,000 rows, wrk -t1 -c32, ${CAN_PIN ? 'servers on CPU 0, loaders on CPU 1' : 'unpinned'}\n`);
console.log('| runtime | round | load | A req/s | B req/s | A/B |');
console.log('|---|---:|---|---:|---:|---:|');
try {
  for (const runtime of RUNTIMES) {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const level of ['warn', 'info'] as const) {
        const a = await sheetrest(ROOT, runtime, 'A', level);
        const b = await sheetrest(resolve(OTHER), runtime, 'B', level);
        try {
          const tag = await etagOf(a.url + filter);
          if ((await etagOf(b.url + filter)) !== tag) throw new Error('the two trees answer different ETags for the same rows');
          const loads: [string, string, Record<string, string>][] = level === 'warn'
            ? [['kept 304 (warn)', filter, { 'If-None-Match': tag }], ['kept 200 (warn)', filter, {}], ['whole tab (warn)', '/sheets/bench', {}]]
            : [['kept 304 (info)', filter, { 'If-None-Match': tag }]];
          // A second of each first, so no server is timed while its JIT warms up.
          for (const [, path, headers] of loads) await Promise.all([wrk(a.url + path, 1, headers), wrk(b.url + path, 1, headers)]);
          for (const [label, path, headers] of loads) {
            // Who is started first by wrk alternates, so neither side always gets the head start.
            const [first, second] = round % 2 === 1
              ? await Promise.all([wrk(a.url + path, SECONDS, headers), wrk(b.url + path, SECONDS, headers)])
              : await Promise.all([wrk(b.url + path, SECONDS, headers), wrk(a.url + path, SECONDS, headers)]).then(([bRate, aRate]) => [aRate, bRate]);
            console.log(`| ${runtime} | ${round} | ${label} | ${Math.round(first).toLocaleString('en-US')} | ${Math.round(second).toLocaleString('en-US')} | ${(first / second).toFixed(2)} |`);
          }
        } finally {
          await Promise.all([a, b].map(stopProcess));
        }
      }
    }
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
