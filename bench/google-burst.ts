// A burst of writes to one Google spreadsheet, as a web form's submissions or a replayed backlog
// send them: the Sheets API emulator enforcing Google's default per-minute quotas (60 reads and
// 60 writes a minute per user) and answering after BENCH_LATENCY_MS (default 100 ms, about
// Google's), a sheetrest server on loopback in front of it (the real listener and handler), and
// C clients each sending its share of N POSTs one after another.
// `node bench/google-burst.ts [N] [C] [mix]` (default 600 40); `mix` makes every 5th request a
// PATCH by filter and every 10th a DELETE by filter; BENCH_REVISION_CHECK=1 turns the revision
// check (Drive's modifiedTime) on. Prints what was acknowledged, the upstream
// requests (reads and writes, from the emulator's log), Google's 429s, p50/p99 latency, a lone
// POST's latency (median of 5, before the burst), and checks the rows: every acknowledged row
// once, each client's rows in its order.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../server/http/app.ts';
import { Secret } from '../server/config/config.ts';
import { startEmulator, type EmulatorCell } from '../tools/google-emulator/mod.ts';
import { createLogger } from '../server/log.ts';
import { listen } from '../server/runtime/node.ts';
import { openQuotaStore } from '../server/quota/quota.ts';
import { Budgets, openGoogleSource } from '../server/sources/google/mod.ts';

const TOTAL = Number(process.argv[2] ?? 600);
const CLIENTS = Number(process.argv[3] ?? 40);
const MIX = process.argv[4] === 'mix';
const LATENCY_MS = Number(process.env.BENCH_LATENCY_MS ?? 100);
/** BENCH_REVISION_CHECK=1: the source checks Drive's modifiedTime (matched writes then skip the read when nothing changed outside). */
const REVISION_CHECK = process.env.BENCH_REVISION_CHECK === '1';
const TOKEN = 'bench-writer';
const SEED_ROWS = 100;

const emulator = await startEmulator({ latencyMs: LATENCY_MS });
const seed: EmulatorCell[][] = [['Name', 'Client', 'Seq', 'Tag'], ...Array.from({ length: SEED_ROWS }, (_, n): EmulatorCell[] => [`seed-${n}`, -1, n, n % 2 === 0 ? 'even' : 'odd'])];
const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: seed }], access: { [TOKEN]: 'writer' } });
const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, budgets: new Budgets(), revisionCheck: REVISION_CHECK });
const quota = await openQuotaStore({ stateDir: await mkdtemp(join(tmpdir(), 'sheetrest-bench-burst-')) });
const app = createApp({ connections: [{ id: 'crm', source, keys: [], readOnly: false, engine: {} }], quota, bodyBytes: 1024 * 1024, cors: '*', log: createLogger('silent') });
const server = await listen(app, { host: '127.0.0.1', port: 0 });
const base = `http://127.0.0.1:${server.port}/sheets/crm`;

async function send(method: string, path: string, body?: unknown): Promise<{ status: number; ms: number }> {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { method, headers: { 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  await response.arrayBuffer();
  return { status: response.status, ms: performance.now() - started };
}

const counts = () => {
  const sheets = emulator.requests.filter((request) => request.path.startsWith('/v4/'));
  return {
    reads: sheets.filter((request) => request.method === 'GET').length,
    writes: sheets.filter((request) => request.method !== 'GET').length,
    drive: emulator.requests.filter((request) => request.path.startsWith('/drive/')).length,
    google429: sheets.filter((request) => request.status === 429).length,
  };
};

// The tab's header row, read once (a POST needs the columns), and a lone POST's latency.
await send('GET', '?_limit=1');
emulator.resetRequests();
const lone: number[] = [];
for (let n = 0; n < 5; n++) {
  const answer = await send('POST', '', { Name: `lone-${n}`, Client: -2, Seq: n, Tag: 'lone' });
  if (answer.status !== 201) throw new Error(`lone POST: ${answer.status}`);
  lone.push(answer.ms);
  await new Promise((resolve) => setTimeout(resolve, 50));
}
const loneUpstream = counts();
emulator.resetRequests();

const perClient = Math.ceil(TOTAL / CLIENTS);
const results: { method: string; status: number; ms: number; client: number; seq: number }[] = [];
const started = performance.now();
await Promise.all(
  Array.from({ length: CLIENTS }, async (_, client) => {
    for (let seq = 0; seq < perClient && client * perClient + seq < TOTAL; seq++) {
      const n = client * perClient + seq;
      let method = 'POST';
      let answer;
      if (MIX && n % 10 === 9) {
        method = 'DELETE';
        answer = await send('DELETE', `/Name/seed-${n % SEED_ROWS}`);
      } else if (MIX && n % 5 === 4) {
        method = 'PATCH';
        answer = await send('PATCH', `/Name/seed-${(n * 7) % SEED_ROWS}`, { Tag: `patched-${n}` });
      } else {
        answer = await send('POST', '', { Name: `c${client}-${seq}`, Client: client, Seq: seq, Tag: 'burst' });
      }
      results.push({ method, status: answer.status, ms: answer.ms, client, seq });
    }
  }),
);
const elapsed = performance.now() - started;
const upstream = counts();

// The rows as Google holds them: every acknowledged POST once, each client's in its order.
const stored = emulator.sheet(spreadsheetId, 'People').rows.slice(1).map((row) => String(row[0]?.formattedValue ?? ''));
const posts = results.filter((result) => result.method === 'POST');
const acknowledged = posts.filter((result) => result.status === 201).map((result) => `c${result.client}-${result.seq}`);
const seen = new Map<string, number>();
for (const name of stored) seen.set(name, (seen.get(name) ?? 0) + 1);
const missing = acknowledged.filter((name) => seen.get(name) !== 1).length;
const doubled = [...seen.values()].filter((count) => count > 1).length;
let outOfOrder = 0;
for (let client = 0; client < CLIENTS; client++) {
  const order = stored.filter((name) => name.startsWith(`c${client}-`)).map((name) => Number(name.split('-')[1]));
  if (order.some((seq, i) => i > 0 && seq < order[i - 1])) outOfOrder++;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};
const byStatus = new Map<string, number>();
for (const result of results) byStatus.set(`${result.method} ${result.status}`, (byStatus.get(`${result.method} ${result.status}`) ?? 0) + 1);
const postMs = posts.map((result) => result.ms);
const loneMs = percentile(lone, 50);

console.log(`google-burst: ${TOTAL} requests${MIX ? ' (mix: every 5th a PATCH by filter, every 10th a DELETE by filter)' : ' (POSTs)'} from ${CLIENTS} clients; emulator latency ${LATENCY_MS} ms, Google's default quotas${REVISION_CHECK ? ', revision check on' : ''}`);
const figures: [string, string | number][] = [
  ['answers', [...byStatus].sort().map(([key, count]) => `${count} x ${key}`).join(', ')],
  ['Sheets writes (upstream)', upstream.writes],
  ['Sheets reads (upstream)', upstream.reads],
  ["Google's 429s", upstream.google429],
  ["Drive modifiedTime checks", upstream.drive],
  ['acknowledged POSTs', acknowledged.length],
  ['acknowledged rows missing or not once', missing],
  ['rows stored twice', doubled],
  ['clients whose rows are out of order', outOfOrder],
  ['burst took (s)', (elapsed / 1000).toFixed(2)],
  ['POST p50 / p99 (ms)', `${Math.round(percentile(postMs, 50))} / ${Math.round(percentile(postMs, 99))}`],
  ['lone POST (ms, median of 5)', Math.round(loneMs)],
  ['lone POST upstream calls', (loneUpstream.writes + loneUpstream.reads) / lone.length],
  ['POST p50 / lone POST', (percentile(postMs, 50) / loneMs).toFixed(2)],
];
for (const [label, value] of figures) console.log(`  ${label.padEnd(40)} ${value}`);

await server.close();
await source.close();
await emulator.close();
