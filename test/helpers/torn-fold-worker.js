// A fold worker that dies part way through writing the new file (fold.test.ts): it starts, writes
// the first bytes of a package to the temp file it was given, and throws, as a worker running out
// of memory mid-fold would. Plain JavaScript, so Node starts it without the type-stripping hook.
import { writeFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';

parentPort.postMessage({ kind: 'started' });
writeFileSync(workerData.temp, 'PK\u0003\u0004 half a package');
// After a while, as a real fold fails: an error that overtook the `started` message would read as
// a worker that never started, which the runner answers by folding on the main thread.
setTimeout(() => {
  throw new Error('the worker ran out of memory');
}, 200);
