// Runs a fold (fold.ts) off the event loop: a fold of a big file starts a worker thread
// (node:worker_threads, which Node, Deno and Bun all provide), hands it the job and the temp file
// to write beside the workbook, and waits for it to be written, so reads keep being answered
// while a 100k-row workbook is encoded. Meanwhile the main thread decodes the few rows the
// worker's streaming fold asks for (SheetJS is loaded here already, and never in the worker for
// that fold). The worker ends with its fold, and with it the memory the decoded workbook took. A small file (under
// INLINE_BELOW_BYTES) folds on the main thread: that takes less than starting a worker. Where no
// worker starts (a worker that cannot load its modules), the fold runs on the main thread too.
import { realpath, stat, unlink } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { tempPathFor } from '../../durable/disk.ts';
import { foldFile, type FoldJob, type FoldResult } from './fold.ts';
import type { Decoded, WorkerJob } from './fold-worker.ts';
import { decodeKeptRows } from './xlsx/stream-fold.ts';
import type { AlterPart } from './xml/well-formed.ts';

const WORKER_MODULE = new URL('./fold-worker.js', import.meta.url);

export interface FoldOutcome {
  readonly result: FoldResult;
  /** Where the fold ran: a small file's on the main thread, and any when no worker started. */
  readonly ranIn: 'worker' | 'main thread';
}

/**
 * Files smaller than this fold on the main thread: a few hundred rows, whose fold takes a few
 * milliseconds, less than a worker takes to start and load SheetJS (docs/benchmarks.md, "Big
 * files": already at 1,000 rows x 10, 155 KiB, a fold on the main thread held it for hundreds
 * of milliseconds on a busy machine).
 */
export const INLINE_BELOW_BYTES = 64 * 1024;

export interface FoldOptions {
  /** Files smaller than this fold on the main thread (default INLINE_BELOW_BYTES; 0: always a worker, Infinity: never). */
  readonly inlineBelowBytes?: number;
  /** The worker module (tests give one that cannot start). */
  readonly workerModule?: URL;
  /**
   * Changes a written part's XML before the fold checks it (tests break one on purpose). A fold
   * given one runs on the main thread: a function cannot be handed to a worker.
   */
  readonly alterPart?: AlterPart;
}

/**
 * Folds, in a worker when one starts, into a new temp file beside the workbook (through a
 * symlink, beside its target), fsynced: the caller renames it over the file (folding.ts), or
 * removes it. Rejects with the fold's Error when the file cannot be written, leaving no temp file.
 */
export async function runFold(job: FoldJob, options: FoldOptions = {}): Promise<FoldOutcome> {
  const inlineBelow = options.inlineBelowBytes ?? INLINE_BELOW_BYTES;
  const file = await realpath(job.path).catch(() => job.path);
  const temp = tempPathFor(file);
  // Where a worker's deflated sheet waits for the package to be written (fold.ts): on disk, not in its heap.
  const spool = tempPathFor(file);
  try {
    // A file that cannot be looked at is the fold's to report: let the worker try.
    const size = inlineBelow > 0 ? await stat(job.path).then((stats) => stats.size, () => Infinity) : Infinity;
    if (size >= inlineBelow && options.alterPart === undefined) {
      const result = await foldInWorker({ job, temp, spool }, options.workerModule ?? WORKER_MODULE);
      if (result !== null) return { result, ranIn: 'worker' };
    }
    return { result: await foldFile(job, temp, { alterPart: options.alterPart }), ranIn: 'main thread' };
  } catch (error) {
    // A worker that failed part way (out of memory) may have left what it wrote.
    await unlink(temp).catch(() => undefined);
    throw error;
  } finally {
    await unlink(spool).catch(() => undefined);
  }
}

/**
 * A small young generation: the streaming .xlsx fold (xlsx/stream-fold.ts) makes garbage a row
 * at a time, and V8's default lets it grow to about 100 MB before collecting it; with 12 MB the
 * fold's peak was a third of that and the fold no slower (docs/benchmarks.md, "Big files").
 */
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 12 };

type WorkerMessage =
  | FoldResult
  | { readonly kind: 'started' }
  | { readonly kind: 'error'; readonly message: string }
  /** The streaming fold's few rows to decode (stream-fold.ts, `DecodeKept`): answered with a `Decoded`. */
  | { readonly kind: 'decode'; readonly id: number; readonly pack: Uint8Array; readonly tab: string; readonly stylesXml: string; readonly rowNumbers: readonly number[] };

/** The worker's result; null when the worker did not start (the caller folds inline). */
function foldInWorker(job: WorkerJob, module: URL): Promise<FoldResult | null> {
  return new Promise((resolve, reject) => {
    let worker: Worker;
    try {
      worker = new Worker(module, { workerData: job, resourceLimits: WORKER_LIMITS });
    } catch {
      resolve(null);
      return;
    }
    let started = false;
    let settled = false;
    const settle = (outcome: () => void): void => {
      if (settled) return;
      settled = true;
      outcome();
      void worker.terminate();
    };
    worker.on('message', (message: WorkerMessage) => {
      if (message.kind === 'started') started = true;
      else if (message.kind === 'decode') {
        // A few rows in a package of a few kilobytes: milliseconds of this thread. A failure
        // (SheetJS cannot be loaded) answers null, and the worker decodes the whole file itself.
        void decodeKeptRows(message.pack, message.tab, message.stylesXml, message.rowNumbers)
          .catch(() => null)
          .then((kept) => {
            if (!settled) worker.postMessage({ kind: 'decoded', id: message.id, kept } satisfies Decoded);
          });
      } else if (message.kind === 'error') settle(() => reject(new Error(message.message)));
      else settle(() => resolve(message));
    });
    // A worker that fails once started (out of memory) fails the fold: folding inline would fail the server.
    worker.on('error', (error: Error) => settle(() => (started ? reject(error) : resolve(null))));
    worker.on('exit', (code: number) => settle(() => (started ? reject(new Error(`the fold's worker stopped (exit code ${code})`)) : resolve(null))));
  });
}
