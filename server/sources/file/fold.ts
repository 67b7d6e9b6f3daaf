// Folding the journal into the workbook file, as one job: the file's bytes as last read and the
// journaled writes in -> the new file's bytes out. An .xlsx streams each written sheet, decoding
// only the rows the writes touch (xlsx/stream-fold.ts); otherwise, and for an .xlsx whose rows
// that cannot read, the job decodes the file afresh, applies the writes and encodes (codec.ts):
// the server itself keeps only the rows (model.ts), not what writing the file back needs
// (SheetJS's parsed book, each row's source cells). The same function runs in a worker thread
// (fold-worker.ts, started by fold-runner.ts), so a 100k-row workbook is encoded without
// holding the server's event loop, or here when no worker starts.
import { decodeWorkbook, encodeWorkbook } from './codec.ts';
import type { FileFormat } from './format.ts';
import { fingerprint } from '../../durable/disk.ts';
import type { JournalEntry } from './journal.ts';
import { applyKeepingCells } from './rebase.ts';
import type { AlterPart } from './xml/well-formed.ts';
import { foldXlsxStreaming, type Collect } from './xlsx/stream-fold.ts';

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
  | { readonly kind: 'folded'; readonly bytes: Uint8Array; readonly fingerprint: string }
  /** The bytes are not the file the entries were planned on: look at the file again. */
  | { readonly kind: 'changed' };

/**
 * The whole fold of `bytes`, the file read now; throws an Error when they cannot be decoded or
 * written, or a written part would not be well-formed XML (the journal keeps the writes).
 * `collect` frees garbage between the streaming fold's pieces (the worker's, on Bun: fold-worker.ts).
 */
export async function foldFile(job: FoldJob, bytes: Uint8Array, alterPart?: AlterPart, collect?: Collect): Promise<FoldResult> {
  if (fingerprint(bytes) !== job.expected) return { kind: 'changed' };
  // The streaming .xlsx fold checks what it writes itself (xlsx/stream-fold.ts); a test that
  // breaks a written part on purpose (alterPart) takes the full path, where the seam is.
  if (job.format === 'xlsx' && alterPart === undefined) {
    const streamed = await foldXlsxStreaming(bytes, job.entries.map((entry) => entry.plan), collect);
    if (streamed !== null) return { kind: 'folded', bytes: streamed, fingerprint: fingerprint(streamed) };
  }
  const decoded = decodeWorkbook(bytes, job.format, job.tabName);
  const plans = job.entries.map((entry) => entry.plan);
  // Each replaced row keeps the source cells of the columns it did not set (write-cells.ts).
  const workbook = plans.reduce(applyKeepingCells, decoded.workbook);
  const encoded = encodeWorkbook(workbook, decoded, plans, alterPart).bytes;
  return { kind: 'folded', bytes: encoded, fingerprint: fingerprint(encoded) };
}
