// The engine of this tree (A) against another checkout's (B), in one process, on one tab: each
// read of bench/engine.ts through A's `handle()` and B's, interleaved run by run, so drift and
// other load fall on both alike. A/B below 1 means this tree is faster. "repeated" is a read of
// an unchanged tab (each engine keeps its own caches per tab object); "cold" is the first read of
// a new tab object holding the same rows (table, folded columns and row JSON built again).
// Both start each timed read on a heap just collected by a forced full gc(), which V8 follows by
// re-optimizing the hot functions; "steady" is what a busy server sees instead: blocks of reads
// back to back (at least 5, and at least STEADY_MS long, so that a collection falling in a block
// is shared by many reads), A's and B's blocks interleaved (time per read). Each run times
// the steady blocks before the cold read: a cold read of 1M rows leaves hundreds of megabytes
// of garbage, whose collection would otherwise land in whichever block came next.
//   node --expose-gc bench/engine-ab.ts OTHER_TREE [ROWS] [RUNS]
//   e.g. git worktree add --detach /tmp/base 5af5af8 && ln -s $PWD/node_modules /tmp/base/node_modules
//        node --expose-gc bench/engine-ab.ts /tmp/base 1000000 5
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { handle as handleA } from '../lib/mod.ts';
import type { Workbook } from '../lib/mod.ts';
import { buildWorkbook } from './engine-book.ts';

const OTHER = process.argv[2];
if (OTHER === undefined) throw new Error('usage: node --expose-gc bench/engine-ab.ts OTHER_TREE [ROWS] [RUNS]');
const ROWS = Number(process.argv[3] ?? 1_000_000);
const RUNS = Number(process.argv[4] ?? 5);
const { handle: handleB } = (await import(pathToFileURL(resolve(OTHER, 'lib/mod.ts')).href)) as { handle: typeof handleA };

const READS = [
  ['exact filter', '/sheets/demo/City/Lisbon'],
  ['*x* filter', '/sheets/demo/Name/*ann*'],
  ['/search, 2 conditions', '/sheets/demo/search?City=Lisbon&Name=*an*'],
  ['/query __gt', '/sheets/demo/query?Score=__gt(90)'],
  ['_sort one column', '/sheets/demo?_sort=Score'],
  ['_format=split', '/sheets/demo?_format=split'],
] as const;

const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc, so each timed read starts from a collected heap');
const encoder = new TextEncoder();

function read(handle: typeof handleA, workbook: Workbook, url: string): Uint8Array {
  const result = handle(workbook, { method: 'GET', url });
  if (result.status !== 200) throw new Error(`GET ${url} answered ${result.status}`);
  return result.bytes ?? encoder.encode(result.body);
}

function time(work: () => Uint8Array): number {
  gc!();
  const start = performance.now();
  work();
  return performance.now() - start;
}

/**
 * Milliseconds per read over a block of at least `STEADY_READS` reads in a row lasting at least
 * `STEADY_MS`, after a collection and one untimed read. Blocks of 20 cached 1M-row `_format=split`
 * reads (about 0.3 ms in all) took 0.012 ms or 1.4 ms a read in the same process, whichever
 * engine, as a collection fell in the block or not (docs/benchmarks.md).
 */
const STEADY_READS = 5;
const STEADY_MS = 500;
function steady(work: () => Uint8Array): number {
  gc!();
  work();
  const start = performance.now();
  let reads = 0;
  let elapsed = 0;
  while (reads < STEADY_READS || elapsed < STEADY_MS) {
    work();
    reads++;
    elapsed = performance.now() - start;
  }
  return elapsed / reads;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

const workbook = buildWorkbook(ROWS);
const rows = workbook.tabs[0].rows;
const fresh = (): Workbook => ({ tabs: [{ name: 'People', rows }] });
console.log(`engine A (this tree) against B (${OTHER}), ${ROWS.toLocaleString('en')} rows, median of ${RUNS} interleaved runs (ms)`);
console.log('| read | A repeated | B repeated | A/B | A cold | B cold | A/B | A steady | B steady | A/B |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
for (const [name, url] of READS) {
  assert.deepEqual(read(handleA, workbook, url), read(handleB, workbook, url), `${name}: both engines answer the same bytes`);
  const a: number[] = [];
  const b: number[] = [];
  const aCold: number[] = [];
  const bCold: number[] = [];
  const aSteady: number[] = [];
  const bSteady: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    // Alternate which goes first, so neither always runs on a heap the other just grew.
    const pair = run % 2 === 0 ? [0, 1] : [1, 0];
    for (const side of pair) {
      if (side === 0) a.push(time(() => read(handleA, workbook, url)));
      else b.push(time(() => read(handleB, workbook, url)));
    }
    for (const side of pair) {
      if (side === 0) aSteady.push(steady(() => read(handleA, workbook, url)));
      else bSteady.push(steady(() => read(handleB, workbook, url)));
    }
    const coldA = fresh();
    const coldB = fresh();
    for (const side of pair) {
      if (side === 0) aCold.push(time(() => read(handleA, coldA, url)));
      else bCold.push(time(() => read(handleB, coldB, url)));
    }
  }
  const row = [median(a), median(b), median(a) / median(b), median(aCold), median(bCold), median(aCold) / median(bCold), median(aSteady), median(bSteady), median(aSteady) / median(bSteady)];
  console.log(`| ${name} | ${row[0].toFixed(1)} | ${row[1].toFixed(1)} | ${row[2].toFixed(2)} | ${row[3].toFixed(0)} | ${row[4].toFixed(0)} | ${row[5].toFixed(2)} | ${row[6].toPrecision(3)} | ${row[7].toPrecision(3)} | ${row[8].toFixed(2)} |`);
}
