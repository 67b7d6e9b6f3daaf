// Engine benchmark: `npm run bench` (or `node --expose-gc bench/engine.ts 100000` for one size).
// Times GET /sheets/demo/City/Lisbon and six other reads (`_select` of 2 of 6 columns among them)
// through `handle()` on generated tabs of 100k and 1M rows x 6 columns, each beside a
// hand-written loop doing the same work, and measures the heap a loaded tab takes against the
// JSON text of all its rows. Also an exact filter on a unique key (`--unique-key` for that table
// alone): the first, which builds the column's index, and repeated; and
// `aggregate?_group=City&_agg=count(),sum(Score),avg(Score)` (`--aggregate` alone) beside a
// hand loop grouping in a Map: first asked, on a new table, and repeated.
// Issue 25's conditions (`__in` of 10 values, `__startswith`, `_or` of two exact conditions)
// run with the rest, or alone with `--conditions`.
//
// "The same work" means the hand loop and the engine produce byte-identical JSON (asserted
// once per operation and size before timing) from the same workbook under the same semantics:
//   - matching compares the displayed text case-insensitively (`toLowerCase`), `*x*` as
//     "contains"; the hand loop gets the lower-cased column arrays precomputed outside the timed
//     region, as the engine caches them per tab (`Table.folded`);
//   - `__gt(90)` compares the typed value as a number; an empty cell never matches;
//   - `__in(...)` and `_or` of exact conditions compare the lower-cased text, as exact filters do;
//     `__startswith(jo)` is `startsWith` on the lower-cased text;
//   - `_sort` is a stable sort by the typed number, empty cells last;
//   - the answer is the same JSON (records, or split), as the UTF-8 bytes a server sends, built inside the timed region, by
//     string concatenation and `JSON.stringify` of each value.
// The engine additionally caches each row's JSON text per tab object after the first read; the
// hand loop does not (it builds the JSON on every run, as the brief for this benchmark asks). So
// the "engine" column is a repeated read of an unchanged tab, and "cold" is the first read after
// a write (a new tab object: the table, its lower-cased columns and its row JSON built again).
// Every figure is the median of 5 timed runs (3 from 1M rows) after a warm-up run, with a GC
// before each timed run.
import assert from 'node:assert/strict';
import { handle } from '../lib/mod.ts';
import type { SheetRow, Tab, TypedValue, Workbook } from '../lib/mod.ts';
import { AGE, buildWorkbook, CITY, COLUMNS, NAME, SCORE } from './engine-book.ts';

const WARMUP = 1;
/** Timed runs per operation; fewer on the largest tabs, where one sort takes seconds. */
const runsFor = (rowCount: number): number => (rowCount >= 1_000_000 ? 3 : 5);
const RATIO_TARGET = 1.5;
const MEMORY_TARGET = 3;
const MEMORY_ROWS = 100_000;
const sizes = process.argv.slice(2).map(Number).filter((n) => Number.isInteger(n) && n > 0);
const SIZES = sizes.length > 0 ? sizes : [100_000, 1_000_000];
/** `--after-write`: only the "first `*x*` search after a write" table. */
const AFTER_WRITE_ONLY = process.argv.includes('--after-write');
/** `--unique-key`: only the "exact filter on a unique key" table. */
const UNIQUE_KEY_ONLY = process.argv.includes('--unique-key');
/** `--conditions`: only the version 2 conditions (`__in`, `__startswith`, `_or`; issue 25). */
const CONDITIONS_ONLY = process.argv.includes('--conditions');
/** `--aggregate`: only the aggregate table. */
const AGGREGATE_ONLY = process.argv.includes('--aggregate');


// ---------------------------------------------------------------------------------------------
// The hand-written loops

interface Columns {
  readonly rowCount: number;
  readonly text: readonly (readonly string[])[];
  readonly lower: readonly (readonly string[])[];
  readonly score: readonly TypedValue[];
}

/** What the engine caches per tab: each column's displayed text and its lower case. Not timed. */
function columnsOf(tab: Tab): Columns {
  const data = tab.rows.slice(1);
  const text = COLUMNS.map((_, position) => data.map((row) => row.text[position] ?? ''));
  return {
    rowCount: data.length,
    text,
    lower: text.map((column) => column.map((cell) => cell.toLowerCase())),
    score: data.map((row) => row.value[SCORE] ?? null),
  };
}

const KEYS = COLUMNS.map((name, i) => (i === 0 ? '{' : ',') + JSON.stringify(name) + ':');

function recordsJson(columns: Columns, indexes: readonly number[]): string {
  const { text } = columns;
  let json = '[';
  for (let k = 0; k < indexes.length; k++) {
    const i = indexes[k];
    if (k > 0) json += ',';
    for (let c = 0; c < KEYS.length; c++) json += KEYS[c] + JSON.stringify(text[c][i]);
    json += '}';
  }
  return json + ']';
}

function splitJson(columns: Columns, indexes: readonly number[]): string {
  const { text } = columns;
  let index = '';
  let data = '';
  for (let k = 0; k < indexes.length; k++) {
    const i = indexes[k];
    index += (k > 0 ? ',"' : '"') + i + '"';
    data += k > 0 ? ',[' : '[';
    for (let c = 0; c < COLUMNS.length; c++) data += (c > 0 ? ',' : '') + JSON.stringify(text[c][i]);
    data += ']';
  }
  return `{"index":[${index}],"columns":${JSON.stringify(COLUMNS)},"data":[${data}]}`;
}

function allIndexes(rowCount: number): number[] {
  const indexes = new Array<number>(rowCount);
  for (let i = 0; i < rowCount; i++) indexes[i] = i;
  return indexes;
}

interface Operation {
  readonly name: string;
  readonly url: string;
  /** A version 2 condition (issue 25): what `--conditions` runs alone. */
  readonly conditions?: boolean;
  readonly hand: (columns: Columns) => string;
}

const OPERATIONS: readonly Operation[] = [
  {
    name: 'exact filter',
    url: '/sheets/demo/City/Lisbon',
    hand: (columns) => {
      const city = columns.lower[CITY];
      const indexes: number[] = [];
      for (let i = 0; i < columns.rowCount; i++) if (city[i] === 'lisbon') indexes.push(i);
      return recordsJson(columns, indexes);
    },
  },
  {
    name: '*x* filter',
    url: '/sheets/demo/Name/*ann*',
    hand: (columns) => {
      const name = columns.lower[NAME];
      const indexes: number[] = [];
      for (let i = 0; i < columns.rowCount; i++) if (name[i].includes('ann')) indexes.push(i);
      return recordsJson(columns, indexes);
    },
  },
  {
    name: '/search, 2 conditions',
    url: '/sheets/demo/search?City=Lisbon&Name=*an*',
    hand: (columns) => {
      const city = columns.lower[CITY];
      const name = columns.lower[NAME];
      const indexes: number[] = [];
      for (let i = 0; i < columns.rowCount; i++) if (city[i] === 'lisbon' && name[i].includes('an')) indexes.push(i);
      return recordsJson(columns, indexes);
    },
  },
  {
    name: '/query __gt',
    url: '/sheets/demo/query?Score=__gt(90)',
    hand: (columns) => {
      const { score } = columns;
      const indexes: number[] = [];
      for (let i = 0; i < columns.rowCount; i++) {
        const value = score[i];
        if (typeof value === 'number' && value > 90) indexes.push(i);
      }
      return recordsJson(columns, indexes);
    },
  },
  {
    name: '__in of 10 values',
    url: '/sheets/demo/query?Age=__in(20,25,30,35,40,45,50,55,60,65)',
    conditions: true,
    hand: (columns) => {
      const age = columns.lower[AGE];
      const wanted = new Set(['20', '25', '30', '35', '40', '45', '50', '55', '60', '65']);
      const indexes: number[] = [];
      for (let i = 0; i < columns.rowCount; i++) if (wanted.has(age[i])) indexes.push(i);
      return recordsJson(columns, indexes);
    },
  },
  {
    name: '__startswith',
    url: '/sheets/demo/query?Name=__startswith(jo)',
    conditions: true,
    hand: (columns) => {
      const name = columns.lower[NAME];
      const indexes: number[] = [];
      for (let i = 0; i < columns.rowCount; i++) if (name[i].startsWith('jo')) indexes.push(i);
      return recordsJson(columns, indexes);
    },
  },
  {
    name: '_or of two exact conditions',
    url: '/sheets/demo/query?_or=City=Lisbon;Age=30',
    conditions: true,
    hand: (columns) => {
      const city = columns.lower[CITY];
      const age = columns.lower[AGE];
      const indexes: number[] = [];
      for (let i = 0; i < columns.rowCount; i++) if (city[i] === 'lisbon' || age[i] === '30') indexes.push(i);
      return recordsJson(columns, indexes);
    },
  },
  {
    name: '_sort one column',
    url: '/sheets/demo?_sort=Score',
    hand: (columns) => {
      const { score } = columns;
      // Array.prototype.sort is stable; empty cells go last.
      const indexes = allIndexes(columns.rowCount).sort((a, b) => {
        const x = score[a];
        const y = score[b];
        if (typeof x !== 'number') return typeof y !== 'number' ? 0 : 1;
        if (typeof y !== 'number') return -1;
        return x - y;
      });
      return recordsJson(columns, indexes);
    },
  },
  {
    name: '_format=split',
    url: '/sheets/demo?_format=split',
    hand: (columns) => splitJson(columns, allIndexes(columns.rowCount)),
  },
  {
    name: '_select 2 of 6',
    url: '/sheets/demo?_select=Name,City',
    hand: (columns) => {
      const name = columns.text[NAME];
      const city = columns.text[CITY];
      let json = '[';
      for (let i = 0; i < columns.rowCount; i++) json += (i > 0 ? ',{"Name":' : '{"Name":') + JSON.stringify(name[i]) + ',"City":' + JSON.stringify(city[i]) + '}';
      return json + ']';
    },
  },
];

// ---------------------------------------------------------------------------------------------
// Measuring

const collectGarbage: () => void = (() => {
  const global = globalThis as { gc?: () => void; Bun?: { gc(force: boolean): void } };
  if (typeof global.gc === 'function') return global.gc;
  if (global.Bun !== undefined) return () => global.Bun!.gc(true);
  return () => {};
})();
const canCollect = collectGarbage.toString() !== (() => {}).toString();

let sink = 0;

function timeOnce(work: () => Uint8Array, collect = true): number {
  if (collect) collectGarbage();
  const start = performance.now();
  const output = work();
  const elapsed = performance.now() - start;
  sink += output.length;
  return elapsed;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

const encoder = new TextEncoder();

/** What a server sends: the answer's UTF-8 bytes (the engine builds row answers as bytes). */
function engineRead(workbook: Workbook, url: string): Uint8Array {
  const result = handle(workbook, { method: 'GET', url });
  if (result.status !== 200) throw new Error(`GET ${url} answered ${result.status}: ${result.body.slice(0, 200)}`);
  return result.bytes ?? encoder.encode(result.body);
}

/** The hand loop's JSON, encoded as a server would send it. */
function handRead(operation: { hand(columns: Columns): string }, columns: Columns): Uint8Array {
  return encoder.encode(operation.hand(columns));
}

interface Row {
  readonly operation: string;
  readonly rows: number;
  readonly matched: number;
  readonly engine: number;
  readonly cold: number;
  readonly hand: number;
}

function benchmark(rowCount: number): Row[] {
  const started = performance.now();
  const workbook = buildWorkbook(rowCount);
  console.log(`  built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const tab = workbook.tabs[0];
  const columns = columnsOf(tab);
  // A new tab object holding the same rows: the engine builds its table and caches again.
  const coldWorkbook = (): Workbook => ({ tabs: [{ name: tab.name, rows: tab.rows }] });
  const results: Row[] = [];
  for (const operation of OPERATIONS) {
    if (CONDITIONS_ONLY && operation.conditions !== true) continue;
    const engineOutput = engineRead(workbook, operation.url);
    const handOutput = handRead(operation, columns);
    assert.deepEqual(engineOutput, handOutput, `${operation.name}: the hand loop must answer exactly what the engine answers`);
    const matched = Number(handle(workbook, { method: 'HEAD', url: operation.url }).headers['X-Total-Count']);
    for (let i = 0; i < WARMUP; i++) {
      timeOnce(() => engineRead(workbook, operation.url), false);
      timeOnce(() => handRead(operation, columns), false);
    }
    const engine: number[] = [];
    const cold: number[] = [];
    const hand: number[] = [];
    // Interleaved, so drift (heat, other load) affects both sides alike.
    for (let i = 0; i < runsFor(rowCount); i++) {
      engine.push(timeOnce(() => engineRead(workbook, operation.url)));
      hand.push(timeOnce(() => handRead(operation, columns)));
      const fresh = coldWorkbook();
      cold.push(timeOnce(() => engineRead(fresh, operation.url)));
    }
    results.push({ operation: operation.name, rows: rowCount, matched, engine: median(engine), cold: median(cold), hand: median(hand) });
    console.log(`  ${operation.name}: done at ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  return results;
}

/**
 * GET /sheets/demo/Id/<id> on a unique key (issue 8: < 5 ms repeated on 1M rows): the first
 * (it builds the column's index), then 50 more, each another id; beside one scan of the
 * column's lower-cased text, what answering without the index costs.
 */
function uniqueKeyFilter(rowCount: number): { rows: number; first: number; repeated: number; slowest: number; scan: number } {
  const rows: SheetRow[] = [{ text: ['Id', 'Name'], value: ['Id', 'Name'] }];
  for (let i = 0; i < rowCount; i++) rows.push({ text: [String(1_000_000 + i), `Person ${i}`], value: [1_000_000 + i, `Person ${i}`] });
  const workbook: Workbook = { tabs: [{ name: 'People', rows }] };
  const id = (k: number) => 1_000_000 + ((rowCount >> 1) + k * 7919) % rowCount;
  const first = timeOnce(() => engineRead(workbook, `/sheets/demo/Id/${id(0)}`));
  const times: number[] = [];
  for (let k = 1; k <= 50; k++) {
    const bytes = engineRead(workbook, `/sheets/demo/Id/${id(k)}`);
    assert.ok(bytes.byteLength > 10, 'one row answered');
    times.push(timeOnce(() => engineRead(workbook, `/sheets/demo/Id/${id(k)}`), false));
  }
  const lower = rows.slice(1).map((row) => row.text[0].toLowerCase());
  const wanted = String(id(51));
  const scan = timeOnce(() => {
    const found: number[] = [];
    for (let i = 0; i < lower.length; i++) if (lower[i] === wanted) found.push(i);
    return new Uint8Array(found.length);
  });
  return { rows: rowCount, first, repeated: median(times), slowest: Math.max(...times), scan };
}

function measureMemory(rowCount: number): { tabBytes: number; cachedBytes: number; jsonBytes: number } {
  collectGarbage();
  const before = process.memoryUsage().heapUsed;
  const workbook = buildWorkbook(rowCount);
  collectGarbage();
  const loaded = process.memoryUsage().heapUsed;
  const jsonBytes = engineRead(workbook, '/sheets/demo').byteLength;
  for (const operation of OPERATIONS) engineRead(workbook, operation.url);
  collectGarbage();
  const cached = process.memoryUsage().heapUsed;
  // Keep the workbook alive until every measurement is taken.
  sink += workbook.tabs[0].rows.length;
  return { tabBytes: loaded - before, cachedBytes: cached - before, jsonBytes };
}

// ---------------------------------------------------------------------------------------------
// The first `*x*` search after a write

/** What a write costs the next `*x*` searches: the first one, and the slowest of the next 20. */
interface AfterWrite {
  readonly write: string;
  readonly rows: number;
  readonly first: number;
  readonly worst: number;
  readonly settled: number;
}

// A rare needle (about 0.7% of rows), so the answer's size does not hide what finding the rows costs.
const SEARCH_URL = '/sheets/demo/Name/*hannah r*';
const FOLLOWING = 20;

const WRITES: readonly { readonly name: string; readonly request: (rowCount: number) => { method: string; url: string; body?: string } }[] = [
  { name: 'none (a new tab object)', request: () => ({ method: 'GET', url: '/sheets/demo/0' }) },
  { name: 'POST one row', request: () => ({ method: 'POST', url: '/sheets/demo', body: '{"Name":"Joanna Brandt","Age":40,"City":"Porto"}' }) },
  { name: 'PATCH one row', request: (rowCount) => ({ method: 'PATCH', url: `/sheets/demo/${rowCount >> 1}`, body: '{"Name":"Hannah Rossi"}' }) },
  { name: 'DELETE one row', request: (rowCount) => ({ method: 'DELETE', url: `/sheets/demo/${rowCount >> 2}` }) },
];

function searchesAfterWrite(rowCount: number): AfterWrite[] {
  const base = buildWorkbook(rowCount);
  // Warm: the tab's caches and its `*x*` index are built before the write.
  for (let i = 0; i < 50; i++) engineRead(base, SEARCH_URL);
  const results: AfterWrite[] = [];
  for (const write of WRITES) {
    const firsts: number[] = [];
    const worsts: number[] = [];
    const settled: number[] = [];
    for (let run = 0; run < runsFor(rowCount); run++) {
      const request = write.request(rowCount);
      const next =
        request.method === 'GET'
          ? { tabs: [{ name: base.tabs[0].name, rows: base.tabs[0].rows }] }
          : handle(base, { ...request, headers: { 'Content-Type': 'application/json' } }).workbook;
      collectGarbage();
      const times: number[] = [];
      for (let i = 0; i <= FOLLOWING; i++) times.push(timeOnce(() => engineRead(next, SEARCH_URL), false));
      firsts.push(times[0]);
      worsts.push(Math.max(...times.slice(1)));
      settled.push(times[FOLLOWING]);
    }
    results.push({ write: write.name, rows: rowCount, first: median(firsts), worst: median(worsts), settled: median(settled) });
  }
  return results;
}

// ---------------------------------------------------------------------------------------------
// Aggregates

// Score stands for the Amount: numbers with 2% empty cells.
const AGGREGATE_URL = '/sheets/demo/aggregate?_group=City&_agg=count(),sum(Score),avg(Score)';
/** Another aggregate over the same columns: it builds their per-table work (group codes, numbers), not the answer above. */
const AGGREGATE_WARMING_URL = '/sheets/demo/aggregate?_group=City&_agg=sum(Score)';
const AGGREGATE_REPEATS = 50;

/**
 * The hand loop of the aggregate: rows grouped by lower-cased City in a Map, in the order first
 * met, each group showing its first City; count, and the compensated sum (Neumaier) and average
 * of the numeric Scores, written as the engine writes numbers (15 significant digits, shortest form).
 */
function handAggregate(columns: Columns): string {
  const lower = columns.lower[CITY];
  const shown = columns.text[CITY];
  const { score } = columns;
  const groups = new Map<string, { city: string; count: number; sum: number; compensation: number; numbers: number }>();
  for (let i = 0; i < columns.rowCount; i++) {
    let group = groups.get(lower[i]);
    if (group === undefined) groups.set(lower[i], (group = { city: shown[i], count: 0, sum: 0, compensation: 0, numbers: 0 }));
    group.count++;
    const value = score[i];
    if (typeof value !== 'number') continue;
    const sum = group.sum + value;
    group.compensation += Math.abs(group.sum) >= Math.abs(value) ? group.sum - sum + value : value - sum + group.sum;
    group.sum = sum;
    group.numbers++;
  }
  const number = (n: number) => String(Number.isSafeInteger(n) ? n : Number(n.toPrecision(15)));
  let json = '[';
  for (const group of groups.values()) {
    const total = group.sum + group.compensation;
    json += (json.length > 1 ? ',' : '') + '{"City":' + JSON.stringify(group.city) + ',"count()":"' + group.count + '"';
    json += ',"sum(Score)":' + (group.numbers === 0 ? '""' : '"' + number(total) + '"') + ',"avg(Score)":' + (group.numbers === 0 ? '""' : '"' + number(total / group.numbers) + '"') + '}';
  }
  return json + ']';
}

interface AggregateRow {
  readonly rows: number;
  /** A new table: its folded City, group codes and numbers built, then the answer. */
  readonly cold: number;
  /** The columns' work built by another aggregate; this one's answer is not kept yet. */
  readonly engine: number;
  readonly hand: number;
  /** The same request again, no write in between: answered from what the table keeps. */
  readonly repeated: number;
  readonly slowest: number;
}

function aggregateBenchmark(rowCount: number): AggregateRow {
  const workbook = buildWorkbook(rowCount);
  const tab = workbook.tabs[0];
  const columns = columnsOf(tab);
  assert.deepEqual(engineRead(workbook, AGGREGATE_URL), handRead({ hand: handAggregate }, columns), 'the hand loop must answer exactly what the engine answers');
  const fresh = (): Workbook => ({ tabs: [{ name: tab.name, rows: tab.rows }] });
  const cold: number[] = [];
  const engine: number[] = [];
  const hand: number[] = [];
  // More runs than the other tables: a run takes milliseconds, so a busy machine's scheduling shows in each.
  for (let i = 0; i < WARMUP + runsFor(rowCount) * 3; i++) {
    const coldBook = fresh();
    const coldTime = timeOnce(() => engineRead(coldBook, AGGREGATE_URL));
    const warmBook = fresh();
    engineRead(warmBook, AGGREGATE_WARMING_URL);
    const engineTime = timeOnce(() => engineRead(warmBook, AGGREGATE_URL));
    const handTime = timeOnce(() => handRead({ hand: handAggregate }, columns));
    if (i < WARMUP) continue;
    cold.push(coldTime);
    engine.push(engineTime);
    hand.push(handTime);
  }
  const repeats: number[] = [];
  for (let i = 0; i < AGGREGATE_REPEATS; i++) repeats.push(timeOnce(() => engineRead(workbook, AGGREGATE_URL), false));
  return { rows: rowCount, cold: median(cold), engine: median(engine), hand: median(hand), repeated: median(repeats), slowest: Math.max(...repeats) };
}

// ---------------------------------------------------------------------------------------------
// Report

function nsPerRow(ms: number, rows: number): string {
  return ((ms * 1e6) / rows).toFixed(1);
}

function table(header: readonly string[], lines: readonly (readonly string[])[]): string {
  const widths = header.map((cell, i) => Math.max(cell.length, ...lines.map((line) => line[i].length)));
  const format = (line: readonly string[]) => line.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ');
  return [format(header), widths.map((width) => '-'.repeat(width)).join('  '), ...lines.map(format)].join('\n');
}

const runtime = typeof (globalThis as { Bun?: unknown }).Bun !== 'undefined' ? 'Bun' : typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined' ? 'Deno' : 'Node';
console.log(`sheetrest engine benchmark: ${runtime} ${process.version}, median of ${runsFor(0)} runs (${runsFor(1_000_000)} from 1M rows) after ${WARMUP} warm-up run`);
if (!canCollect) console.log('(no GC hook: run with --expose-gc for steadier timings and the memory figure)');

const ONE_TABLE = AFTER_WRITE_ONLY || UNIQUE_KEY_ONLY || AGGREGATE_ONLY;
const memory = canCollect && !ONE_TABLE && !CONDITIONS_ONLY ? measureMemory(MEMORY_ROWS) : null;

const results: Row[] = [];
for (const size of ONE_TABLE ? [] : SIZES) {
  console.log(`\n${size.toLocaleString('en')} rows x ${COLUMNS.length} columns...`);
  results.push(...benchmark(size));
}

if (results.length > 0) console.log(
  '\n' +
    table(
      ['operation', 'rows', 'matched', 'engine ns/row', 'hand ns/row', 'ratio', `<= ${RATIO_TARGET}`, 'cold ns/row', 'cold ratio'],
      results.map((row) => {
        const ratio = row.engine / row.hand;
        return [
          row.operation,
          row.rows.toLocaleString('en'),
          row.matched.toLocaleString('en'),
          nsPerRow(row.engine, row.rows),
          nsPerRow(row.hand, row.rows),
          ratio.toFixed(2),
          ratio <= RATIO_TARGET ? 'ok' : 'MISSED',
          nsPerRow(row.cold, row.rows),
          (row.cold / row.hand).toFixed(2),
        ];
      }),
    ),
);
if (results.length > 0) console.log('ratio = engine / hand loop (repeated read); cold = first read of a new tab object (engine caches rebuilt).');

const afterWrites = UNIQUE_KEY_ONLY || CONDITIONS_ONLY || AGGREGATE_ONLY ? [] : SIZES.flatMap((size) => searchesAfterWrite(size));
if (afterWrites.length > 0) console.log(
  `\nGET ${SEARCH_URL} after a write on a tab whose index was built (ms):\n` +
    table(
      ['write', 'rows', 'first search', `slowest of next ${FOLLOWING}`, `search ${FOLLOWING + 1}`],
      afterWrites.map((row) => [row.write, row.rows.toLocaleString('en'), row.first.toFixed(1), row.worst.toFixed(1), row.settled.toFixed(1)]),
    ),
);

const uniqueKeys = AFTER_WRITE_ONLY || CONDITIONS_ONLY || AGGREGATE_ONLY ? [] : SIZES.map((size) => uniqueKeyFilter(size));
if (uniqueKeys.length > 0) console.log(
  `\nexact filter on a unique key, GET /sheets/demo/Id/<id> (ms; target < 5 ms repeated):\n` +
    table(
      ['rows', 'first (builds the index)', 'repeated, median of 50', 'slowest of 50', 'one scan of the column'],
      uniqueKeys.map((row) => [row.rows.toLocaleString('en'), row.first.toFixed(1), row.repeated.toFixed(3), row.slowest.toFixed(3), row.scan.toFixed(1)]),
    ),
);

const aggregates = AFTER_WRITE_ONLY || UNIQUE_KEY_ONLY || CONDITIONS_ONLY ? [] : SIZES.map((size) => aggregateBenchmark(size));
if (aggregates.length > 0) console.log(
  `\nGET ${AGGREGATE_URL} (ms; ratio target <= ${RATIO_TARGET}, repeated < 5 ms):\n` +
    table(
      ['rows', 'engine', 'hand loop', 'ratio', `<= ${RATIO_TARGET}`, 'cold (new table)', `repeated, median of ${AGGREGATE_REPEATS}`, `slowest of ${AGGREGATE_REPEATS}`],
      aggregates.map((row) => {
        const ratio = row.engine / row.hand;
        return [row.rows.toLocaleString('en'), row.engine.toFixed(1), row.hand.toFixed(1), ratio.toFixed(2), ratio <= RATIO_TARGET ? 'ok' : 'MISSED', row.cold.toFixed(1), row.repeated.toFixed(3), row.slowest.toFixed(3)];
      }),
    ) +
    `\nengine: the first time this aggregate is asked of a table whose columns another aggregate prepared (group codes, numbers); cold: of a new table; medians of ${runsFor(0) * 3} runs (${runsFor(1_000_000) * 3} from 1M rows).`,
);

if (memory !== null) {
  const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(1) + ' MiB';
  const ratio = memory.tabBytes / memory.jsonBytes;
  console.log(`\nmemory, ${MEMORY_ROWS.toLocaleString('en')} rows:`);
  console.log(`  heap used by the loaded tab        ${mib(memory.tabBytes)}`);
  console.log(`  JSON text of GET all rows          ${mib(memory.jsonBytes)}`);
  console.log(`  ratio heap / JSON                  ${ratio.toFixed(2)}x  (target <= ${MEMORY_TARGET}x: ${ratio <= MEMORY_TARGET ? 'ok' : 'MISSED'})`);
  console.log(`  with the engine's caches, after the reads above: ${mib(memory.cachedBytes)} (${(memory.cachedBytes / memory.jsonBytes).toFixed(2)}x)`);
}
if (sink < 0) console.log(sink);
