// Folding into a .csv file on the main thread, a slice of rows at a time: writing 1M rows as CSV
// is one pass over the rows the server already holds (a CSV row keeps nothing else, model.ts),
// so decoding the file again in a worker (fold.ts) would cost far more than it saves. Between
// slices the event loop answers requests. The bytes are records.ts's (codec.ts writes the same):
// untouched records as the file had them, written ones formatted.
import { createHash } from 'node:crypto';
import { Rows, type Chunk } from '../../../../lib/rows.ts';
import type { SheetRow } from '../../../../lib/workbook.ts';
import type { CsvStyle } from './csv.ts';
import { formatLine, lineEndingOf } from './records.ts';

/** Rows formatted between two turns of the event loop: about 20-40 ms on this machine (docs/benchmarks.md). */
const ROWS_PER_STEP = 10_000;
/** Bytes of lines encoded by an earlier fold hashed between two turns: a few milliseconds. */
const BYTES_PER_STEP = 4 * 1024 * 1024;

const encoder = new TextEncoder();

/** Gives the event loop a turn: queued requests are answered before the next slice. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Each chunk's lines (lib/rows.ts), a line ending after each, as the last fold encoded them: the
 * chunks a tab's versions share are encoded once, so a fold after a POST on a 1M-row tab encodes
 * the last chunk and hashes the rest (the bytes a fold writes are kept meanwhile, one copy of
 * the file per line ending in use).
 */
const encodedChunks = new WeakMap<Chunk, { readonly lineEnding: string; readonly bytes: Uint8Array }>();

/**
 * The CSV file of `rows`, in `style`, built a slice at a time, with its fingerprint (disk.ts's,
 * hashed a slice at a time too). The slices are not joined: one 47 MB buffer for a 1M-row file
 * made V8 collect the whole heap, holding the event loop 300-600 ms (docs/benchmarks.md).
 */
export async function formatCsvInSteps(rows: readonly SheetRow[] | Rows, style: CsvStyle, rowsPerStep = ROWS_PER_STEP): Promise<{ pieces: Uint8Array[]; fingerprint: string }> {
  const chunks = rows instanceof Rows ? rows.chunks : Rows.of(rows).chunks;
  const pieces: Uint8Array[] = [];
  const hash = createHash('sha256');
  const add = (piece: Uint8Array): void => {
    pieces.push(piece);
    hash.update(piece);
  };
  if (style.byteOrderMark) add(encoder.encode('\uFEFF'));
  let encoded = 0;
  let hashed = 0;
  for (let c = 0; c < chunks.length; c++) {
    const chunk = chunks[c];
    if (chunk.length === 0) continue;
    let kept = encodedChunks.get(chunk);
    if (kept === undefined || kept.lineEnding !== style.lineEnding) {
      let text = '';
      for (let index = 0; index < chunk.length; index++) text += formatLine(chunk[index], style);
      kept = { lineEnding: style.lineEnding, bytes: encoder.encode(text) };
      encodedChunks.set(chunk, kept);
      encoded += chunk.length;
    }
    // Each line ends with its line ending, but the file's last when the file had no final newline.
    const last = c === chunks.length - 1 && !style.finalNewline;
    add(last ? kept.bytes.subarray(0, kept.bytes.length - encoder.encode(lineEndingOf(chunk[chunk.length - 1], style)).length) : kept.bytes);
    hashed += kept.bytes.length;
    if (encoded >= rowsPerStep || hashed >= BYTES_PER_STEP) {
      encoded = 0;
      hashed = 0;
      await nextTurn();
    }
  }
  return { pieces, fingerprint: hash.digest('hex') };
}
