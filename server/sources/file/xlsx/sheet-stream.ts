// A worksheet part read a piece at a time: `xl/worksheets/sheet1.xml` of a 100k-row workbook
// unpacks to about 40 MB of XML, which a fold reads twice (stream-fold.ts) without ever holding
// it whole. Its text comes to the reader in three kinds of calls: the head (everything before
// `<sheetData>`), each `<row>` element as its own text, and the tail (everything after
// `</sheetData>`); `pieceDone` after each unpacked piece lets a writer catch up (backpressure).
// Writing goes the other way: `PartWriter` deflates text as it is given and counts its CRC.
import { Readable } from 'node:stream';
import * as zlib from 'node:zlib';
import { attribute } from '../xml/attributes.ts';
import { LOAD_LIMITS } from '../limits.ts';
import { crc32, packedLength, packedPieces, PartTooLarge, type Packed, type SpoolFile, type ZipEntry } from '../zip.ts';

/** One `<row>` element as it stands in the part. */
export interface RawRow {
  /** Its `r`, or one more than the row before when it has none. */
  readonly number: number;
  /** The element's whole text, start tag to end tag. */
  readonly xml: string;
  /** Between the start and end tags ('' for `<row/>`). */
  readonly inner: string;
}

export interface SheetReader {
  head(text: string): void;
  row(row: RawRow): void;
  tail(text: string): void;
  /** Called after each unpacked piece has been read. */
  pieceDone?(): Promise<void> | void;
}

/** How much XML is unpacked at a time. */
const PIECE_BYTES = 1 << 16;

const SHEET_DATA = /<(\w+:)?sheetData\b[^>]*?(\/?)>/;
const ROW = String.raw`<(?:\w+:)?row\b[^>]*?(?:\/>|>([\s\S]*?)<\/(?:\w+:)?row>)`;

/** A row, or the end of `<sheetData>`, which closes with the prefix it opened with, or none (as `rewriteSheet` reads it). */
function rowOrEnd(prefix: string): RegExp {
  return new RegExp(`${ROW}|<\\/${prefix === '' ? '' : `(?:${prefix})?`}sheetData>`, 'g');
}

/** Reads the worksheet part `entry` (stored or deflated) through `reader`; throws an Error naming the part when it cannot be unpacked or has no `<sheetData>`. */
export async function readSheet(entry: ZipEntry, reader: SheetReader): Promise<void> {
  const decoder = new TextDecoder();
  let mode: 'head' | 'rows' | 'tail' = 'head';
  let carry = '';
  let number = 0;
  let rowOrEndPattern = rowOrEnd('');
  const take = (text: string): void => {
    if (mode === 'tail') {
      carry += text;
      return;
    }
    let at = 0;
    let whole = carry + text;
    if (mode === 'head') {
      const open = SHEET_DATA.exec(whole);
      if (open === null) {
        carry = whole;
        return;
      }
      reader.head(whole.slice(0, open.index));
      rowOrEndPattern = rowOrEnd(open[1] ?? '');
      at = open.index + open[0].length;
      if (open[2] === '/') {
        // `<sheetData/>`: no rows; the rest is the tail.
        mode = 'tail';
        carry = whole.slice(at);
        return;
      }
      mode = 'rows';
    }
    rowOrEndPattern.lastIndex = at;
    for (let match = rowOrEndPattern.exec(whole); match !== null; match = rowOrEndPattern.exec(whole)) {
      at = rowOrEndPattern.lastIndex;
      if (match[0].charCodeAt(1) === 0x2f) {
        mode = 'tail';
        carry = whole.slice(at);
        return;
      }
      const start = /^<[^>]*>/.exec(match[0])![0];
      number = Number(attribute(start, 'r') ?? number + 1);
      reader.row({ number, xml: match[0], inner: match[1] ?? '' });
    }
    carry = whole.slice(at);
    whole = '';
  };
  for await (const piece of unpacked(entry)) {
    take(decoder.decode(piece, { stream: true }));
    await reader.pieceDone?.();
  }
  take(decoder.decode());
  // (`take` moves `mode` on, which the compiler does not follow into the closure.)
  const reached = mode as 'head' | 'rows' | 'tail';
  if (reached !== 'tail') throw new Error('a written sheet has no <sheetData>');
  reader.tail(carry);
}

/**
 * The part's content a piece at a time, refused past LOAD_LIMITS.partBytes whatever its header
 * declares. Its packed bytes come a piece at a time too (zip.ts `packedPieces`: from the file,
 * never the whole part in memory).
 */
async function* unpacked(entry: ZipEntry): AsyncGenerator<Uint8Array> {
  const limit = LOAD_LIMITS.partBytes;
  if (entry.method !== 0 && entry.method !== 8) throw new Error(`its part ${entry.name} uses zip compression method ${entry.method}`);
  if (entry.size > limit || (entry.method === 0 && packedLength(entry) > limit)) throw new PartTooLarge(entry.name, limit);
  if (entry.method === 0) {
    for (const piece of packedPieces(entry)) for (let at = 0; at < piece.length; at += PIECE_BYTES) yield piece.subarray(at, at + PIECE_BYTES);
    return;
  }
  const inflater = zlib.createInflateRaw({ chunkSize: PIECE_BYTES });
  // Fed as it is read (pipe waits while the inflater is behind): a read that fails fails the inflater.
  const packed = Readable.from(packedPieces(entry));
  packed.once('error', (error) => inflater.destroy(error));
  packed.pipe(inflater);
  let total = 0;
  try {
    for await (const piece of inflater as AsyncIterable<Uint8Array>) {
      total += piece.length;
      if (total > limit) throw new PartTooLarge(entry.name, limit);
      yield piece;
    }
  } catch (error) {
    if (error instanceof PartTooLarge) throw error;
    throw new Error(`its part ${entry.name} cannot be unpacked (${(error as Error).message})`);
  } finally {
    packed.destroy();
    inflater.destroy();
  }
}

/**
 * A part's new content, deflated as it is written; `finish()` gives what a zip entry needs. The
 * deflater's pieces are kept in memory, or appended to `spool` as they come (the fold's worker:
 * the 5-6 MB of a 100k-row sheet then wait on disk, not in the heap, until the package is written).
 */
export class PartWriter {
  readonly #deflater = zlib.createDeflateRaw();
  readonly #packed: Uint8Array[] = [];
  readonly #encoder = new TextEncoder();
  readonly #spool: SpoolFile | undefined;
  readonly #spooledFrom: number;
  #pending: string[] = [];
  #crc = 0;
  #size = 0;
  readonly #ended: Promise<void>;

  constructor(spool?: SpoolFile) {
    this.#spool = spool;
    this.#spooledFrom = spool?.length ?? 0;
    let failed: Error | undefined;
    this.#deflater.on('data', (piece: Uint8Array) => {
      if (spool === undefined) this.#packed.push(piece);
      else if (failed === undefined) {
        try {
          spool.append(piece);
        } catch (error) {
          // A full disk: the deflater stops with the error, which finish() throws.
          failed = error as Error;
          this.#deflater.destroy(failed);
        }
      }
    });
    this.#ended = new Promise((resolve, reject) => {
      this.#deflater.once('end', resolve);
      this.#deflater.once('error', reject);
    });
  }

  write(text: string): void {
    this.#pending.push(text);
  }

  /** Hands what was written to the deflater, and waits while it is behind. */
  async flush(): Promise<void> {
    if (this.#pending.length === 0) return;
    const bytes = this.#encoder.encode(this.#pending.join(''));
    this.#pending = [];
    this.#crc = crc32(bytes, this.#crc);
    this.#size += bytes.length;
    if (!this.#deflater.write(bytes)) await new Promise((resolve) => this.#deflater.once('drain', resolve));
  }

  /** Stops deflating: the part will not be written (its sheet could not be read). */
  abandon(): void {
    this.#deflater.destroy();
  }

  /** The deflated pieces as the deflater gave them, or where they are in the spool: the new package is written from them (zip.ts `zipPieces`), never joined. */
  async finish(): Promise<{ readonly method: 8; readonly crc: number; readonly size: number } & ({ readonly pieces: readonly Uint8Array[] } | { readonly spooled: Packed })> {
    await this.flush();
    this.#deflater.end();
    await this.#ended;
    const spool = this.#spool;
    if (spool === undefined) return { method: 8, pieces: this.#packed, crc: this.#crc, size: this.#size };
    return { method: 8, spooled: spool.packed(this.#spooledFrom, spool.length - this.#spooledFrom), crc: this.#crc, size: this.#size };
  }
}
