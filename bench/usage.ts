// The usage history's cost to a request, paired: the same cached `GET /sheets/bench?_limit=10`
// answered in process (`app.answer`, no sockets: the request's own work only, where a cost
// would show most) by an app recording every request in the usage history (A: the state
// folder's store, as `npm start` runs it) and by one without (B), in alternating rounds of
// SECONDS each. A/B is the ratio of their request rates per pair; the median is the figure.
//   node bench/usage.ts [PAIRS] [SECONDS]
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../server/http/app.ts';
import type { App } from '../server/http/request.ts';
import { createLogger } from '../server/log.ts';
import { memorySource } from '../server/sources/memory.ts';
import { openFileUsage } from '../server/usage/file-store.ts';

const PAIRS = Number(process.argv[2] ?? 6);
const SECONDS = Number(process.argv[3] ?? 1);
const log = createLogger('silent');
const row = (...cells: (string | number)[]) => ({ text: cells.map(String), value: cells });
const rows = [row('Name', 'City', 'Age'), ...Array.from({ length: 1000 }, (_, n) => row(`Name ${n}`, `City ${n % 20}`, n % 90))];
const source = memorySource({ tabs: [{ name: 'People', rows }] });
const dir = await mkdtemp(join(tmpdir(), 'sheetrest-usage-bench-'));
const usage = await openFileUsage({ stateDir: dir, log });
const appOf = (recording: boolean): App => createApp({
  connections: [{ id: 'bench', source, keys: [], readOnly: false, engine: {} }],
  quota: { take: () => ({ allowed: true, headers: {} }), peek: () => ({}) },
  bodyBytes: 1024 * 1024,
  cors: '*',
  log,
  ...(recording ? { usage } : {}),
});
const apps = { on: appOf(true), off: appOf(false) };
const request = () => ({ method: 'GET', url: 'http://127.0.0.1/sheets/bench?_limit=10', headers: new Headers() });

/** Requests answered per second for SECONDS, 64 at a time (awaiting only the ones that wait). */
async function rate(app: App): Promise<number> {
  const until = performance.now() + SECONDS * 1000;
  let done = 0;
  while (performance.now() < until) {
    for (let n = 0; n < 64; n++) {
      const answered = app.answer(request() as never);
      if (answered instanceof Promise) await answered;
    }
    done += 64;
    // Lets the history's timer write its file, as a server's loop would.
    await new Promise((resolve) => setImmediate(resolve));
  }
  return done / SECONDS;
}

await rate(apps.on);
await rate(apps.off);
const ratios: number[] = [];
for (let pair = 0; pair < PAIRS; pair++) {
  // Alternating which goes first, so a drift in the machine's load falls on both.
  const first = pair % 2 === 0 ? 'on' : 'off';
  const a = first === 'on' ? await rate(apps.on) : 0;
  const b = await rate(apps.off);
  const on = first === 'on' ? a : await rate(apps.on);
  ratios.push(on / b);
  console.log(`pair ${pair + 1}: history on ${Math.round(on).toLocaleString('en')}/s, off ${Math.round(b).toLocaleString('en')}/s, on/off ${(on / b).toFixed(3)}`);
}
ratios.sort((x, y) => x - y);
const middle = ratios.length % 2 === 1 ? ratios[(ratios.length - 1) / 2] : (ratios[ratios.length / 2 - 1] + ratios[ratios.length / 2]) / 2;
console.log(`median on/off ${middle.toFixed(3)} (min ${ratios[0].toFixed(3)}, max ${ratios.at(-1)!.toFixed(3)}) over ${PAIRS} pairs of ${SECONDS} s; load average ${loadavg().map((each) => each.toFixed(2)).join(' ')}`);
await usage.close();
await rm(dir, { recursive: true, force: true });
