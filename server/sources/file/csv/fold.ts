// Folding into a .csv file on the main thread, a slice of rows at a time: writing 1M rows as CSV
// is one pass over the rows the server already holds (a CSV row keeps nothing else, model.ts),
// so decoding the file again in a worker (fold.ts) would cost far more than it saves. Between
// slices the event loop answers requests. The bytes are records.ts's (codec.ts writes the same):
// untouched records as the file had them, written ones formatted.
import { createHash } from 'node:crypto';
import type { SheetRow } from '../../../../lib/workbook.ts';
import type { CsvStyle } from './csv.ts';
import { formatRecords } from './records.ts';

/** Rows formatted between two turns of the event loop: about 20-40 ms on this machine (docs/benchmarks.md). */
const ROWS_PER_STEP = 10_000;

const encoder = new TextEncoder();

/** Gives the event loop a turn: queued requests are answered before the next slice. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * The CSV file of `rows`, in `style`, built a slice at a time, with its fingerprint (disk.ts's,
 * hashed a slice at a time too). The slices are not joined: one 47 MB buffer for a 1M-row file
 * made V8 collect the whole heap, holding the event loop 300-600 ms (docs/benchmarks.md).
 */
export async function formatCsvInSteps(rows: readonly SheetRow[], style: CsvStyle, rowsPerStep = ROWS_PER_STEP): Promise<{ pieces: Uint8Array[]; fingerprint: string }> {
  const chunks: Uint8Array[] = [];
  const hash = createHash('sha256');
  const add = (chunk: Uint8Array): void => {
    chunks.push(chunk);
    hash.update(chunk);
  };
  if (style.byteOrderMark) add(encoder.encode('\uFEFF'));
  for (let start = 0; start < rows.length; start += rowsPerStep) {
    add(encoder.encode(formatRecords(rows, style, start, Math.min(rows.length, start + rowsPerStep))));
    await nextTurn();
  }
  return { pieces: chunks, fingerprint: hash.digest('hex') };
}
