// Google source benchmark: upstream requests per operation and read latency, with the Sheets API
// emulator answering after 100 ms as Google roughly does. `node bench/google.ts`
// (BENCH_GOOGLE_LATENCY_MS, BENCH_GOOGLE_READS change the defaults). Requests go through the
// real handler in-process (`app.fetch`), so a read's time includes routing and the engine.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../server/http/app.ts';
import { Secret } from '../server/config/config.ts';
import { startEmulator, type EmulatorCell } from '../tools/google-emulator/mod.ts';
import { createLogger } from '../server/log.ts';
import { openQuotaStore } from '../server/quota/quota.ts';
import { openGoogleSource } from '../server/sources/google/mod.ts';
import type { Source } from '../server/sources/source.ts';

const LATENCY_MS = Number(process.env.BENCH_GOOGLE_LATENCY_MS ?? 100);
const READS = Number(process.env.BENCH_GOOGLE_READS ?? 2_000);
const ROWS = 1_000;
const TOKEN = 'bench-writer';

const emulator = await startEmulator({ latencyMs: LATENCY_MS });
const stateDir = await mkdtemp(join(tmpdir(), 'sheetrest-bench-google-'));
const quota = await openQuotaStore({ stateDir });

/** 1,000 people; every 100th is tagged `drop`, so a DELETE by match removes 10 scattered rows. */
function people(): EmulatorCell[][] {
  const rows: EmulatorCell[][] = [['Name', 'Age', 'City', 'Tag', 'Joined']];
  for (let n = 0; n < ROWS; n++) rows.push([`Person ${n}`, 20 + (n % 50), ['Lisbon', 'Oslo', 'Lima'][n % 3], n % 100 === 5 ? 'drop' : 'keep', { date: `2024-0${1 + (n % 9)}-1${n % 10}` }]);
  return rows;
}

async function connection() {
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: people() }], access: { [TOKEN]: 'writer' } });
  const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, freshnessMs: 60_000 });
  const app = createApp({ connections: [{ id: 'bench', source, keys: [], readOnly: false, engine: {} }], quota, bodyBytes: 8 * 1024 * 1024, cors: '*', log: createLogger('silent') });
  const call = async (path: string, init: RequestInit = {}) => {
    const response = await app.fetch(new Request(`http://bench${path}`, init));
    const body = await response.text();
    if (response.status >= 400) throw new Error(`${init.method ?? 'GET'} ${path}: ${response.status} ${body}`);
    return body;
  };
  return { source, call };
}

const json = (method: string, body: unknown): RequestInit => ({ method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

/** Runs one operation and counts what reached the emulator meanwhile. */
async function measure(label: string, target: number, run: () => Promise<unknown>) {
  emulator.resetRequests();
  const started = performance.now();
  await run();
  const ms = performance.now() - started;
  return { operation: label, upstream: emulator.requests.length, target, ms: Math.round(ms) };
}

const results = [];
{
  const { source, call } = await connection();
  results.push(await measure('50 concurrent reads of a cold first tab (tab list, tab)', 2, () => Promise.all(Array.from({ length: 50 }, () => call('/sheets/bench?_limit=10')))));
  results.push(await measure('a read within the freshness window', 0, () => call('/sheets/bench?_limit=10')));
  const rows = Array.from({ length: 1_000 }, (_, n) => ({ Name: `New ${n}`, Age: n % 90, City: 'Porto', Tag: 'new' }));
  results.push(await measure('POST of 1,000 rows', 1, () => call('/sheets/bench', json('POST', rows))));
  results.push(await measure('PATCH by match (Name/Person 7)', 2, () => call('/sheets/bench/Name/Person%207', json('PATCH', { Age: 99 }))));
  results.push(await measure('DELETE of 10 scattered rows (Tag/drop)', 2, async () => {
    const removed = JSON.parse(await call('/sheets/bench/Tag/drop', { method: 'DELETE' }));
    if (removed.length !== 10) throw new Error(`expected 10 rows removed, got ${removed.length}`);
  }));
  await source.close();
}

// Read latency within the window: the snapshot answers, Google is not asked.
const { source, call } = await connection();
await call('/sheets/bench?_limit=1');
emulator.resetRequests();
const times: number[] = [];
for (let n = 0; n < READS; n++) {
  const started = performance.now();
  await call(`/sheets/bench/City/lisbon?_limit=20&_offset=${n % 100}`);
  times.push(performance.now() - started);
}
const readsUpstream = emulator.requests.length;
times.sort((a, b) => a - b);
const percentile = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))];
await source.close();

console.log(`Google source, Sheets API emulator answering after ${LATENCY_MS} ms, ${ROWS} rows x 5 columns`);
console.table(results.map((r) => ({ operation: r.operation, 'upstream requests': r.upstream, target: r.target, ok: r.upstream <= r.target ? 'yes' : 'NO', 'took ms': r.ms })));
console.log(`${READS} reads within the freshness window (GET /City/lisbon?_limit=20, in-process): p50 ${percentile(50).toFixed(2)} ms, p99 ${percentile(99).toFixed(2)} ms (target p50 < 5 ms), ${readsUpstream} upstream requests`);

// Per-tab reads: a 10-tab spreadsheet of TAB_ROWS rows per tab, a cold read of one tab. "Whole
// spreadsheet" is the source as it was before issue 12 (every read fetched every tab): the same
// source with the tab hint dropped. Each run opens a new source, so each read is cold.
const TAB_COUNT = 10;
const TAB_ROWS = Number(process.env.BENCH_GOOGLE_TAB_ROWS ?? 10_000);
const RUNS = Number(process.env.BENCH_GOOGLE_TAB_RUNS ?? 5);
{
  const tabRows = (tab: number): EmulatorCell[][] => [
    ['Name', 'Age', 'City', 'Tag', 'Joined'],
    ...Array.from({ length: TAB_ROWS }, (_, n): EmulatorCell[] => [`Person ${tab}-${n}`, 20 + (n % 50), ['Lisbon', 'Oslo', 'Lima'][n % 3], n % 100 === 5 ? 'drop' : 'keep', { date: `2024-0${1 + (n % 9)}-1${n % 10}` }]),
  ];
  const spreadsheetId = emulator.createSpreadsheet({ sheets: Array.from({ length: TAB_COUNT }, (_, tab) => ({ title: `Tab${tab}`, rows: tabRows(tab) })), access: { [TOKEN]: 'writer' } });
  const coldRead = async (wholeSpreadsheet: boolean) => {
    const opened = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, freshnessMs: 60_000 });
    const source: Source = wholeSpreadsheet
      ? { description: opened.description, writable: opened.writable, read: (options) => opened.read({ fresh: options?.fresh }), write: (plan) => opened.write(plan), close: () => opened.close() }
      : opened;
    const app = createApp({ connections: [{ id: 'bench', source, keys: [], readOnly: false, engine: {} }], quota, bodyBytes: 1024, cors: '*', log: createLogger('silent') });
    emulator.resetRequests();
    const started = performance.now();
    const response = await app.fetch(new Request('http://bench/sheets/bench/tabs/Tab3?_limit=10'));
    if (response.status !== 200) throw new Error(`cold read: ${response.status} ${await response.text()}`);
    await response.arrayBuffer();
    const ms = performance.now() - started;
    const requests = emulator.requests.length;
    const bytes = emulator.requests.reduce((sum, request) => sum + request.bytes, 0);
    await source.close();
    return { ms, requests, bytes };
  };
  const rowsOut = [];
  for (const [label, whole] of [['whole spreadsheet (before)', true], ['one tab (after)', false]] as const) {
    await coldRead(whole); // warm-up: JIT, sockets
    const runs = [];
    for (let n = 0; n < RUNS; n++) runs.push(await coldRead(whole));
    runs.sort((a, b) => a.ms - b.ms);
    const median = runs[Math.floor(runs.length / 2)];
    rowsOut.push({ read: label, 'upstream requests': median.requests, 'upstream bytes': median.bytes, 'median ms': Math.round(median.ms), 'min ms': Math.round(runs[0].ms) });
  }
  console.log(`Cold read of one tab (GET /tabs/Tab3?_limit=10) of ${TAB_COUNT} tabs x ${TAB_ROWS} rows x 5 columns, ${RUNS} runs, emulator latency ${LATENCY_MS} ms`);
  console.table(rowsOut);

  // Outside edits: a read of a stale tab (freshnessMs 0: every read is past the window), without
  // and with the revision check, the file unchanged; then with the check after an outside edit.
  const staleRead = async (revisionCheck: boolean, edit: boolean) => {
    const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, freshnessMs: 0, revisionCheck, quota: { readsPerMinutePerUser: 1e6, readsPerMinutePerProject: 1e6 } });
    // Twice first: with the check, the first re-read still reads (no modifiedTime known yet).
    await source.read({ tab: 'Tab3' });
    await source.read({ tab: 'Tab3' });
    const runs = [];
    for (let n = 0; n < RUNS; n++) {
      if (edit) {
        const response = await fetch(`${emulator.rootUrl}v4/spreadsheets/${spreadsheetId}/values/Tab3!A2?valueInputOption=RAW`, { method: 'PUT', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ values: [[`Edit ${n}`]] }) });
        await response.arrayBuffer();
      }
      emulator.resetRequests();
      const started = performance.now();
      await source.read({ tab: 'Tab3' });
      runs.push({ ms: performance.now() - started, requests: emulator.requests.length, bytes: emulator.requests.reduce((sum, request) => sum + request.bytes, 0) });
    }
    await source.close();
    runs.sort((a, b) => a.ms - b.ms);
    return runs[Math.floor(runs.length / 2)];
  };
  const staleRows = [];
  for (const [label, check, edit] of [['no check: the tab read again', false, false], ['check, file unchanged: kept', true, false], ['check, edited outside: read again', true, true]] as const) {
    const median = await staleRead(check, edit);
    staleRows.push({ 'stale read of Tab3': label, 'upstream requests': median.requests, 'upstream bytes': median.bytes, 'median ms': Math.round(median.ms) });
  }
  console.log(`Stale read of one ${TAB_ROWS}-row tab, with and without the revision check (Drive modifiedTime), ${RUNS} runs`);
  console.table(staleRows);
}

await quota.close();
await emulator.close();
await rm(stateDir, { recursive: true, force: true });
