// A hung Redis under traffic (docs/scaling.md, "What happens when something fails"; figures in
// docs/benchmarks.md): `node bench/redis-hang.ts`. One sheetrest instance in this process with
// Redis and the Sheets emulator; 8 clients send, one after another each, a read of a connection
// without a limit, a read of a limited one, and a POST, round-robin. After 2 s redis-server is
// stopped (SIGSTOP, what a partition looks like) for HANG_SECONDS (default 8), then goes on.
// Printed: for each kind, the slowest answer while Redis hung and when its first 503 (or, for
// the unlimited read, its first answer) came after the stop; how long after SIGCONT the first
// write was acknowledged again; and any request never answered.
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../server/config/config.ts';
import { startEmulator } from '../tools/google-emulator/mod.ts';
import { createLogger } from '../server/log.ts';
import { start } from '../server/start.ts';
import { runtimeListen } from '../test/helpers/http.ts';
import { startRedis } from '../test/helpers/redis.ts';

const HANG_MS = Number(process.env.HANG_SECONDS ?? 8) * 1000;
const CLIENTS = 8;
const cleanups: (() => unknown)[] = [];
const context = { after: (fn: () => unknown) => void cleanups.push(fn) };

const redis = await startRedis(context);
if (typeof redis === 'string') {
  console.log(`skipped: ${redis}`);
  process.exit(0);
}
const emulator = await startEmulator({ quota: { readPerMinutePerUser: 1e9, writePerMinutePerUser: 1e9, readPerMinutePerProject: 1e9, writePerMinutePerProject: 1e9 } });
cleanups.push(() => emulator.close());
const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name', 'Age'], ['Ann', 30]] }], access: { writer: 'writer' } });
const dir = await mkdtemp(join(tmpdir(), 'sheetrest-bench-hang-'));
cleanups.push(() => rm(dir, { recursive: true, force: true }));
const NO_BUDGET = { readsPerMinutePerUser: 1e9, writesPerMinutePerUser: 1e9, readsPerMinutePerProject: 1e9, writesPerMinutePerProject: 1e9 };
const source = { type: 'google', spreadsheetId, rootUrl: emulator.rootUrl, accessToken: 'writer', retries: 0, freshnessMs: 60_000, quota: NO_BUDGET };
await writeFile(join(dir, 'sheetrest.json'), JSON.stringify({
  stateDir: join(dir, 'state'),
  store: { type: 'redis', url: redis.url, leaseMs: 1000 },
  connections: [{ id: 'open', source }, { id: 'limited', source, plan: { name: 'p', monthlyRequests: 1e9 } }],
}));
const running = await start({ ...(await loadConfig(join(dir, 'sheetrest.json'))), host: '127.0.0.1', port: 0 }, { listen: await runtimeListen(), log: createLogger('silent') });
cleanups.push(() => running.close());

type Kind = 'unlimited read' | 'limited read' | 'write';
const KINDS: Kind[] = ['unlimited read', 'limited read', 'write'];
interface Sample {
  readonly kind: Kind;
  readonly sent: number;
  readonly answered: number;
  readonly status: number;
}
const samples: Sample[] = [];
const t0 = performance.now();
let stoppedAt = Infinity;
let resumedAt = Infinity;
let stopping = false;

async function request(kind: Kind, n: number): Promise<number> {
  const url = `${running.url}/sheets/${kind === 'limited read' ? 'limited' : 'open'}`;
  const init: RequestInit = kind === 'write' ? { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ Name: `w${n}`, Age: 1 }) } : {};
  try {
    const answer = await fetch(url, { ...init, signal: AbortSignal.timeout(HANG_MS + 10_000) });
    await answer.arrayBuffer();
    return answer.status;
  } catch {
    return 0;
  }
}

const end = 2000 + HANG_MS + 4000;
await Promise.all([...Array.from({ length: CLIENTS }, async (_, client) => {
  for (let n = client; performance.now() - t0 < end; n += CLIENTS) {
    const kind = KINDS[n % KINDS.length];
    const sent = performance.now() - t0;
    const status = await request(kind, n);
    samples.push({ kind, sent, answered: performance.now() - t0, status });
  }
}), (async () => {
  await new Promise((resolve) => setTimeout(resolve, 2000));
  redis.pause();
  stoppedAt = performance.now() - t0;
  stopping = true;
  await new Promise((resolve) => setTimeout(resolve, HANG_MS));
  redis.resume();
  resumedAt = performance.now() - t0;
})()]);

const during = samples.filter((sample) => sample.sent >= stoppedAt && sample.answered <= resumedAt);
const ms = (value: number) => `${Math.round(value)} ms`;
console.log(`Redis stopped ${ms(HANG_MS)}; ${samples.length} requests, ${CLIENTS} clients (${stopping ? 'stopped' : 'never stopped'})`);
for (const kind of KINDS) {
  const mine = during.filter((sample) => sample.kind === kind);
  const slowest = Math.max(0, ...samples.filter((sample) => sample.kind === kind && sample.answered >= stoppedAt && sample.sent <= resumedAt).map((sample) => sample.answered - sample.sent));
  const first = mine.find((sample) => (kind === 'unlimited read' ? sample.status === 200 : sample.status === 503));
  const statuses = Object.fromEntries([...new Set(mine.map((sample) => sample.status))].map((status) => [status, mine.filter((sample) => sample.status === status).length]));
  console.log(`${kind.padEnd(15)} while hung: ${JSON.stringify(statuses)}; slowest answer ${ms(slowest)}; first ${kind === 'unlimited read' ? '200' : '503'} ${first === undefined ? 'none' : `${ms(first.answered - stoppedAt)} after the stop`}`);
}
const back = samples.filter((sample) => sample.kind === 'write' && sample.status === 201 && sample.sent >= resumedAt).sort((a, b) => a.answered - b.answered)[0];
console.log(`first write acknowledged ${back === undefined ? 'never' : `${ms(back.answered - resumedAt)} after SIGCONT`}; unanswered: ${samples.filter((sample) => sample.status === 0).length}`);
for (const cleanup of cleanups.reverse()) await cleanup();
process.exit(0);
