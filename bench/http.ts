// HTTP benchmark: sheetrest on Node, Deno and Bun, each beside a bare server of the same runtime
// answering the same pre-serialized bytes (bench/bare-server.ts), and json-server (the version npm
// installs by default, on Node), each loaded by the same tool (wrk when installed, else
// autocannon) on 127.0.0.1 for the same time. `npm run bench:http`; BENCH_SECONDS,
// BENCH_CONNECTIONS, BENCH_SIZES, BENCH_RUNTIMES (node,deno,bun), BENCH_CASES (a substring of
// the operation names, separated by ";") and BENCH_ROUNDS (runs per figure, interleaved; the
// median is shown) change the defaults. Prints requests/s, p99 latency, peak
// RSS and the ratios to the targets, one row per runtime and operation.
//
// What is compared, per tab size: all rows; an exact filter matching one row (a Name) and one
// matching 1/8 of the rows (City is Lisbon); a `*son 77*` filter matching about 1% (json-server:
// `Name_like=son 77`, a case-insensitive regex); a 10-row page; POST one row; PATCH one row.
// Issue 25's: an `_or` of two exact names (json-server: `Name_like=^(a|b)$`, its `_like` regex
// the closest it has to OR), and `aggregate?_group=City&_agg=count(),sum(Score),avg(Score)`
// (json-server has none: a client fetches all rows and reduces them; only the fetch is measured,
// which flatters json-server). Before measuring these, both answers are fetched and checked to
// say the same thing; a sheetrest without issue 25 (an error answer) gets a row saying so.
// sheetrest serves an .xlsx file with durable writes (fsync before the answer); json-server
// rewrites db.json on every write without fsync; it logs nothing (--quiet) and is started afresh
// beside each runtime, since the POST runs grow its data. sheetrest runs twice
// per runtime, on copies of the file: at `--log-level warn` (no line per request) and at the
// default `info` (one JSON line per request, its stderr going to a file, as to a log collector);
// the info column is measured for the reads.
//
// `BENCH_SCALE=1` measures instead how a durable POST's rate follows the tab's size (issue 24): one
// sheetrest (Node unless BENCH_RUNTIMES says otherwise, `--log-level warn`) per size of BENCH_SIZES
// (default 1000,100000,1000000), all running at once, each loaded with `POST one row` in turn for
// ROUNDS rounds (paired: a slow spell on the machine falls on every size alike; before each run
// every server is left to finish the fold its last run started), the median each and
// its ratio to the smallest size's (targets: >= 0.8x at 100k rows, >= 0.5x at 1M). The files are
// .csv, as in the issue's figures (BENCH_FORMAT=xlsx for .xlsx: there a fold, which writes wait
// for, takes seconds at 100k rows and bounds the rate instead).
import autocannon from 'autocannon';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, memoryMb, ROOT, startProcess, stopProcess, type Runtime, type Target } from './processes.ts';
import { generate, writeBenchBook, writeBenchCsv, type Row } from './rows.ts';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SIZES = (process.env.BENCH_SIZES ?? '1000').split(',').map(Number);
const RUNTIMES = (process.env.BENCH_RUNTIMES ?? 'node,deno,bun').split(',') as Runtime[];
const CASES = process.env.BENCH_CASES?.split(';');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const workDir = await mkdtemp(join(tmpdir(), 'sheetrest-bench-'));

interface Load {
  readonly path: string;
  readonly method?: 'GET' | 'POST' | 'PATCH';
  readonly body?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

interface Measured {
  readonly rps: number;
  readonly p99: number;
  readonly errors: number;
}

/**
 * wrk (Debian's package, C, one thread) when it is installed: it spends far less CPU per response
 * than autocannon, which matters when the load generator shares two cores with the server.
 * `BENCH_TOOL=autocannon` forces the npm one, which `npm install` always brings.
 */
const TOOL = process.env.BENCH_TOOL ?? (spawnSync('wrk', ['--version']).error === undefined ? 'wrk' : 'autocannon');

async function load(target: Target, request: Load, seconds = SECONDS): Promise<Measured> {
  return TOOL === 'wrk' ? loadWithWrk(target, request, seconds) : loadWithAutocannon(target, request, seconds);
}

let scripts = 0;

async function loadWithWrk(target: Target, { path, method = 'GET', body, headers = {} }: Load, seconds: number): Promise<Measured> {
  const script = join(workDir, `load-${scripts++}.lua`);
  const lua = [`wrk.method = ${JSON.stringify(method)}`];
  if (body !== undefined) lua.push(`wrk.body = ${JSON.stringify(body)}`, 'wrk.headers["Content-Type"] = "application/json"');
  for (const [name, value] of Object.entries(headers)) lua.push(`wrk.headers[${JSON.stringify(name)}] = ${JSON.stringify(value)}`);
  await writeFile(script, lua.join('\n') + '\n');
  // A 100k-row answer takes json-server seconds: a long timeout counts it as slow, not as an error.
  const run = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${seconds}s`, '--timeout', '30s', '--latency', '-s', script, target.url + path], { encoding: 'utf8' });
  const output = run.stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN);
  const p99 = /\s99%\s+([\d.]+)(us|ms|s)/.exec(output);
  const p99ms = p99 === null ? NaN : Number(p99[1]) * (p99[2] === 'us' ? 0.001 : p99[2] === 's' ? 1000 : 1);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const errors = non2xx + (socket === null ? 0 : socket.slice(1).reduce((sum, n) => sum + Number(n), 0));
  return { rps, p99: Math.round(p99ms * 100) / 100, errors };
}

async function loadWithAutocannon(target: Target, { path, method = 'GET', body, headers = {} }: Load, seconds: number): Promise<Measured> {
  const result = await autocannon({
    url: target.url + path,
    method,
    body,
    headers: body === undefined ? { ...headers } : { ...headers, 'content-type': 'application/json' },
    connections: CONNECTIONS,
    duration: seconds,
    timeout: 30,
  });
  // autocannon counts a 304 as non-2xx; wrk, like this table, only 4xx and 5xx.
  const non2xx = headers['If-None-Match'] === undefined ? result.non2xx : result.non2xx - (result['3xx'] ?? 0);
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.timeouts + non2xx };
}

interface Scenario {
  readonly name: string;
  readonly sheetrest: Load;
  readonly jsonServer: Load;
  /** The bare server's path with the same answer: `/` all rows, `/one` the exact filter's row. */
  readonly bare?: '/' | '/one';
  /** Measured at the default log level too (the reads). */
  readonly info?: boolean;
  /** Sent with If-None-Match: the ETag each server answered for the same request (a 304 each time). */
  readonly revalidate?: boolean;
  /** Whether the two answers (parsed JSON) say the same thing: null if so, else what differs. */
  readonly verify?: (ours: unknown, theirs: unknown) => string | null;
}

function scenarios(size: number, rows: readonly Row[]): Scenario[] {
  const row = JSON.stringify({ Name: 'Zed Newman', Age: 33, City: 'Lisbon', Score: 50.5, Joined: '2024-03-01', Active: true });
  const middle = Math.floor(size / 2);
  const quarter = Math.floor(size / 4);
  const name = encodeURIComponent(rows[middle].Name);
  return [
    { name: 'all rows', sheetrest: { path: '/sheets/bench' }, jsonServer: { path: '/people' }, bare: '/', info: true },
    // One row: an exact lookup, where the cost is finding the row, not writing the answer.
    { name: 'exact filter, 1 row', sheetrest: { path: `/sheets/bench/Name/${name}` }, jsonServer: { path: `/people?Name=${name}` }, bare: '/one', info: true },
    // The same request revalidated (issue 9): 304 with no body, beside the bare server's 200 of that row.
    { name: '304, exact filter', sheetrest: { path: `/sheets/bench/Name/${name}` }, jsonServer: { path: `/people?Name=${name}` }, bare: '/one', revalidate: true },
    // One row in eight: the answer is 1/8 of the tab, so writing it dominates.
    { name: 'exact filter, 1/8 of rows', sheetrest: { path: '/sheets/bench/City/Lisbon' }, jsonServer: { path: '/people?City=Lisbon' }, info: true },
    // About 1% of rows: `son 77` is in the names of rows 77, 770-779, 7700-7799...
    { name: '*x* filter, ~1% of rows', sheetrest: { path: '/sheets/bench/Name/*son%2077*' }, jsonServer: { path: '/people?Name_like=son%2077' }, info: true },
    { name: '10-row page', sheetrest: { path: `/sheets/bench?_offset=${middle}&_limit=10` }, jsonServer: { path: `/people?_start=${middle}&_limit=10` }, info: true },
    { name: 'POST one row', sheetrest: { path: '/sheets/bench', method: 'POST', body: row }, jsonServer: { path: '/people', method: 'POST', body: row } },
    {
      name: '_or of two names, 2 rows',
      sheetrest: { path: `/sheets/bench/query?_or=${encodeURIComponent(`Name=${rows[middle].Name};Name=${rows[quarter].Name}`)}` },
      jsonServer: { path: `/people?Name_like=${encodeURIComponent(`^(${rows[middle].Name}|${rows[quarter].Name})$`)}` },
      verify: (ours, theirs) => sameNames(ours, theirs, 2),
    },
    {
      name: 'aggregate by City',
      sheetrest: { path: `/sheets/bench/aggregate?_group=City&_agg=${encodeURIComponent('count(),sum(Score),avg(Score)')}` },
      jsonServer: { path: '/people' },
      verify: (ours, theirs) => sameAggregates(ours, reduceByCity(theirs as Row[])),
    },
    {
      name: 'PATCH one row',
      sheetrest: { path: `/sheets/bench/${middle}`, method: 'PATCH', body: '{"Age": 44}' },
      jsonServer: { path: `/people/${middle + 1}`, method: 'PATCH', body: '{"Age": 44}' },
    },
  ];
}

/** `_or` against `_like`: both answer the same `count` rows, by name. */
function sameNames(ours: unknown, theirs: unknown, count: number): string | null {
  const names = (rows: unknown) => (Array.isArray(rows) ? rows.map((row: { Name: string }) => row.Name).sort() : []);
  const [a, b] = [names(ours), names(theirs)];
  return a.length === count && JSON.stringify(a) === JSON.stringify(b) ? null : `sheetrest ${JSON.stringify(a)}, json-server ${JSON.stringify(b)}`;
}

interface CityFigures {
  count: number;
  sum: number;
}

/** What a client computes from json-server's whole answer: count and sum of Score per City. */
function reduceByCity(rows: readonly Row[]): Map<string, CityFigures> {
  const cities = new Map<string, CityFigures>();
  for (const row of rows) {
    const figures = cities.get(row.City) ?? { count: 0, sum: 0 };
    figures.count++;
    figures.sum += row.Score;
    cities.set(row.City, figures);
  }
  return cities;
}

/** sheetrest's aggregate rows (strings by default) against the client's reduce. */
function sameAggregates(ours: unknown, expected: Map<string, CityFigures>): string | null {
  if (!Array.isArray(ours) || ours.length !== expected.size) return `sheetrest answered ${JSON.stringify(ours).slice(0, 200)}`;
  for (const row of ours as Record<string, string>[]) {
    const figures = expected.get(row.City);
    const close = (a: number, b: number) => Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(b));
    if (figures === undefined || Number(row['count()']) !== figures.count || !close(Number(row['sum(Score)']), figures.sum) || !close(Number(row['avg(Score)']), figures.sum / figures.count)) {
      return `${JSON.stringify(row)} against ${JSON.stringify(figures)}`;
    }
  }
  return null;
}

async function runSize(size: number, dir: string): Promise<void> {
  const rows = generate(size);
  const xlsx = join(dir, `bench-${size}.xlsx`);
  await writeBenchBook(xlsx, rows);
  const db = join(dir, `db-${size}.json`);
  await writeFile(db, JSON.stringify({ people: rows }));
  const chosen = scenarios(size, rows).filter((scenario) => CASES === undefined || CASES.some((name) => scenario.name.includes(name)));

  for (const runtime of RUNTIMES) {
    // A fresh json-server per runtime (the POST runs grow its db.json), measured in the same rounds.
    const fresh = join(dir, `db-${size}-${runtime}.json`);
    await copyFile(db, fresh);
    const jsonPort = await freePort();
    const jsonServer = await startProcess({
      name: 'json-server', runtime: 'node', args: [join(ROOT, 'node_modules/json-server/lib/cli/bin.js'), fresh, '--port', String(jsonPort), '--quiet'],
      port: jsonPort, probe: '/people?_limit=1', log: join(dir, 'json-server.log'),
    });
    await load(jsonServer, { path: '/people' }, 1);
    try {
      await runRuntime(runtime, size, xlsx, chosen, jsonServer, dir);
    } finally {
      jsonServer.process.kill('SIGTERM');
    }
  }
}

async function runRuntime(runtime: Runtime, size: number, xlsx: string, chosen: Scenario[], jsonServer: Target, dir: string): Promise<void> {
  // Each sheetrest gets its own copy of the file and state folder: `bench-1000`, twice.
  const instance = async (level: 'warn' | 'info'): Promise<Target> => {
    const home = join(dir, `${runtime}-${level}-${size}`);
    await mkdir(home, { recursive: true });
    await copyFile(xlsx, join(home, `bench-${size}.xlsx`));
    const port = await freePort();
    const args = ['server/main.ts', join(home, `bench-${size}.xlsx`), '--port', String(port), '--log-level', level, '--state-dir', join(home, 'state')];
    return startProcess({ name: `sheetrest ${runtime} ${level}`, runtime, args, port, probe: `/sheets/bench-${size}?_limit=1`, log: join(home, 'stderr.log') });
  };
  const warn = await instance('warn');
  const info = await instance('info');
  const allRows = join(dir, `rows-${runtime}-${size}.json`);
  await writeFile(allRows, Buffer.from(await (await fetch(`${warn.url}/sheets/bench-${size}`)).arrayBuffer()));
  const oneRow = join(dir, `one-${runtime}-${size}.json`);
  const exact = chosen.find((scenario) => scenario.bare === '/one')?.sheetrest.path ?? '/sheets/bench?_limit=1';
  await writeFile(oneRow, Buffer.from(await (await fetch(warn.url + exact.replace('/sheets/bench', `/sheets/bench-${size}`))).arrayBuffer()));
  const barePort = await freePort();
  const bare = await startProcess({ name: `bare ${runtime}`, runtime, args: [join(ROOT, 'bench/bare-server.ts'), allRows, String(barePort), oneRow], port: barePort, probe: '/', log: join(dir, `bare-${runtime}.log`) });
  // The same bytes after the stack's share of a request (itty-router, the URL, the contract's headers).
  const routedPort = await freePort();
  const routed = await startProcess({
    name: `routed ${runtime}`, runtime, args: [join(ROOT, 'bench/bare-server.ts'), allRows, String(routedPort), oneRow, '--routed'],
    port: routedPort, probe: '/sheets/bench', log: join(dir, `routed-${runtime}.log`),
  });
  const routedPath = (bare: '/' | '/one') => (bare === '/one' ? '/sheets/bench/Name/one' : '/sheets/bench');
  let allRowsRps: number | undefined;
  try {
    // A second of each before measuring, so no target is timed while its JIT warms up.
    for (const target of [warn, info]) await load(target, { path: `/sheets/bench-${size}` }, 1);
    await load(bare, { path: '/' }, 1);
    await load(routed, { path: routedPath('/') }, 1);
    for (const scenario of chosen) {
      // The connection is named after the file, `bench-1000`.
      let path: Load = { ...scenario.sheetrest, path: scenario.sheetrest.path.replace('/sheets/bench', `/sheets/bench-${size}`) };
      let jsonLoad = scenario.jsonServer;
      if (scenario.revalidate === true) {
        path = { ...path, headers: { 'If-None-Match': await etagOf(warn.url + path.path) } };
        jsonLoad = { ...jsonLoad, headers: { 'If-None-Match': await etagOf(jsonServer.url + jsonLoad.path) } };
      }
      if (scenario.verify !== undefined) {
        const ours = await fetch(warn.url + path.path);
        const oursBody = await ours.json();
        if (ours.status !== 200) {
          console.log(`| ${runtime} | ${size} | ${scenario.name} | not served: ${ours.status} ${oursBody.error} (issue 25's engine parts not on this tree) | | | | | |`);
          continue;
        }
        // A tree without issue 25 ignores `_or` (an unknown `_` parameter) and answers every row.
        const differs = scenario.verify(oursBody, await (await fetch(jsonServer.url + jsonLoad.path)).json());
        if (differs !== null) {
          console.log(`| ${runtime} | ${size} | ${scenario.name} | not measured: the answers differ: ${differs.slice(0, 160)}… | | | | | |`);
          continue;
        }
      }
      // Round-robin, the median of ROUNDS runs each: a slow spell on the shared machine then
      // falls on every target alike instead of on one.
      const runs: Measured[][] = [[], [], [], [], []];
      for (let round = 0; round < ROUNDS; round++) {
        runs[0].push(await load(warn, path));
        if (scenario.info) runs[1].push(await load(info, path));
        if (scenario.bare !== undefined) runs[2].push(await load(bare, { path: scenario.bare }));
        if (scenario.bare !== undefined) runs[3].push(await load(routed, { path: routedPath(scenario.bare) }));
        runs[4].push(await load(jsonServer, jsonLoad));
      }
      const [ours, logged, base, floor, json] = runs.map(median) as [Measured, Measured | undefined, Measured | undefined, Measured | undefined, Measured];
      const ratios = [`${(ours.rps / json.rps).toFixed(1)}x json-server`];
      // The bare server over json-server is the most any server of this runtime could reach;
      // the routed one, the most a server on this stack could.
      if (base !== undefined) ratios.push(`${(ours.rps / base.rps).toFixed(2)}x bare (bare: ${(base.rps / json.rps).toFixed(1)}x json-server)`);
      if (floor !== undefined) ratios.push(`${(ours.rps / floor.rps).toFixed(2)}x routed (routed: ${(floor.rps / json.rps).toFixed(1)}x json-server)`);
      if (logged !== undefined) ratios.push(`info ${Math.round((logged.rps / ours.rps - 1) * 100)}%`);
      // A repeated read of part of the tab against the whole tab (issue 9: >= 0.8x once answers are kept).
      if (scenario.name === 'all rows') allRowsRps = ours.rps;
      else if (scenario.sheetrest.method === undefined && scenario.revalidate !== true && allRowsRps !== undefined) ratios.push(`${(ours.rps / allRowsRps).toFixed(2)}x all rows`);
      const errors = runs.flat().reduce((sum, run) => sum + run.errors, 0);
      console.log(
        `| ${runtime} | ${size} | ${scenario.name} | ${cell(ours)} | ${logged === undefined ? '' : cell(logged)} | ${base === undefined ? '' : cell(base)} | ${floor === undefined ? '' : cell(floor)} | ` +
          `${cell(json)} | ${ratios.join(', ')}${errors > 0 ? ` — ${errors} errors/non-2xx!` : ''} |`,
      );
    }
    const mb = (value: number) => `${value.toFixed(0)} MB`;
    console.log(`| ${runtime} | ${size} | peak RSS | ${mb(memoryMb(warn.process, 'VmHWM'))} | ${mb(memoryMb(info.process, 'VmHWM'))} | ${mb(memoryMb(bare.process, 'VmHWM'))} | ${mb(memoryMb(routed.process, 'VmHWM'))} | ${mb(memoryMb(jsonServer.process, 'VmHWM'))} | |`);
  } finally {
    await Promise.all([warn, info, bare, routed].map(stopProcess));
  }
}

async function etagOf(url: string): Promise<string> {
  const answer = await fetch(url);
  await answer.arrayBuffer();
  const tag = answer.headers.get('etag');
  if (tag === null) throw new Error(`${url} answered no ETag`);
  return tag;
}

/** The run with the median rate (its own p99 and errors); undefined for no runs. */
function median(runs: Measured[]): Measured | undefined {
  return [...runs].sort((a, b) => a.rps - b.rps)[Math.floor(runs.length / 2)];
}

function cell({ rps, p99 }: Measured): string {
  return `${Math.round(rps).toLocaleString('en-US')} (p99 ${p99} ms)`;
}

/** BENCH_SCALE: the POST rate per tab size, the sizes' servers up together and loaded round-robin. */
async function runScale(dir: string): Promise<void> {
  const sizes = (process.env.BENCH_SIZES ?? '1000,100000,1000000').split(',').map(Number);
  const row = JSON.stringify({ Name: 'Zed Newman', Age: 33, City: 'Lisbon', Score: 50.5, Joined: '2024-03-01', Active: true });
  console.log(`# POST one row against the tab's size (.${process.env.BENCH_FORMAT ?? 'csv'}): ${SECONDS}s per run, median of ${ROUNDS} round-robin runs, ${CONNECTIONS} connections, Node ${process.version}, ${TOOL} on 127.0.0.1\n`);
  console.log('| runtime | rows | POST one row, warn (req/s) | runs | ratio to the smallest tab | peak RSS |');
  console.log('|---|---:|---:|---|---|---:|');
  const format = process.env.BENCH_FORMAT ?? 'csv';
  const file = (size: number) => `bench-${size}.${format}`;
  for (const size of sizes) await (format === 'csv' ? writeBenchCsv : writeBenchBook)(join(dir, file(size)), generate(size));
  for (const runtime of RUNTIMES) {
    const targets: Target[] = [];
    try {
      for (const size of sizes) {
        const home = join(dir, `${runtime}-scale-${size}`);
        await mkdir(home, { recursive: true });
        await copyFile(join(dir, file(size)), join(home, file(size)));
        const port = await freePort();
        const args = ['server/main.ts', join(home, file(size)), '--port', String(port), '--log-level', 'warn', '--state-dir', join(home, 'state')];
        targets.push(await startProcess({ name: `sheetrest ${runtime} ${size}`, runtime, args, port, probe: `/sheets/bench-${size}?_limit=1`, log: join(home, 'stderr.log') }));
      }
      const post = (index: number, seconds = SECONDS) => load(targets[index], { path: `/sheets/bench-${sizes[index]}`, method: 'POST', body: row }, seconds);
      for (let index = 0; index < sizes.length; index++) await post(index, 1);
      const runs: Measured[][] = sizes.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        for (let index = 0; index < sizes.length; index++) {
          // A server folds its journal once writes stop: the next size's run must not pay for it.
          await Promise.all(targets.map(quiet));
          runs[index].push(await post(index));
        }
      }
      const smallest = median(runs[0])!.rps;
      for (let index = 0; index < sizes.length; index++) {
        const ours = median(runs[index])!;
        const errors = runs[index].reduce((sum, run) => sum + run.errors, 0);
        const all = runs[index].map((run) => Math.round(run.rps)).join(', ');
        console.log(
          `| ${runtime} | ${sizes[index].toLocaleString('en-US')} | ${cell(ours)} | ${all} | ${(ours.rps / smallest).toFixed(2)}x | ` +
            `${memoryMb(targets[index].process, 'VmHWM').toFixed(0)} MB${errors > 0 ? ` — ${errors} errors/non-2xx!` : ''} |`,
        );
      }
    } finally {
      await Promise.all(targets.map(stopProcess));
    }
  }
}

/** Resolves once the process has used under 5% of a core for half a second (its fold is over), or after a minute. */
async function quiet(target: Target): Promise<void> {
  const cpu = () => {
    try {
      const fields = readFileSync(`/proc/${target.process.pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return Number(fields[11]) + Number(fields[12]);
    } catch {
      return NaN;
    }
  };
  const ticksPerHalfSecond = 50;
  const deadline = Date.now() + 60_000;
  let last = cpu();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const now = cpu();
    if (!(now - last > 0.05 * ticksPerHalfSecond)) return;
    last = now;
  }
}

const dir = workDir;
if (process.env.BENCH_SCALE === '1') {
  try {
    await runScale(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  process.exit(0);
}
console.log(`# HTTP benchmark: ${SECONDS}s per run, median of ${ROUNDS}, ${CONNECTIONS} connections, Node ${process.version}, ${TOOL} on 127.0.0.1\n`);
console.log('| runtime | rows | operation | sheetrest, warn (req/s) | sheetrest, info | bare server, same runtime | routed bare server | json-server (Node) | ratio |');
console.log('|---|---:|---|---:|---:|---:|---:|---:|---|');
try {
  for (const size of SIZES) await runSize(size, dir);
} finally {
  await rm(dir, { recursive: true, force: true });
}
