// The fold in a worker thread (fold-runner.ts starts it through fold-worker.js): folds the
// journaled writes into the file named in the job it is given as workerData (fold.ts), writes the
// new file to the temp file it is given, fsynced, and posts back where it is (the main thread
// renames it over the file). It first posts `started`, once its modules are loaded: a worker that
// never says so could not start, and the runner folds on the main thread instead. On Bun it does
// not load SheetJS for the streaming .xlsx fold: the few rows that fold decodes are decoded by the
// main thread, where SheetJS is loaded already (about 7 MB of the worker's memory on Bun), unless
// they come with big parts; on Node and Deno, and for the full decode (an .ods, an .xlsx the
// streaming fold leaves to it), it loads SheetJS here (fold.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { foldFile, type FoldJob } from './fold.ts';
import { decodedOnTheMainThread, decodeKeptRows, type DecodeKept, type KeptRows } from './xlsx/stream-fold.ts';

/**
 * Bun's garbage collector, run to completion: JavaScriptCore left the streaming fold's garbage
 * (each unpacked piece's text, each row's strings) for tens of megabytes before collecting it,
 * and the worker's resident set with it; collected every 512 KiB of XML, the fold of a 100k-row
 * sheet peaks about 30 MB lower in about the same time (docs/benchmarks.md, "Big files"). Node's
 * and Deno's V8 need none: the worker's small young generation (fold-runner.ts) does it.
 */
const bun = (globalThis as { Bun?: { gc(force: boolean): void } }).Bun;
const collect = bun === undefined ? undefined : () => bun.gc(true);

/** What the runner hands the worker: the job, the temp file to write and the spool file to use (fold-runner.ts). */
export interface WorkerJob {
  readonly job: FoldJob;
  readonly temp: string;
  readonly spool: string;
}

/** The main thread's answer to a `decode` message (fold-runner.ts). */
export interface Decoded {
  readonly kind: 'decoded';
  readonly id: number;
  readonly kept: KeptRows | null;
}

const port = parentPort;
if (port !== null) {
  const { job, temp, spool } = workerData as WorkerJob;
  const waiting = new Map<number, (kept: KeptRows | null) => void>();
  // Listening also keeps the worker alive until the runner ends it, so its answer is never outrun by its exit.
  port.on('message', (message: Decoded) => {
    if (message.kind !== 'decoded') return;
    waiting.get(message.id)?.(message.kept);
    waiting.delete(message.id);
  });
  let asked = 0;
  const decode: DecodeKept = (pack, tab, stylesXml, rowNumbers) => {
    // Decoded here, loading SheetJS, on Node and Deno (their folds stay well within 1.3x the
    // resident set before with it, and the main thread's reads keep the whole core: on Deno the
    // main thread's decode made the slowest concurrent read 49-65 ms instead of 29-51), and on
    // Bun a package whose other parts are big (an Excel file's shared strings: megabytes for 100k
    // rows): parsing it would hold the main thread's reads.
    if (bun === undefined || !decodedOnTheMainThread(pack)) return decodeKeptRows(pack, tab, stylesXml, rowNumbers);
    return new Promise((resolve) => {
      const id = ++asked;
      waiting.set(id, resolve);
      // Handed over, not copied: the cut-down package is the main thread's from here on.
      port.postMessage({ kind: 'decode', id, pack, tab, stylesXml, rowNumbers }, [pack.buffer as ArrayBuffer]);
    });
  };
  port.postMessage({ kind: 'started' });
  try {
    port.postMessage(await foldFile(job, temp, { collect, decode, spool }));
  } catch (error) {
    port.postMessage({ kind: 'error', message: error instanceof Error ? error.message : String(error) });
  }
}
