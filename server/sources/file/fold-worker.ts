// The fold in a worker thread (fold-runner.ts starts it through fold-worker.js): reads the file named in the job it is
// given as workerData, folds the journaled writes into it (fold.ts) and posts back the new bytes.
// It first posts `started`, once its modules (SheetJS too, for an .xlsx or .ods) are loaded: a
// worker that never says so could not start, and the runner folds on the main thread instead.
import { readFileSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { foldFile, type FoldJob } from './fold.ts';
import { loadSheetJs, needsSheetJs } from './xlsx/sheetjs.ts';

/**
 * Bun's garbage collector, run to completion: JavaScriptCore left the streaming fold's garbage
 * (each unpacked piece's text, each row's strings) for tens of megabytes before collecting it,
 * and the worker's resident set with it; collected every 512 KiB of XML, the fold of a 100k-row
 * sheet peaks about 30 MB lower in about the same time (docs/benchmarks.md, "Big files"). Node's
 * and Deno's V8 need none: the worker's small young generation (fold-runner.ts) does it.
 */
const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
const collect = bun === undefined ? undefined : () => bun.gc(true);

const port = parentPort;
if (port !== null) {
  const job = workerData as FoldJob;
  if (needsSheetJs(job.format)) await loadSheetJs();
  // Listening keeps the worker alive until the runner ends it, so its answer is never outrun by its exit.
  port.on('message', () => undefined);
  port.postMessage({ kind: 'started' });
  try {
    const result = await foldFile(job, readFileSync(job.path), undefined, collect);
    if (result.kind === 'folded') {
      // Handed over, not copied: a buffer of exactly these bytes can move to the main thread.
      const bytes = result.bytes.byteOffset === 0 && result.bytes.byteLength === result.bytes.buffer.byteLength ? result.bytes : result.bytes.slice();
      port.postMessage({ ...result, bytes }, [bytes.buffer as ArrayBuffer]);
    } else {
      port.postMessage(result);
    }
  } catch (error) {
    port.postMessage({ kind: 'error', message: error instanceof Error ? error.message : String(error) });
  }
}
