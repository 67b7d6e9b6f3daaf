// What one delivery's trip to the webhook delivery worker and back costs the main thread: a
// message shaped as poster.ts sends it (`{kind: 'send', sends: [{id, url, secret, eventId, body}]}`,
// a one-row event's body) and the worker's answer, N times in a row, timed on the main thread's
// own CPU clock (process.threadCpuUsage) and the wall clock. Pin it to see one shared core:
//   node bench/worker-messages.ts [N]
//   taskset -c 0 node bench/worker-messages.ts [N]
import process from 'node:process';
import { Worker } from 'node:worker_threads';

const N = Number(process.argv[2] ?? 20_000);
const worker = new Worker(
  `const { parentPort } = require('node:worker_threads');
   parentPort.on('message', (m) => parentPort.postMessage({ kind: 'sent', answers: m.sends.map((s) => ({ id: s.id, status: 204 })) }));`,
  { eval: true },
);
const body = JSON.stringify({ id: '1718000000000-0', type: 'rows.created', connection: 'bench', tab: 'People', at: new Date().toISOString(), rows: [{ Name: 'Ann', City: 'Lisbon', Age: '30', Score: '91', Joined: '2024-01-01' }], indexes: [1000] });
const threadCpu = (process as { threadCpuUsage?: (previous?: NodeJS.CpuUsage) => NodeJS.CpuUsage }).threadCpuUsage;
if (threadCpu === undefined) throw new Error('process.threadCpuUsage is missing: run on Node 23.9 or later');
let sent = 0;
const send = () => worker.postMessage({ kind: 'send', sends: [{ id: sent++, url: 'http://127.0.0.1:9/hook/0', secret: 'bench-secret-0', eventId: '1718000000000-0', body }] });
const cpu = threadCpu();
const start = performance.now();
await new Promise<void>((done) => {
  let answered = 0;
  worker.on('message', () => (++answered === N ? done() : send()));
  send();
});
const used = threadCpu(cpu);
console.log(`${N} round trips: ${(((performance.now() - start) * 1000) / N).toFixed(1)} µs each (wall), ${((used.user + used.system) / N).toFixed(1)} µs of the main thread's CPU each`);
await worker.terminate();
