// N server-sent event streams held open and read to the end, for bench/feed.ts, in a process of
// their own (pinned with the loaders, off the servers' core): `node bench/sse-clients.ts
// http://127.0.0.1:PORT/sheets/bench/events 100` prints `open` once every stream answered, and
// on SIGTERM the bytes received in all (counted, not parsed: this process shares the loaders' core).
import process from 'node:process';

const [url, count] = [process.argv[2], Number(process.argv[3] ?? 100)];
let bytes = 0;
const streams = await Promise.all(Array.from({ length: count }, async () => {
  const answer = await fetch(url, { headers: { Accept: 'text/event-stream' } });
  if (answer.status !== 200 || answer.body === null) throw new Error(`${url}: ${answer.status}`);
  const reader = answer.body.getReader();
  void (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done || value === undefined) return;
      bytes += value.byteLength;
    }
  })();
  return reader;
}));
console.log('open');
process.on('SIGTERM', () => {
  console.log(`bytes ${bytes}`);
  for (const reader of streams) void reader.cancel().catch(() => undefined);
  process.exit(0);
});
