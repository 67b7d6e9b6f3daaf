// `node bench/upsert.ts`: an upsert of 1,000 rows (`POST /sheets/bench?_upsert=Email`, half of
// them keys the tab holds, half new) into a 100k-row tab, paired with a POST of 1,000 rows on the
// same tab: both through the app's whole pipeline (parse, plan, apply, answer) over an in-memory
// source, alternated round by round so the machine's load falls on both alike. Prints the median
// time per request of each and their ratio (docs/benchmarks.md). ROWS and ROUNDS override the sizes.
import process from 'node:process';
import { loadavg } from 'node:os';
import { createApp } from '../server/http/app.ts';
import { createLogger } from '../server/log.ts';
import { memorySource } from '../server/sources/memory.ts';
import type { SheetRow } from '../lib/workbook.ts';

const ROWS = Number(process.env.ROWS ?? 100_000);
const ROUNDS = Number(process.env.ROUNDS ?? 15);
const BODY_ROWS = 1000;

const cell = (value: string | number): { text: string; value: string | number } => ({ text: String(value), value });
function row(...cells: (string | number)[]): SheetRow {
  return { text: cells.map((value) => cell(value).text), value: cells };
}

const grid = [row('Email', 'Name', 'Age'), ...Array.from({ length: ROWS }, (_, i) => row(`p${i}@x.org`, `Person ${i}`, i % 90))];
const source = memorySource({ tabs: [{ name: 'People', rows: grid }] });
const app = createApp({
  connections: [{ id: 'bench', source, keys: [], readOnly: false, engine: {} }],
  quota: { take: () => ({ allowed: true, headers: {} }), peek: () => ({}) },
  bodyBytes: 16 * 1024 * 1024,
  cors: '*',
  log: createLogger('silent'),
});

let fresh = 0;
async function timed(path: string, body: unknown): Promise<number> {
  const started = performance.now();
  const answer = await app.fetch(new Request(`http://x${path}`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }));
  await answer.arrayBuffer();
  const ms = performance.now() - started;
  if (answer.status !== 200 && answer.status !== 201) throw new Error(`${path}: ${answer.status}`);
  return ms;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const post: number[] = [];
const upsert: number[] = [];
// One warm-up of each, not counted: the first builds the tab's indexes.
for (let round = -1; round < ROUNDS; round++) {
  const appended = Array.from({ length: BODY_ROWS }, () => ({ Email: `new${fresh}@x.org`, Name: `New ${fresh++}`, Age: 1 }));
  // Half the keys are rows the tab holds (spread over it), half are new: 500 updates, 500 appends.
  const mixed = Array.from({ length: BODY_ROWS }, (_, i) => (i % 2 === 0 ? { Email: `p${(i * 97 + round * 13 + 50) % ROWS}@x.org`, Age: round + 2 } : { Email: `up${fresh++}@x.org`, Name: 'Up', Age: 3 }));
  const first = round % 2 === 0;
  const a = first ? await timed('/sheets/bench', appended) : await timed('/sheets/bench?_upsert=Email', mixed);
  const b = first ? await timed('/sheets/bench?_upsert=Email', mixed) : await timed('/sheets/bench', appended);
  if (round < 0) continue;
  post.push(first ? a : b);
  upsert.push(first ? b : a);
}
console.log(`# 1,000-row writes into a ${ROWS.toLocaleString('en')}-row tab, in process (memory source), ${ROUNDS} paired rounds, Node ${process.version}, load average ${loadavg().map((load) => load.toFixed(2)).join(' ')}`);
console.log('| request | median ms per request |');
console.log('|---|---|');
console.log(`| POST 1,000 rows | ${median(post).toFixed(1)} |`);
console.log(`| POST ?_upsert=Email, 1,000 rows (500 updated, 500 appended) | ${median(upsert).toFixed(1)} |`);
console.log(`| ratio upsert / POST | ${(median(upsert) / median(post)).toFixed(2)} |`);
