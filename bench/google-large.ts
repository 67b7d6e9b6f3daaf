// A large tab through the Google source: a cold read of a 200,000-row x 5-column tab from the
// Sheets API emulator (answering after 100 ms): a read of every tab (`/tabs`) cold and once
// more (the source then knows it is too large for one answer), and a read of the tab by name
// (in pages). The read runs in a child process,
// so its memory is not mixed with the emulator's: time, peak RSS above the child's baseline,
// and heap held afterwards. `node bench/google-large.ts` (BENCH_GOOGLE_LARGE_ROWS,
// BENCH_GOOGLE_LARGE_RUNS change the defaults).
import { spawn } from 'node:child_process';
import process from 'node:process';
import { Secret } from '../server/config.ts';
import { startEmulator, type EmulatorCell } from '../server/google-emulator/mod.ts';
import { openGoogleSource } from '../server/sources/google/mod.ts';

const TOKEN = 'bench-reader';
const MB = 1024 * 1024;

interface ChildResult {
  readonly ms: number;
  readonly peakRssMb: number;
  readonly heapAfterMb: number;
  readonly rows: number;
}

if (process.argv[2] === '--child') {
  const [, , , rootUrl, spreadsheetId, mode] = process.argv;
  const source = await openGoogleSource({ spreadsheetId, rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, timeoutMs: 120_000, quota: { maxWaitMs: 0 } });
  // 'again': a read of every tab after one (what the source learned from the first decides), measured alone.
  if (mode === 'again') await source.read();
  process.send?.('measuring');
  (globalThis as { gc?: () => void }).gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  const started = performance.now();
  const workbook = mode === 'pages' ? await source.read({ tab: 'Big' }) : mode === 'again' ? await source.read({ fresh: true }) : await source.read();
  const ms = performance.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  (globalThis as { gc?: () => void }).gc?.();
  const rows = workbook.tabs.find((tab) => tab.name === 'Big')?.rows.length ?? 0;
  const result: ChildResult = { ms, peakRssMb: (peak - baseline) / MB, heapAfterMb: process.memoryUsage().heapUsed / MB, rows };
  process.stdout.write(JSON.stringify(result));
  await source.close();
  process.exit(0);
}

const ROWS = Number(process.env.BENCH_GOOGLE_LARGE_ROWS ?? 200_000);
const RUNS = Number(process.env.BENCH_GOOGLE_LARGE_RUNS ?? 3);
const emulator = await startEmulator({ latencyMs: 100, quota: { readPerMinutePerUser: 1e6, readPerMinutePerProject: 1e6 } });
const rows: EmulatorCell[][] = [['Name', 'Age', 'City', 'Tag', 'Joined']];
for (let n = 0; n < ROWS; n++) rows.push([`Person ${n}`, 20 + (n % 50), ['Lisbon', 'Oslo', 'Lima'][n % 3], n % 100 === 5 ? 'drop' : 'keep', { date: `2024-0${1 + (n % 9)}-1${n % 10}` }]);
const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'Big', rows }], access: { [TOKEN]: 'reader' } });

function child(mode: string): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    const running = spawn(process.execPath, ['--expose-gc', new URL(import.meta.url).pathname, '--child', emulator.rootUrl, spreadsheetId, mode], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    // Upstream requests are counted from the measured read on.
    running.on('message', () => emulator.resetRequests());
    let out = '';
    running.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    running.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as ChildResult) : reject(new Error(`child exited ${code}: ${out}`))));
  });
}

const table = [];
const modes = [
  ['every tab (/tabs), cold', 'whole'],
  ['every tab (/tabs), again (no-cache)', 'again'],
  ['the tab by name (pages)', 'pages'],
] as const;
for (const [label, mode] of modes) {
  const results: (ChildResult & { requests: number; bytes: number; largest: number })[] = [];
  for (let n = 0; n < RUNS; n++) {
    emulator.resetRequests();
    const result = await child(mode);
    results.push({ ...result, requests: emulator.requests.length, bytes: emulator.requests.reduce((sum, request) => sum + request.bytes, 0), largest: Math.max(0, ...emulator.requests.map((request) => request.bytes)) });
  }
  results.sort((a, b) => a.ms - b.ms);
  const median = results[Math.floor(results.length / 2)];
  table.push({
    read: label,
    rows: median.rows,
    'upstream requests': median.requests,
    'upstream MB': (median.bytes / MB).toFixed(1),
    'largest answer MB': (median.largest / MB).toFixed(1),
    'median s': (median.ms / 1000).toFixed(2),
    'peak RSS +MB': Math.round(Math.max(...results.map((result) => result.peakRssMb))),
    'heap after MB': Math.round(median.heapAfterMb),
  });
}
console.log(`Cold read of a ${ROWS}-row x 5-column tab from the emulator (latency 100 ms), ${RUNS} runs each, Node ${process.version}`);
console.table(table);
await emulator.close();
