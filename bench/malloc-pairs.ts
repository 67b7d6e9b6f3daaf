// Paired reads of two Node servers started as `npm start` starts them (server/cli.js), one with
// the glibc malloc settings cli.js sets itself (docs/decisions.md, "glibc's malloc keeps answers
// out of its heap") and one with `GLIBC_TUNABLES=` (empty: the user's own setting wins, so the
// server runs on glibc's defaults). Both on one core, each loaded at the same time by its own
// `wrk -t1 -c32` on the other core, as in bench/pairs.ts: the ratio is what the settings cost
// the read path. Needs wrk (and taskset to pin); 1,000 rows. Each round ends with both servers,
// on copies of the demo workbook, taking the mixed reads and writes of bench/mixed-load.ts at
// once for MIXED_SECONDS (default 60): the requests each answered (no answer is kept there for
// long, as writes change the tab).
//   node bench/malloc-pairs.ts [ROUNDS] [SECONDS] [MIXED_SECONDS]
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { mixedLoad } from './mixed-load.ts';
import { CAN_PIN, freePort, ROOT, startProcess, stopProcess, wrk, type Target } from './processes.ts';
import { generate, writeBenchBook } from './rows.ts';

const ROUNDS = Number(process.argv[2] ?? 3);
const SECONDS = Number(process.argv[3] ?? 5);
const MIXED_SECONDS = Number(process.argv[4] ?? 60);
if (spawnSync('wrk', ['--version']).error !== undefined) throw new Error('wrk is not installed (apt-get install -y wrk)');
if (process.env.GLIBC_TUNABLES !== undefined) throw new Error('unset GLIBC_TUNABLES: the first server must get what server/cli.js sets');

const work = await mkdtemp(join(tmpdir(), 'sheetrest-malloc-pairs-'));
const rows = generate(1000);
const book = join(work, 'bench.xlsx');
await writeBenchBook(book, rows);
const one = encodeURIComponent(rows[500].Name);

async function server(label: string, env: Record<string, string>, source = book): Promise<Target> {
  const home = join(work, label);
  await mkdir(home, { recursive: true });
  const copy = join(home, source === book ? 'bench.xlsx' : 'demo.xlsx');
  await copyFile(source, copy);
  const port = await freePort();
  const args = ['server/cli.js', copy, '--port', String(port), '--log-level', 'warn', '--state-dir', join(home, 'state')];
  return startProcess({ name: label, runtime: 'node', args, port, probe: source === book ? '/sheets/bench?_limit=1' : '/sheets/demo?_limit=1', log: join(home, 'stderr.log'), env, cpu: 0 });
}


const PATHS: [string, string][] = [
  ['all rows (kept answer)', '/sheets/bench'],
  ['exact filter 1/8 (~19 KB)', '/sheets/bench/City/Lisbon'],
  ['exact filter 1 row', `/sheets/bench/Name/${one}`],
  ['`*son 77*`', '/sheets/bench/Name/*son%2077*'],
  ['first 300 rows (~45 KB)', '/sheets/bench?_limit=300'],
  ['sorted by Score', '/sheets/bench?_sort=Score'],
];

console.log(`# Paired runs: ${SECONDS}s each, ${ROUNDS} rounds, 1,000 rows, wrk -t1 -c32, ${CAN_PIN ? 'servers on CPU 0, loaders on CPU 1' : 'unpinned'}\n`);
console.log('| round | read | cli.js settings req/s | `GLIBC_TUNABLES=` req/s | ratio |');
console.log('|---:|---|---:|---:|---:|');
try {
  for (let round = 1; round <= ROUNDS; round++) {
    const tuned = await server(`tuned-${round}`, {});
    const plain = await server(`plain-${round}`, { GLIBC_TUNABLES: '' });
    try {
      for (const [label, path] of PATHS) {
        await Promise.all([wrk(tuned.url + path, 1), wrk(plain.url + path, 1)]);
        const [a, b] = await Promise.all([wrk(tuned.url + path, SECONDS), wrk(plain.url + path, SECONDS)]);
        console.log(`| ${round} | ${label} | ${Math.round(a).toLocaleString('en-US')} | ${Math.round(b).toLocaleString('en-US')} | ${(a / b).toFixed(2)} |`);
      }
    } finally {
      await Promise.all([tuned, plain].map(stopProcess));
    }
    const demo = join(ROOT, 'fixtures/demo.xlsx');
    const tunedDemo = await server(`tuned-demo-${round}`, {}, demo);
    const plainDemo = await server(`plain-demo-${round}`, { GLIBC_TUNABLES: '' }, demo);
    try {
      const total = ({ counts }: { counts: Record<string, number> }) => Object.values(counts).reduce((sum, count) => sum + count, 0);
      const [a, b] = await Promise.all([mixedLoad(tunedDemo.url, MIXED_SECONDS), mixedLoad(plainDemo.url, MIXED_SECONDS)]);
      console.log(`| ${round} | mixed load, ${MIXED_SECONDS} s (requests/s) | ${Math.round(total(a) / MIXED_SECONDS).toLocaleString('en-US')} | ${Math.round(total(b) / MIXED_SECONDS).toLocaleString('en-US')} | ${(total(a) / total(b)).toFixed(2)} |`);
    } finally {
      await Promise.all([tunedDemo, plainDemo].map(stopProcess));
    }
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
