// A webhook receiver for bench/webhooks.ts: answers every POST 204 at once and keeps, per
// delivery, the time from the event's `at` (when the server emitted it, right after the write was
// acknowledged) to its arrival. On SIGTERM it prints `received N p50 X p99 Y` (ms) and exits.
//   node bench/webhook-receiver.ts PORT
import { createServer } from 'node:http';
import process from 'node:process';

const latencies: number[] = [];
const server = createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    const arrived = Date.now();
    try {
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { at?: string };
      if (typeof event.at === 'string') latencies.push(arrived - Date.parse(event.at));
    } catch {
      // A body that is not an event is still answered; it is not timed.
    }
    response.writeHead(204).end();
  });
});
server.listen(Number(process.argv[2]), '127.0.0.1', () => console.log('listening'));
process.on('SIGTERM', () => {
  const sorted = latencies.sort((a, b) => a - b);
  const at = (q: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]);
  console.log(`received ${sorted.length} p50 ${at(0.5)} p99 ${at(0.99)}`);
  process.exit(0);
});
