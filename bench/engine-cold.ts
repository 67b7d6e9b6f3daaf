// One read through this tree's engine (A) and another checkout's (B), alternating in one process,
// many times, on a tab of bench/engine-book.ts: `cold` times the first read of a new tab object
// holding the same rows (what bench/engine-ab.ts's cold column times once per run), `after-gc`
// the read of an unchanged tab right after a forced full collection and then the read after it.
//   node --expose-gc bench/engine-cold.ts OTHER_TREE cold|after-gc URL [RUNS] [ROWS]   (URL: a full /sheets/... path, or what follows /sheets/demo)
//   e.g. node --expose-gc bench/engine-cold.ts /tmp/base '?_sort=Score' 4 1000000
import { resolve } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { handle as handleA } from '../lib/mod.ts';
import { buildWorkbook } from './engine-book.ts';

const [OTHER, MODE, URL_PART] = process.argv.slice(2);
if (OTHER === undefined || (MODE !== 'cold' && MODE !== 'after-gc') || URL_PART === undefined) throw new Error('usage: node --expose-gc bench/engine-cold.ts OTHER_TREE cold|after-gc URL [RUNS] [ROWS]');
const RUNS = Number(process.argv[5] ?? 8);
const ROWS = Number(process.argv[6] ?? 1_000_000);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const { handle: handleB } = (await import(pathToFileURL(resolve(OTHER, 'lib/mod.ts')).href)) as { handle: typeof handleA };
const url = URL_PART.startsWith('/sheets/') ? URL_PART : `/sheets/demo${URL_PART}`;
const workbook = buildWorkbook(ROWS);
const rows = workbook.tabs[0].rows;
const engines = [['A', handleA], ['B', handleB]] as const;
for (const [, handle] of engines) handle(workbook, { method: 'GET', url });
const times: Record<string, number[]> = { A: [], B: [], 'A next': [], 'B next': [] };
const timed = (work: () => unknown): number => {
  const start = performance.now();
  work();
  return performance.now() - start;
};
for (let run = 0; run < RUNS; run++) {
  for (const [name, handle] of run % 2 === 0 ? engines : [...engines].reverse()) {
    const tab = MODE === 'cold' ? { tabs: [{ name: 'People', rows }] } : workbook;
    gc();
    times[name].push(timed(() => handle(tab, { method: 'GET', url })));
    if (MODE === 'after-gc') times[`${name} next`].push(timed(() => handle(tab, { method: 'GET', url })));
  }
}
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1];
const list = (values: number[]) => values.map((value) => value.toPrecision(3)).join(' ');
console.log(`${MODE} ${url}, ${ROWS.toLocaleString('en')} rows, ${RUNS} runs (ms): A ${list(times.A)} | B ${list(times.B)} | median A/B ${(median(times.A) / median(times.B)).toFixed(2)}`);
if (MODE === 'after-gc') console.log(`the read after: median A ${median(times['A next']).toFixed(2)}, B ${median(times['B next']).toFixed(2)} ms`);
