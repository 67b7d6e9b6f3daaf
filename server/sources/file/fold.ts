// Folding the journal into the workbook file, as one job: the file as last read and the
// journaled writes in -> a new file, written and fsynced beside it (the caller renames it over
// the file). An .xlsx streams each written sheet, decoding only the rows the writes touch
// (xlsx/stream-fold.ts), reading the file by offset and copying the parts it does not change in
// pieces from the old file to the new one, never holding either whole; otherwise, and for an
// .xlsx whose rows that cannot read, the job decodes the file afresh, applies the writes and
// encodes (codec.ts): the server itself keeps only the rows (model.ts), not what writing the
// file back needs (SheetJS's parsed book, each row's source cells). The same function runs in a
// worker thread (fold-worker.ts, started by fold-runner.ts), so a 100k-row workbook is encoded
// without holding the server's event loop, or here when no worker starts.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { decodeWorkbook, encodeWorkbook } from './codec.ts';
import type { FileFormat } from './format.ts';
import { fingerprint, writeNewFile } from '../../durable/disk.ts';
import type { JournalEntry } from './journal.ts';
import { applyKeepingCells } from './rebase.ts';
import type { AlterPart } from './xml/well-formed.ts';
import { loadSheetJs, needsSheetJs } from './xlsx/sheetjs.ts';
import { foldXlsxStreaming, type Collect, type DecodeKept } from './xlsx/stream-fold.ts';
import { SpoolFile, ZipFile, zipPieces } from './zip.ts';

export interface FoldJob {
  /** The workbook file, read by whoever runs the job (a worker reads it itself: nothing big is copied between threads). */
  readonly path: string;
  /** The fingerprint of the file the entries were planned on: other bytes mean it changed meanwhile. */
  readonly expected: string;
  readonly format: FileFormat;
  /** The name a CSV file's one tab goes by. */
  readonly tabName: string;
  /** The acknowledged writes, in journal order, each applied as the server applied it. */
  readonly entries: readonly JournalEntry[];
}

export type FoldResult =
  /** The new file, written to `temp` and fsynced: `identity` is the temp file's (disk.ts), `fingerprint` its content's. */
  | { readonly kind: 'folded'; readonly temp: string; readonly identity: string; readonly fingerprint: string }
  /** The bytes are not the file the entries were planned on: look at the file again (nothing was written). */
  | { readonly kind: 'changed' };

export interface FoldSteps {
  /** Changes a written part's XML before it is checked (the tests' seam: the full decode's path). */
  readonly alterPart?: AlterPart;
  /** Frees garbage between the streaming fold's pieces (the worker's, on Bun: fold-worker.ts). */
  readonly collect?: Collect;
  /** Decodes the few rows the streaming fold must know (the worker asks the main thread: fold-worker.ts). */
  readonly decode?: DecodeKept;
  /**
   * A free name beside the file (like `temp`) for the written sheets' deflated bytes to wait in
   * until the package is written (zip.ts `SpoolFile`), removed when the fold ends; without one they wait in memory.
   */
  readonly spool?: string;
}

/**
 * The whole fold of the file at `job.path` into a new file at `temp` (a free name beside the
 * file it will replace, disk.ts `tempPathFor`); throws an Error when the file cannot be decoded
 * or written, or a written part would not be well-formed XML (the journal keeps the writes), and
 * then leaves no file at `temp`.
 */
export async function foldFile(job: FoldJob, temp: string, steps: FoldSteps = {}): Promise<FoldResult> {
  const plans = job.entries.map((entry) => entry.plan);
  // The streaming .xlsx fold checks what it writes itself (xlsx/stream-fold.ts); a test that
  // breaks a written part on purpose (alterPart) takes the full path, where the seam is.
  const zip = job.format === 'xlsx' && steps.alterPart === undefined ? openZip(job.path) : null;
  if (zip !== null) {
    let spool: SpoolFile | undefined;
    try {
      // Counted through the same open file the fold reads: a save that replaces the file meanwhile is not mixed in.
      if (fingerprintOf(zip.pieces()) !== job.expected) return { kind: 'changed' };
      spool = steps.spool === undefined ? undefined : new SpoolFile(steps.spool);
      const entries = await foldXlsxStreaming(zip.entries, plans, { collect: steps.collect, decode: steps.decode, spool });
      if (entries !== null) return await writeFolded(temp, zipPieces(entries));
    } finally {
      zip.close();
      spool?.close();
    }
  }
  const bytes = await readFile(job.path);
  if (fingerprint(bytes) !== job.expected) return { kind: 'changed' };
  if (needsSheetJs(job.format)) await loadSheetJs();
  const decoded = decodeWorkbook(bytes, job.format, job.tabName);
  // Each replaced row keeps the source cells of the columns it did not set (write-cells.ts).
  const workbook = plans.reduce(applyKeepingCells, decoded.workbook);
  return await writeFolded(temp, [encodeWorkbook(workbook, decoded, plans, steps.alterPart).bytes]);
}

/** The file as a zip read by offset; null when it is not one the streaming fold reads (the full decode says why). */
function openZip(path: string): ZipFile | null {
  try {
    return new ZipFile(path);
  } catch {
    return null;
  }
}

/** `pieces` written to `temp` and fsynced, their fingerprint counted as they go. */
async function writeFolded(temp: string, pieces: Iterable<Uint8Array>): Promise<FoldResult> {
  const hash = createHash('sha256');
  const identity = await writeNewFile(temp, counted(pieces, hash));
  return { kind: 'folded', temp, identity, fingerprint: hash.digest('hex') };
}

function* counted(pieces: Iterable<Uint8Array>, hash: ReturnType<typeof createHash>): Generator<Uint8Array> {
  for (const piece of pieces) {
    hash.update(piece);
    yield piece;
  }
}

/** disk.ts's `fingerprint` of the bytes `pieces` make up, never holding them whole. */
function fingerprintOf(pieces: Iterable<Uint8Array>): string {
  const hash = createHash('sha256');
  for (const piece of pieces) hash.update(piece);
  return hash.digest('hex');
}
