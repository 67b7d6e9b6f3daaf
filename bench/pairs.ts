// Paired HTTP comparisons for ratio targets: two servers pinned to one core, each loaded at the
// same time by its own `wrk -t1 -c32` pinned to the other core. The two share their core's time,
// so each serves in proportion to its own cost per request, and a slow spell of this shared
// machine falls on both at once: a ratio from one paired run is steady where two runs one after
// the other can differ by a third (docs/benchmarks.md). Needs wrk and taskset; 1,000 rows.
//   node bench/pairs.ts [node,deno,bun] [ROUNDS] [SECONDS]
// Pairs, per runtime (sheetrest at --log-level warn, and the 304 at the default info as well):
//   304         sheetrest: GET of an exact filter with If-None-Match (304)  vs  bare server: that row's answer (200)
//   304 same    the same 304                                               vs  bare server: the same 304's status and headers
//   routed      the bare server after itty-router, the URL and the headers   vs  bare server (the stack's own floor)
//   headers     the bare server sending the contract's headers, no routing    vs  bare server
//   filter/all  sheetrest: a repeated exact filter (1/8 of rows)            vs  sheetrest: the whole tab
//   *x*/all     sheetrest: a repeated `*son 77*` filter                     vs  sheetrest: the whole tab
//   json-server sheetrest: an exact filter (1 row)                          vs  json-server (Node): the same filter
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { CAN_PIN, freePort, ROOT, startProcess, stopProcess, wrk, type Runtime, type Target } from './processes.ts';
import { generate, writeBenchBook } from './rows.ts';

const RUNTIMES = (process.argv[2] ?? 'node,deno,bun').split(',') as Runtime[];
const ROUNDS = Number(process.argv[3] ?? 3);
const SECONDS = Number(process.argv[4] ?? 5);
if (spawnSync('wrk', ['--version']).error !== undefined) throw new Error('wrk is not installed (apt-get install -y wrk)');
if (!CAN_PIN) console.log('(taskset or a second core is missing: the pairs run unpinned)');

const work = await mkdtemp(join(tmpdir(), 'sheetrest-pairs-'));
const rows = generate(1000);
const book = join(work, 'bench.xlsx');
await writeBenchBook(book, rows);
await writeFile(join(work, 'db.json'), JSON.stringify({ people: rows }));
const name = encodeURIComponent(rows[500].Name);

interface Load {
  readonly target: Target;
  readonly path: string;
  readonly headers?: Record<string, string>;
}

/** Both loads at once, each wrk on the loaders' core; requests per second of each. */
async function pair(a: Load, b: Load, seconds: number): Promise<[number, number]> {
  const run = ({ target, path, headers = {} }: Load) => wrk(target.url + path, seconds, headers);
  const [first, second] = await Promise.all([run(a), run(b)]);
  return [first, second];
}

async function sheetrest(runtime: Runtime, label: string, level: 'warn' | 'info'): Promise<Target> {
  const home = join(work, `${runtime}-${label}`);
  await mkdir(home, { recursive: true });
  await copyFile(book, join(home, 'bench.xlsx'));
  const port = await freePort();
  const args = ['server/main.ts', join(home, 'bench.xlsx'), '--port', String(port), '--log-level', level, '--state-dir', join(home, 'state')];
  return startProcess({ name: `sheetrest ${label}`, runtime, args, port, probe: '/sheets/bench?_limit=1', log: join(home, 'stderr.log'), cpu: 0 });
}

async function etagOf(url: string): Promise<string> {
  const answer = await fetch(url);
  await answer.arrayBuffer();
  return answer.headers.get('etag') ?? '';
}

const ratio = (a: number, b: number) => (a / b).toFixed(2);
console.log(`# Paired runs: ${SECONDS}s each, ${ROUNDS} rounds, 1,000 rows, wrk -t1 -c32, ${CAN_PIN ? 'servers on CPU 0, loaders on CPU 1' : 'unpinned'}\n`);
console.log('| runtime | round | pair | A req/s | B req/s | A/B |');
console.log('|---|---:|---|---:|---:|---:|');
try {
  for (const runtime of RUNTIMES) {
    for (let round = 1; round <= ROUNDS; round++) {
      const warn = await sheetrest(runtime, 'warn', 'warn');
      const other = await sheetrest(runtime, 'second', 'warn');
      const info = await sheetrest(runtime, 'info', 'info');
      const one = join(work, `one-${runtime}.json`);
      await writeFile(one, Buffer.from(await (await fetch(`${warn.url}/sheets/bench/Name/${name}`)).arrayBuffer()));
      const barePort = await freePort();
      const bare = await startProcess({ name: 'bare', runtime, args: [join(ROOT, 'bench/bare-server.ts'), one, String(barePort), one], port: barePort, probe: '/', log: join(work, 'bare.log'), cpu: 0 });
      const jsonPort = await freePort();
      const jsonServer = await startProcess({
        name: 'json-server', runtime: 'node', args: [join(ROOT, 'node_modules/json-server/lib/cli/bin.js'), join(work, 'db.json'), '--port', String(jsonPort), '--quiet'],
        port: jsonPort, probe: '/people?_limit=1', log: join(work, 'json-server.log'), cpu: 0,
      });
      const routedPort = await freePort();
      const routed = await startProcess({ name: 'routed', runtime, args: [join(ROOT, 'bench/bare-server.ts'), one, String(routedPort), one, '--routed'], port: routedPort, probe: '/sheets/bench', log: join(work, 'routed.log'), cpu: 0 });
      const filter = `/sheets/bench/Name/${name}`;
      const tag = { 'If-None-Match': await etagOf(warn.url + filter) };
      // The same tag from the other: the same rows have the same ETag. Each server has now built the 200 once.
      if ((await etagOf(info.url + filter)) !== tag['If-None-Match']) throw new Error('the two servers answer different ETags for the same rows');
      // sheetrest's own 304, every header the runtime does not add itself, for the bare server to send as it is.
      const recorded = await fetch(warn.url + filter, { headers: tag });
      await recorded.arrayBuffer();
      const runtimeHeaders = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);
      const headers304 = join(work, `304-${runtime}.json`);
      await writeFile(headers304, JSON.stringify(Object.fromEntries([...recorded.headers].filter(([key]) => !runtimeHeaders.has(key)))));
      const samePort = await freePort();
      const same = await startProcess({ name: 'same 304', runtime, args: [join(ROOT, 'bench/bare-server.ts'), one, String(samePort), one, '--not-modified', headers304], port: samePort, probe: '/', probeStatus: 304, log: join(work, 'same.log'), cpu: 0 });
      const headersPort = await freePort();
      const headered = await startProcess({ name: 'headers', runtime, args: [join(ROOT, 'bench/bare-server.ts'), one, String(headersPort), one, '--headers'], port: headersPort, probe: '/', log: join(work, 'headers.log'), cpu: 0 });
      try {
        // A second of each pair first, so no server is timed while its JIT warms up.
        await pair({ target: warn, path: filter, headers: tag }, { target: bare, path: '/one' }, 1);
        await pair({ target: info, path: filter, headers: tag }, { target: other, path: '/sheets/bench' }, 1);
        const pairs: [string, Load, Load][] = [
          ['304 (warn) / bare 200', { target: warn, path: filter, headers: tag }, { target: bare, path: '/one' }],
          ['304 (info) / bare 200', { target: info, path: filter, headers: tag }, { target: bare, path: '/one' }],
          ['304 (warn) / bare same 304', { target: warn, path: filter, headers: tag }, { target: same, path: '/one' }],
          ['304 (info) / bare same 304', { target: info, path: filter, headers: tag }, { target: same, path: '/one' }],
          ['routed 200 / bare 200', { target: routed, path: '/sheets/bench/Name/one' }, { target: bare, path: '/one' }],
          ['headers only 200 / bare 200', { target: headered, path: '/one' }, { target: bare, path: '/one' }],
          ['exact filter 1/8 / all rows', { target: warn, path: '/sheets/bench/City/Lisbon' }, { target: other, path: '/sheets/bench' }],
          ['`*son 77*` / all rows', { target: warn, path: '/sheets/bench/Name/*son%2077*' }, { target: other, path: '/sheets/bench' }],
          ['exact filter 1 row / json-server', { target: warn, path: filter }, { target: jsonServer, path: `/people?Name=${name}` }],
        ];
        for (const [label, a, b] of pairs) {
          const [first, second] = await pair(a, b, SECONDS);
          console.log(`| ${runtime} | ${round} | ${label} | ${Math.round(first).toLocaleString('en-US')} | ${Math.round(second).toLocaleString('en-US')} | ${ratio(first, second)} |`);
        }
      } finally {
        await Promise.all([warn, other, info, bare, same, routed, headered, jsonServer].map(stopProcess));
      }
      await rm(join(work, `${runtime}-warn`), { recursive: true, force: true });
      await rm(join(work, `${runtime}-second`), { recursive: true, force: true });
      await rm(join(work, `${runtime}-info`), { recursive: true, force: true });
    }
  }
} finally {
  await rm(work, { recursive: true, force: true });
}
