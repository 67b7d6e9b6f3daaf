// The webhooks' cost on the thread that answers requests, without HTTP or a second process:
// `node bench/webhook-loops.ts [TREE] [WRITES]` feeds WRITES writes' events (a file source's
// path: numbered with `carry`, handed over with the sink's `journaled`, one turn apart, 32 in
// flight) to a connection with 1 and 10 webhooks whose filter matches none of them (the
// control of bench/webhooks.ts, WEBHOOK_EVENTS=tab.changed), then with deliveries to a receiver
// in another process that answers 204, and prints this process's CPU time per write (process.cpuUsage:
// every thread, so a delivery worker's time counts too) and the main thread's own CPU time per
// write (process.threadCpuUsage, Node 23.9 and later). The webhooks open as the server opens
// them (hub.ts: the engine in a worker thread; a tree before it, in this thread). TREE is another
// checkout to measure (default: this one), for a before/after.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const tree = pathToFileURL(resolve(process.argv[2] ?? join(import.meta.dirname, '..')) + '/').href;
const WRITES = Number(process.argv[3] ?? 20_000);
const { Webhooks, DEFAULT_WEBHOOK_SETTINGS } = await import(tree + 'server/webhooks/webhooks.ts');
// As the server opens them: the engine in its worker thread (hub.ts); a tree before it, in this thread.
const openWebhooks = (await import(tree + 'server/webhooks/hub.ts').catch(() => null))?.openWebhooks ?? Webhooks.open;
const { Secret } = await import(tree + 'server/config/secret.ts');
const { silentLogger } = await import(tree + 'server/log.ts');

// The receiver is another process (answering 204), so that its work is not counted here; it
// prints how many POSTs it has had every 20 ms.
const RECEIVER = `
  const server = require('node:http').createServer((request, response) => request.resume().on('end', () => { count++; response.writeHead(204).end(); }));
  let count = 0;
  server.listen(0, '127.0.0.1', () => { console.log('port ' + server.address().port); setInterval(() => console.log('count ' + count), 20); });
`;
const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
const received = { count: 0 };
const port = await new Promise<number>((done) => {
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    for (const [, what, n] of text.matchAll(/(port|count) (\d+)/g)) {
      if (what === 'port') done(Number(n));
      else received.count = Number(n);
    }
  });
});
const url = `http://127.0.0.1:${port}/hook`;

async function run(hooks: number, filtered: boolean): Promise<{ cpu: number; main: number }> {
  const state = await mkdtemp(join(tmpdir(), 'sheetrest-loops-'));
  const webhooks = [{ name: 'first', url, secret: new Secret('s'), events: ['tab.changed'] }]; // opens the outbox
  const all = Array.from({ length: hooks }, (_, n) => ({ name: `hook-${n}`, url, secret: new Secret(`secret-${n}`), ...(filtered ? { events: ['tab.changed'] } : {}) }));
  const settings = { ...DEFAULT_WEBHOOK_SETTINGS, allowPrivateTargets: true };
  const hub = await openWebhooks(state, [{ id: 'bench', webhooks }], settings, silentLogger);
  await hub.set('bench', all.length > 0 ? all : webhooks);
  const sink = hub.sinkFor('bench')!;
  const draft = { type: 'rows.created', connection: 'bench', tab: 'Sheet1', at: new Date().toISOString(), rows: [{ Name: 'Ada', Age: 36 }], indexes: [7] };
  const before = received.count;
  const cpu0 = process.cpuUsage();
  const main0 = process.threadCpuUsage();
  let next = 0;
  const writer = async () => {
    while (next < WRITES) {
      next++;
      const carried = hub.carry('bench', [draft]);
      await new Promise((done) => setImmediate(done));
      if (carried !== null) {
        sink.journaled(carried.events);
        carried.settle();
      }
      await new Promise((done) => setImmediate(done));
    }
  };
  await Promise.all(Array.from({ length: 32 }, writer));
  // Every delivery made (or none wanted) before the clock stops.
  const wanted = filtered ? 0 : hooks * WRITES;
  while (received.count - before < wanted) await new Promise((done) => setTimeout(done, 5));
  const cpu = process.cpuUsage(cpu0);
  const main = process.threadCpuUsage(main0);
  await hub.close();
  await rm(state, { recursive: true, force: true });
  return { cpu: (cpu.user + cpu.system) / 1000 / WRITES, main: (main.user + main.system) / 1000 / WRITES };
}

console.log(`# webhook loops, ${WRITES.toLocaleString('en-US')} writes each, tree ${tree}`);
console.log('| webhooks | deliveries | cpu ms/write | main thread cpu ms/write |');
console.log('|---:|---|---:|---:|');
for (const [hooks, filtered] of [[1, true], [10, true], [1, false], [10, false]] as const) {
  await run(hooks, filtered); // warm
  const { cpu, main } = await run(hooks, filtered);
  console.log(`| ${hooks} | ${filtered ? 'none (filtered out)' : 'all'} | ${cpu.toFixed(4)} | ${main.toFixed(4)} |`);
}
child.kill();
