// HTTP benchmark: sheetrest beside json-server (the version npm installs by default) and a bare
// node:http server answering pre-serialized rows, all on this Node, each loaded by the same tool (wrk when installed, else autocannon) on
// 127.0.0.1 for the same time. `npm run bench:http` (BENCH_SECONDS, BENCH_CONNECTIONS, BENCH_SIZES
// change the defaults). Prints requests/s, p99 latency, peak RSS and the ratios to the targets.
//
// What is compared, per tab size: all rows; an exact filter matching one row (a Name) and one
// matching 1/8 of the rows (City is Lisbon); a `*son 77*` filter matching about 1% (json-server:
// `Name_like=son 77`, a case-insensitive regex); a 10-row page; POST one row; PATCH one row. sheetrest serves an .xlsx file with durable writes (fsync before the answer);
// json-server rewrites db.json on every write without fsync. Both log nothing per request
// (sheetrest --log-level warn, json-server --quiet) so neither pays for a terminal.
import autocannon from 'autocannon';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as XLSX from '@e965/xlsx';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const SIZES = (process.env.BENCH_SIZES ?? '1000,100000').split(',').map(Number);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NODE = process.execPath;
const workDir = await mkdtemp(join(tmpdir(), 'sheetrest-bench-'));

const CITIES = ['Lisbon', 'Berlin', 'Paris', 'Seoul', 'Zürich', 'Porto', 'Oslo', 'Lima'];
const NAMES = ['Ann', 'Bob', 'Chloé', 'Dan', 'Eva', 'Farid', 'Gil', 'Hana', 'Ivan', 'Joanna'];

interface Row {
  id: number;
  Name: string;
  Age: number;
  City: string;
  Score: number;
  Joined: string;
  Active: boolean;
}

function generate(count: number): Row[] {
  const rows: Row[] = [];
  for (let i = 0; i < count; i++) {
    rows.push({
      id: i + 1,
      Name: `${NAMES[i % NAMES.length]} ${NAMES[(i * 7) % NAMES.length]}son ${i}`,
      Age: 18 + ((i * 13) % 60),
      City: CITIES[(i * 5) % CITIES.length],
      Score: Math.round(((i * 37) % 1000) * 1.25) / 10,
      Joined: `20${10 + (i % 15)}-0${1 + (i % 9)}-1${i % 10}`,
      Active: i % 3 !== 0,
    });
  }
  return rows;
}

interface Target {
  readonly name: string;
  readonly url: string;
  readonly process: ChildProcess;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

async function startProcess(name: string, args: string[], port: number, probe: string): Promise<Target> {
  const child = spawn(NODE, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${stderr}`);
    try {
      const response = await fetch(url + probe);
      await response.arrayBuffer();
      if (response.ok) return { name, url, process: child };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${name} did not start: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function peakRssMb(child: ChildProcess): number {
  // VmHWM is the resident set's high-water mark, kept by the kernel for the process's life.
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return match === null ? NaN : Number(match[1]) / 1024;
  } catch {
    return NaN;
  }
}

interface Load {
  readonly path: string;
  readonly method?: 'GET' | 'POST' | 'PATCH';
  readonly body?: string;
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

async function load(target: Target, request: Load): Promise<Measured> {
  return TOOL === 'wrk' ? loadWithWrk(target, request) : loadWithAutocannon(target, request);
}

let scripts = 0;

async function loadWithWrk(target: Target, { path, method = 'GET', body }: Load): Promise<Measured> {
  const script = join(workDir, `load-${scripts++}.lua`);
  const lua = [`wrk.method = ${JSON.stringify(method)}`];
  if (body !== undefined) lua.push(`wrk.body = ${JSON.stringify(body)}`, 'wrk.headers["Content-Type"] = "application/json"');
  await writeFile(script, lua.join('\n') + '\n');
  // A 100k-row answer takes json-server seconds: a long timeout counts it as slow, not as an error.
  const run = spawnSync('wrk', ['-t1', `-c${CONNECTIONS}`, `-d${SECONDS}s`, '--timeout', '30s', '--latency', '-s', script, target.url + path], { encoding: 'utf8' });
  const output = run.stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN);
  const p99 = /\s99%\s+([\d.]+)(us|ms|s)/.exec(output);
  const p99ms = p99 === null ? NaN : Number(p99[1]) * (p99[2] === 'us' ? 0.001 : p99[2] === 's' ? 1000 : 1);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(output)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(output);
  const errors = non2xx + (socket === null ? 0 : socket.slice(1).reduce((sum, n) => sum + Number(n), 0));
  return { rps, p99: Math.round(p99ms * 100) / 100, errors };
}

async function loadWithAutocannon(target: Target, { path, method = 'GET', body }: Load): Promise<Measured> {
  const result = await autocannon({
    url: target.url + path,
    method,
    body,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    connections: CONNECTIONS,
    duration: SECONDS,
    timeout: 30,
  });
  return { rps: result.requests.average, p99: result.latency.p99, errors: result.errors + result.timeouts + result.non2xx };
}

interface Scenario {
  readonly name: string;
  readonly sheetrest: Load;
  readonly jsonServer: Load;
  readonly bare?: boolean;
}

function scenarios(size: number, rows: readonly Row[]): Scenario[] {
  const row = JSON.stringify({ Name: 'Zed Newman', Age: 33, City: 'Lisbon', Score: 50.5, Joined: '2024-03-01', Active: true });
  const middle = Math.floor(size / 2);
  const name = encodeURIComponent(rows[middle].Name);
  return [
    { name: 'all rows', sheetrest: { path: '/sheets/bench' }, jsonServer: { path: '/people' }, bare: true },
    // One row: an exact lookup, where the cost is finding the row, not writing the answer.
    { name: 'exact filter, 1 row', sheetrest: { path: `/sheets/bench/Name/${name}` }, jsonServer: { path: `/people?Name=${name}` } },
    // One row in eight: the answer is 1/8 of the tab, so writing it dominates.
    { name: 'exact filter, 1/8 of rows', sheetrest: { path: '/sheets/bench/City/Lisbon' }, jsonServer: { path: '/people?City=Lisbon' } },
    // About 1% of rows: `son 77` is in the names of rows 77, 770-779, 7700-7799...
    { name: '*x* filter, ~1% of rows', sheetrest: { path: '/sheets/bench/Name/*son%2077*' }, jsonServer: { path: '/people?Name_like=son%2077' } },
    { name: '10-row page', sheetrest: { path: `/sheets/bench?_offset=${middle}&_limit=10` }, jsonServer: { path: `/people?_start=${middle}&_limit=10` } },
    { name: 'POST one row', sheetrest: { path: '/sheets/bench', method: 'POST', body: row }, jsonServer: { path: '/people', method: 'POST', body: row } },
    {
      name: 'PATCH one row',
      sheetrest: { path: `/sheets/bench/${middle}`, method: 'PATCH', body: '{"Age": 44}' },
      jsonServer: { path: `/people/${middle + 1}`, method: 'PATCH', body: '{"Age": 44}' },
    },
  ];
}

async function runSize(size: number, dir: string): Promise<string[]> {
  const rows = generate(size);
  const header = ['Name', 'Age', 'City', 'Score', 'Joined', 'Active'] as const;
  const sheet = XLSX.utils.aoa_to_sheet([header as unknown as string[], ...rows.map((row) => header.map((column) => row[column]))]);
  const workbook = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(workbook, sheet, 'People');
  const xlsx = join(dir, `bench-${size}.xlsx`);
  await writeFile(xlsx, XLSX.write(workbook, { type: 'buffer', bookType: 'xlsx' }));
  const db = join(dir, `db-${size}.json`);
  await writeFile(db, JSON.stringify({ people: rows }));

  const [sheetPort, jsonPort, barePort] = [await freePort(), await freePort(), await freePort()];
  const sheetrest = await startProcess(
    'sheetrest',
    ['server/main.ts', xlsx, '--port', String(sheetPort), '--log-level', 'warn', '--state-dir', join(dir, `state-${size}`)],
    sheetPort,
    '/sheets/bench-' + size + '?_limit=1',
  );
  const jsonServer = await startProcess('json-server', [join(ROOT, 'node_modules/json-server/lib/cli/bin.js'), db, '--port', String(jsonPort), '--quiet'], jsonPort, '/people?_limit=1');
  const allRows = join(dir, `rows-${size}.json`);
  await writeFile(allRows, Buffer.from(await (await fetch(`${sheetrest.url}/sheets/bench-${size}`)).arrayBuffer()));
  const bare = await startProcess('bare node:http', [join(ROOT, 'bench/bare-server.ts'), allRows, String(barePort)], barePort, '/');

  const lines: string[] = [];
  try {
    for (const scenario of scenarios(size, rows)) {
      // The connection is named after the file, `bench-1000`.
      const path = { ...scenario.sheetrest, path: scenario.sheetrest.path.replace('/sheets/bench', `/sheets/bench-${size}`) };
      const ours = await load(sheetrest, path);
      const theirs = await load(jsonServer, scenario.jsonServer);
      const base = scenario.bare ? await load(bare, { path: '/' }) : undefined;
      const ratios = [`${(ours.rps / theirs.rps).toFixed(1)}x json-server`];
      if (base !== undefined) ratios.push(`${(ours.rps / base.rps).toFixed(2)}x bare`);
      const errors = ours.errors + theirs.errors + (base?.errors ?? 0);
      lines.push(
        `| ${size} | ${scenario.name} | ${fmt(ours.rps)} (p99 ${ours.p99} ms) | ${fmt(theirs.rps)} (p99 ${theirs.p99} ms) | ` +
          `${base === undefined ? '' : `${fmt(base.rps)} (p99 ${base.p99} ms)`} | ${ratios.join(', ')}${errors > 0 ? ` — ${errors} errors/non-2xx!` : ''} |`,
      );
      console.log(lines.at(-1));
    }
    lines.push(`| ${size} | peak RSS | ${peakRssMb(sheetrest.process).toFixed(0)} MB | ${peakRssMb(jsonServer.process).toFixed(0)} MB | ${peakRssMb(bare.process).toFixed(0)} MB | |`);
    console.log(lines.at(-1));
  } finally {
    for (const target of [sheetrest, jsonServer, bare]) target.process.kill('SIGTERM');
  }
  return lines;
}

function fmt(rps: number): string {
  return `${Math.round(rps).toLocaleString('en-US')} req/s`;
}

const dir = workDir;
console.log(`# HTTP benchmark: ${SECONDS}s per run, ${CONNECTIONS} connections, Node ${process.version}, ${TOOL} on 127.0.0.1\n`);
console.log('| rows | operation | sheetrest | json-server | bare node:http | ratio |');
console.log('|---|---|---|---|---|---|');
try {
  for (const size of SIZES) await runSize(size, dir);
} finally {
  await rm(dir, { recursive: true, force: true });
}
