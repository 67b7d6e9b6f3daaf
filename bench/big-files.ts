// Big-file benchmark (issue 8): `node --expose-gc bench/big-files.ts` generates a 100k x 10
// .xlsx written by SheetJS, the same rows written by openpyxl (python3; skipped, saying why, where
// python3 or openpyxl is missing) and a 1M x 6 .csv (cached in the system's temp folder), then for each:
//   - memory: a fresh process opens it as the file source does (openFileSource), collects
//     garbage and reports its resident set and live heap, beside the JSON text of all its rows
//     (target: the loaded tab takes at most 3x that JSON);
//   - exact filter: GET /sheets/x/Id/<one id> (a unique key) through the engine, the first time
//     (it builds the column's index) and repeated (target: < 5 ms on 1M rows);
//   - fold: a server (node server/main.ts) serving a copy; one POST, and while the journal is
//     folded into the file GETs go out back to back: the slowest answer is the longest the
//     event loop was held. Peak resident set (VmHWM) before and after the fold, and the resident
//     set sampled with every GET (issue 24's targets for the .xlsx files, printed at the end:
//     the fold within 3 s idle, its peak within 1.3x the resident set before, no GET 50 ms).
// `node --expose-gc bench/big-files.ts xlsx` (or `openpyxl`, `csv`) runs one file; BENCH_RUNTIME=deno|bun
// serves the fold with another runtime; `node bench/big-files.ts threshold` times small folds
// on the main thread against a worker (where INLINE_BELOW_BYTES comes from).
import * as XLSX from '@e965/xlsx';
import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { handle } from '../lib/mod.ts';
import { fingerprint } from '../server/durable/disk.ts';
import { runFold } from '../server/sources/file/fold-runner.ts';
import { openFileSource } from '../server/sources/file/mod.ts';
import { freePort, memoryMb, ROOT, startProcess, stopProcess, type Runtime } from './processes.ts';

const CACHE = join(tmpdir(), 'sheetrest-big-files');
const FIRST = ['Ann', 'Anna', 'Joanna', 'Hannah', 'Johann', 'Bob', 'Carlos', 'Diana', 'Eve', 'Frank', 'Grace', 'Hugo', 'Ines', 'Jorge', 'Luis', 'Maria'];
const LAST = ['Silva', 'Santos', 'Ferreira', 'Pereira', 'Oliveira', 'Costa', 'Rodrigues', 'Martins', 'Jansen', 'Brandt', 'Moreau', 'Rossi'];
const CITIES = ['Lisbon', 'Porto', 'Madrid', 'Paris', 'Berlin', 'Rome', 'Vienna', 'Prague', 'Dublin', 'Oslo'];

const FILES = {
  xlsx: { path: join(CACHE, 'big.xlsx'), rows: 100_000, key: 'Id', extension: 'xlsx' },
  openpyxl: { path: join(CACHE, 'big-openpyxl.xlsx'), rows: 100_000, key: 'Id', extension: 'xlsx' },
  csv: { path: join(CACHE, 'big.csv'), rows: 1_000_000, key: 'id', extension: 'csv' },
} as const;
type Kind = keyof typeof FILES;

/** The rows makeXlsx writes, written by openpyxl (a normal workbook, not write-only: it has a `<dimension>`, as Excel's files do). */
const OPENPYXL_SCRIPT = `
import sys, datetime
from openpyxl import Workbook
path, n = sys.argv[1], int(sys.argv[2])
FIRST = ${JSON.stringify(FIRST)}
LAST = ${JSON.stringify(LAST)}
CITIES = ${JSON.stringify(CITIES)}
book = Workbook()
sheet = book.active
sheet.title = 'People'
sheet.append(['Id', 'Name', 'City', 'Age', 'Score', 'Joined', 'Active', 'Code', 'Amount', 'Note'])
start = datetime.date(2015, 1, 1)
for i in range(n):
    sheet.append([100000 + i, FIRST[i % len(FIRST)] + ' ' + LAST[(i * 7) % len(LAST)], CITIES[(i * 3) % len(CITIES)], 18 + i % 70,
                  ((i * 7919) % 100000) / 100, start + datetime.timedelta(days=(i * 37) % 3650), i % 3 == 0, 'C-%d' % ((i * 31) % 997),
                  (i * 13) % 5000, 'call back' if i % 5 == 0 else None])
book.save(path)
`;

/** The python3 that has openpyxl (the one on PATH, else Debian's), or why none does. */
function openpyxlPython(): { readonly python: string } | { readonly missing: string } {
  const tried: string[] = [];
  for (const python of ['python3', '/usr/bin/python3']) {
    const probe = spawnSync(python, ['-c', 'import openpyxl'], { encoding: 'utf8' });
    if (probe.status === 0) return { python };
    tried.push(`${python}: ${probe.error?.message ?? probe.stderr.trim().split('\n').pop()}`);
  }
  return { missing: `no python3 with openpyxl (${tried.join('; ')})` };
}

function makeOpenpyxl(path: string, rowCount: number): void {
  const found = openpyxlPython();
  if ('missing' in found) throw new Error(found.missing);
  const made = spawnSync(found.python, ['-c', OPENPYXL_SCRIPT, path, String(rowCount)], { encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`openpyxl could not write ${path}: ${made.stderr}`);
}

async function makeXlsx(path: string, rowCount: number): Promise<void> {
  const rows: unknown[][] = [['Id', 'Name', 'City', 'Age', 'Score', 'Joined', 'Active', 'Code', 'Amount', 'Note']];
  for (let i = 0; i < rowCount; i++) {
    const name = `${FIRST[i % FIRST.length]} ${LAST[(i * 7) % LAST.length]}`;
    const joined = new Date(Date.UTC(2015, 0, 1) + ((i * 37) % 3650) * 86_400_000);
    rows.push([100_000 + i, name, CITIES[(i * 3) % CITIES.length], 18 + (i % 70), ((i * 7919) % 100_000) / 100, joined, i % 3 === 0, `C-${(i * 31) % 997}`, (i * 13) % 5000, i % 5 === 0 ? 'call back' : '']);
  }
  const sheet = XLSX.utils.aoa_to_sheet(rows, { dateNF: 'yyyy-mm-dd' });
  const book = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(book, sheet, 'People');
  await writeFile(path, new Uint8Array(XLSX.write(book, { type: 'array', bookType: 'xlsx', compression: true, bookSST: true }) as ArrayBuffer));
}

async function makeCsv(path: string, rowCount: number): Promise<void> {
  const lines = ['id,name,city,age,amount,date'];
  for (let i = 0; i < rowCount; i++) {
    const day = new Date(Date.UTC(2015, 0, 1) + ((i * 37) % 3650) * 86_400_000).toISOString().slice(0, 10);
    lines.push(`${1_000_000 + i},${FIRST[i % FIRST.length]} ${LAST[(i * 7) % LAST.length]},${CITIES[(i * 3) % CITIES.length]},${18 + (i % 70)},${(((i * 7919) % 1_000_000) / 100).toFixed(2)},${day}`);
  }
  await writeFile(path, lines.join('\n') + '\n');
}

async function ensureFile(kind: Kind): Promise<string> {
  const { path, rows } = FILES[kind];
  if (!existsSync(path)) {
    await mkdir(CACHE, { recursive: true });
    if (kind === 'openpyxl') makeOpenpyxl(path, rows);
    else await (kind === 'xlsx' ? makeXlsx(path, rows) : makeCsv(path, rows));
  }
  return path;
}

const mb = (bytes: number): number => Math.round(bytes / 1024 / 1024);

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 3; i++) gc();
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

interface LoadFigures {
  readonly loadMs: number;
  readonly rssMb: number;
  readonly heapMb: number;
  readonly externalMb: number;
  readonly jsonMb: number;
  readonly firstFilterMs: number;
  readonly repeatedFilterMs: number;
  readonly slowestRepeatedMs: number;
}

/** In a fresh process (`load <kind>`): open the file, measure, time the exact filter. */
async function measureLoad(kind: Kind): Promise<LoadFigures> {
  const { path, rows, key } = FILES[kind];
  const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-big-state-'));
  try {
    collect();
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    const source = await openFileSource({ path, stateDir, readOnly: true, foldAfterMs: Infinity, log: () => undefined });
    const loadMs = performance.now() - started;
    collect();
    const memory = process.memoryUsage();
    const workbook = await source.read();
    // A key in the middle of the tab, another on each repeat so no answer is merely remembered.
    const base = kind === 'csv' ? 1_000_000 : 100_000;
    const filter = (i: number) => {
      const result = handle(workbook, { method: 'GET', url: `/sheets/x/${key}/${base + ((rows >> 1) + i * 7919) % rows}` });
      if (result.status !== 200 || !result.body.startsWith('[{')) throw new Error(`filter answered ${result.status} ${result.body.slice(0, 200)}`);
    };
    let at = performance.now();
    filter(0);
    const firstFilterMs = performance.now() - at;
    const times: number[] = [];
    for (let i = 1; i <= 50; i++) {
      at = performance.now();
      filter(i);
      times.push(performance.now() - at);
    }
    const all = handle(workbook, { method: 'GET', url: '/sheets/x' });
    const jsonMb = (all.bytes?.length ?? all.body.length) / 1024 / 1024;
    await source.close();
    return {
      loadMs: Math.round(loadMs),
      rssMb: mb(memory.rss),
      heapMb: mb(memory.heapUsed - heapBefore),
      externalMb: mb(memory.external),
      jsonMb: Math.round(jsonMb * 10) / 10,
      firstFilterMs: Math.round(firstFilterMs * 10) / 10,
      repeatedFilterMs: Math.round(median(times) * 1000) / 1000,
      slowestRepeatedMs: Math.round(Math.max(...times) * 1000) / 1000,
    };
  } finally {
    await rm(stateDir, { recursive: true, force: true });
  }
}

interface FoldFigures {
  readonly runtime: Runtime;
  readonly foldMs: number;
  readonly getsDuringFold: number;
  readonly slowestGetMs: number;
  readonly medianGetMs: number;
  readonly rssBeforeMb: number;
  readonly peakBeforeMb: number;
  readonly peakAfterMb: number;
  /** The largest resident set sampled (with every GET) from the POST until a second after the file was replaced. */
  readonly rssPeakDuringFoldMb: number;
  readonly rssAfterMb: number;
  readonly secondPostMs: number;
}

/** A server on a copy of the file; one POST, then GETs back to back until the fold has replaced the file. */
async function measureFold(kind: Kind, runtime: Runtime): Promise<FoldFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'sheetrest-big-fold-'));
  const file = join(dir, `big.${FILES[kind].extension}`);
  await copyFile(FILES[kind].path, file);
  const port = await freePort();
  const server = await startProcess({
    name: `${runtime} ${kind}`,
    runtime,
    args: ['server/main.ts', file, '--port', String(port), '--log-level', 'warn', '--state-dir', join(dir, 'state')],
    port,
    probe: '/sheets/big?_limit=1',
    log: join(dir, 'server.log'),
  });
  try {
    /** Milliseconds to the answer. */
    const timed = async (path: string, init?: RequestInit): Promise<number> => {
      const at = performance.now();
      // After a long stall the server may close an idle kept-alive connection just as it is
      // reused (ECONNRESET): the request is sent again, its time counted from the first try.
      for (let attempt = 0; ; attempt++) {
        try {
          const response = await fetch(server.url + path, init);
          await response.arrayBuffer();
          return performance.now() - at;
        } catch (error) {
          if (attempt === 2) throw error;
        }
      }
    };
    const get = () => timed('/sheets/big?_limit=1');
    for (let i = 0; i < 20; i++) await get();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const rssBeforeMb = Math.round(memoryMb(server.process, 'VmRSS'));
    const peakBeforeMb = Math.round(memoryMb(server.process, 'VmHWM'));
    const before = (await stat(file)).mtimeMs;
    const row = kind === 'csv' ? { id: 1, name: 'New Person', city: 'Lisbon', age: 30 } : { Id: 1, Name: 'New Person', City: 'Lisbon', Age: 30 };
    const posted = await fetch(`${server.url}/sheets/big`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(row) });
    if (posted.status !== 201) throw new Error(`POST answered ${posted.status}: ${await posted.text()}`);
    const postedAt = performance.now();
    const times: number[] = [];
    let rssPeakDuringFold = 0;
    let foldedAt = 0;
    // A second write 1.5 s in, while the fold runs (it starts 200 ms after the first): how long it waits.
    const second = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      return timed('/sheets/big', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(row) });
    })();
    // A GET every 10 ms or as soon as the last answered, until the file is replaced and one more
    // second has passed (the fold's last steps and its garbage).
    while (foldedAt === 0 || performance.now() - foldedAt < 1000) {
      const at = performance.now();
      times.push(await get());
      rssPeakDuringFold = Math.max(rssPeakDuringFold, memoryMb(server.process, 'VmRSS'));
      if (foldedAt === 0 && (await stat(file)).mtimeMs !== before) foldedAt = performance.now();
      if (performance.now() - postedAt > 300_000) throw new Error('the fold did not happen within five minutes');
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, 10 - (performance.now() - at))));
    }
    const secondPostMs = await second;
    return {
      runtime,
      foldMs: Math.round(foldedAt - postedAt),
      getsDuringFold: times.length,
      slowestGetMs: Math.round(Math.max(...times)),
      medianGetMs: Math.round(median(times) * 10) / 10,
      rssBeforeMb,
      peakBeforeMb,
      peakAfterMb: Math.round(memoryMb(server.process, 'VmHWM')),
      rssPeakDuringFoldMb: Math.round(rssPeakDuringFold),
      rssAfterMb: Math.round(memoryMb(server.process, 'VmRSS')),
      secondPostMs: Math.round(secondPostMs),
    };
  } catch (error) {
    throw new Error(`fold of .${kind} on ${runtime}: ${String(error)}; the server's log: ${await readFile(join(dir, 'server.log'), 'utf8')}`);
  } finally {
    await stopProcess(server);
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * `threshold`: where a worker starts to pay. For .xlsx files of a few thousand rows, the event
 * loop held by a fold on the main thread (the whole fold) against a fold in a worker (its wall
 * time, and the longest the event loop went without a 5 ms timer firing meanwhile).
 */
async function measureThreshold(): Promise<void> {
  console.log('| rows x 10 | file | fold on the main thread | fold in a worker (wall) | longest event-loop gap meanwhile |');
  console.log('|---:|---:|---:|---:|---:|');
  for (const rows of [300, 1_000, 3_000, 10_000]) {
    const path = join(CACHE, `threshold-${rows}.xlsx`);
    if (!existsSync(path)) await makeXlsx(path, rows);
    const job = { path, expected: fingerprint(await readFile(path)), format: 'xlsx' as const, tabName: 'big', entries: [] };
    const inline: number[] = [];
    const worker: number[] = [];
    const gaps: number[] = [];
    for (let run = 0; run < 3; run++) {
      let at = performance.now();
      await removeWritten(runFold(job, { inlineBelowBytes: Infinity }));
      inline.push(performance.now() - at);
      let last = performance.now();
      let gap = 0;
      const timer = setInterval(() => {
        gap = Math.max(gap, performance.now() - last);
        last = performance.now();
      }, 5);
      at = performance.now();
      await removeWritten(runFold(job, { inlineBelowBytes: 0 }));
      worker.push(performance.now() - at);
      clearInterval(timer);
      gaps.push(gap);
    }
    const size = (await stat(path)).size;
    console.log(`| ${rows.toLocaleString('en')} | ${Math.round(size / 1024)} KiB | ${Math.round(median(inline))} ms | ${Math.round(median(worker))} ms | ${Math.round(median(gaps))} ms |`);
  }
}

/** A fold writes its new file beside the workbook (fold-runner.ts); here nothing renames it over it. */
async function removeWritten(fold: ReturnType<typeof runFold>): Promise<void> {
  const { result } = await fold;
  if (result.kind === 'folded') await rm(result.temp, { force: true });
}

if (process.argv[2] === 'threshold') {
  await mkdir(CACHE, { recursive: true });
  await measureThreshold();
} else if (process.argv[2] === 'fold') {
  console.log(JSON.stringify(await measureFold(process.argv[3] as Kind, (process.env.BENCH_RUNTIME ?? 'node') as Runtime)));
} else if (process.argv[2] === 'load') {
  const figures = await measureLoad(process.argv[3] as Kind);
  process.stdout.write(JSON.stringify(figures));
} else {
  const kinds = (process.argv.slice(2).filter((arg) => arg in FILES) as Kind[]).concat();
  const chosen: Kind[] = kinds.length > 0 ? kinds : ['xlsx', 'openpyxl', 'csv'];
  const runtime = (process.env.BENCH_RUNTIME ?? 'node') as Runtime;
  console.log('| file | size | load | RSS after load | live heap | JSON of its rows | heap / JSON | exact filter, first | repeated (median of 50) | slowest of 50 |');
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  const folds: [Kind, FoldFigures][] = [];
  for (const kind of chosen) {
    const python = kind === 'openpyxl' && !existsSync(FILES[kind].path) ? openpyxlPython() : null;
    if (python !== null && 'missing' in python) {
      console.log(`| 100,000 x 10 .xlsx (openpyxl) | skipped: ${python.missing} |`);
      continue;
    }
    const path = await ensureFile(kind);
    const size = (await stat(path)).size;
    const child = spawnSync(process.execPath, ['--expose-gc', 'bench/big-files.ts', 'load', kind], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 20 });
    if (child.status !== 0) throw new Error(`load ${kind} failed: ${child.stderr}`);
    const f = JSON.parse(child.stdout) as LoadFigures;
    const rows = FILES[kind].rows.toLocaleString('en');
    console.log(`| ${rows} x ${kind === 'csv' ? 6 : 10} .${FILES[kind].extension}${kind === 'openpyxl' ? ' (openpyxl)' : ''} | ${(size / 1024 / 1024).toFixed(1)} MB | ${(f.loadMs / 1000).toFixed(1)} s | ${f.rssMb} MB | ${f.heapMb} MB | ${f.jsonMb} MB | ${(f.heapMb / f.jsonMb).toFixed(2)} | ${f.firstFilterMs} ms | ${f.repeatedFilterMs} ms | ${f.slowestRepeatedMs} ms |`);
    folds.push([kind, await measureFold(kind, runtime)]);
  }
  console.log('\n| file | runtime | POST to file replaced | GETs meanwhile | slowest GET | median GET | a POST during the fold | RSS before | peak before | peak after the fold | RSS sampled during the fold, peak | / RSS before | RSS after |');
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const [kind, f] of folds) {
    console.log(`| .${FILES[kind].extension}${kind === 'openpyxl' ? ' (openpyxl)' : ''} | ${f.runtime} | ${f.foldMs} ms | ${f.getsDuringFold} | ${f.slowestGetMs} ms | ${f.medianGetMs} ms | ${f.secondPostMs} ms | ${f.rssBeforeMb} MB | ${f.peakBeforeMb} MB | ${f.peakAfterMb} MB | ${f.rssPeakDuringFoldMb} MB | ${(f.rssPeakDuringFoldMb / f.rssBeforeMb).toFixed(2)} | ${f.rssAfterMb} MB |`);
  }
  // Issue 24's targets for a 100k-row .xlsx, written by SheetJS or openpyxl (measured idle).
  for (const [kind, f] of folds.filter(([kind]) => kind !== 'csv')) {
    const check = (met: boolean): string => (met ? 'met' : 'MISSED');
    console.log(`.xlsx (${kind === 'openpyxl' ? 'openpyxl' : 'SheetJS'}): fold <= 3 s ${check(f.foldMs <= 3000)}; RSS during the fold <= 1.3x before ${check(f.rssPeakDuringFoldMb <= 1.3 * f.rssBeforeMb)}; slowest GET < 50 ms ${check(f.slowestGetMs < 50)}`);
  }
}
