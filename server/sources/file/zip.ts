// The zip container of an .xlsx or .ods file, read and rewritten part by part: folding a write
// into `book.xlsx` replaces `xl/worksheets/sheet1.xml` (into `book.ods`, `content.xml`) and
// copies every other part's compressed bytes, CRC, stamp and attributes as they were, in the
// order given, so a `mimetype` that came first and stored stays so (the OpenDocument package
// rule). Unpacking stops at the size a part declares, or LOAD_LIMITS.partBytes if that is less:
// a few kilobytes of deflate can unpack to gigabytes (a zip bomb), and a part that unpacks to
// more or less than it declares is refused, named (`its part xl/worksheets/sheet1.xml unpacks
// to more than the 1,000 bytes it declares`). node:zlib (Node, Deno and Bun) does the deflating; only what these
// packages use is read: no encryption, no ZIP64, one disk.
import { closeSync, fstatSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs';
import * as zlib from 'node:zlib';
import { LOAD_LIMITS } from './limits.ts';

export interface ZipEntry {
  readonly name: string;
  /** 0 stored, 8 deflated; a part packed any other way is copied but cannot be unpacked. */
  readonly method: number;
  /** General purpose flags; bit 11 says the name is UTF-8. */
  readonly flags: number;
  /** MS-DOS time and date, kept so an untouched part keeps its stamp. */
  readonly time: number;
  readonly date: number;
  readonly crc: number;
  /** Uncompressed size. */
  readonly size: number;
  readonly versionMadeBy: number;
  readonly internalAttributes: number;
  readonly externalAttributes: number;
  /** The part's bytes as they sit in the archive (compressed when method is 8). */
  readonly raw: Uint8Array;
}

/** What a new part takes from the one it replaces; a part with no forerunner gets the defaults. */
export type EntryStamp = Pick<ZipEntry, 'name'> & Partial<Pick<ZipEntry, 'flags' | 'time' | 'date' | 'versionMadeBy' | 'internalAttributes' | 'externalAttributes'>>;

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;
const END = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ENCRYPTED = 0x1;
const DATA_DESCRIPTOR = 0x8;
const UTF8_NAMES = 0x800;
const names = new TextDecoder();

/** The entries in central directory order; throws an Error saying why the bytes are not a zip this module can rewrite. */
export function readZip(bytes: Uint8Array): ZipEntry[] {
  return entriesOf({ size: bytes.length, read: (at, length) => bytes.subarray(at, at + length) }, (at, length) => bytes.subarray(at, at + length));
}

/** Bytes of a zip, by offset: the whole file in memory, or read from it (`ZipFile`). */
interface ZipBytes {
  readonly size: number;
  read(at: number, length: number): Uint8Array;
}

/**
 * The zip file at `path`, open for reading by offset: its directory is read at once, each part's
 * packed bytes only when asked (`entry.raw`) or a piece at a time (`packedPieces`), so a fold of
 * a 100k-row sheet never holds the 5-15 MB file whole (issue 24, part 13). `close()` when done.
 */
export class ZipFile {
  readonly entries: readonly ZipEntry[];
  readonly #fd: number;
  readonly #size: number;

  constructor(path: string) {
    this.#fd = openSync(path, 'r');
    try {
      this.#size = fstatSync(this.#fd).size;
      const file: ZipBytes = { size: this.#size, read: (at, length) => this.read(at, length) };
      this.entries = entriesOf(file, (at, length) => {
        let raw: Uint8Array | undefined;
        return { length, pieces: () => this.#pieces(at, length), raw: () => (raw ??= this.read(at, length)) };
      });
    } catch (error) {
      closeSync(this.#fd);
      throw error;
    }
  }

  /** `length` bytes from `at` (fewer only past the file's end, which the directory was checked against). */
  read(at: number, length: number, into?: Uint8Array): Uint8Array {
    const count = Math.max(0, Math.min(length, this.#size - at));
    const out = into === undefined ? new Uint8Array(count) : into.subarray(0, count);
    for (let done = 0; done < out.length; ) {
      const got = readSync(this.#fd, out, done, out.length - done, at + done);
      if (got === 0) throw new Error('the file was cut short while it was read');
      done += got;
    }
    return out;
  }

  /**
   * The whole file a piece at a time, each in the same buffer, good until the next is asked for:
   * its fingerprint is counted without holding it, or leaving 15 MB of pieces to collect.
   */
  *pieces(): Generator<Uint8Array> {
    const buffer = new Uint8Array(PIECE_BYTES);
    for (let done = 0; done < this.#size; done += PIECE_BYTES) yield this.read(done, PIECE_BYTES, buffer);
  }

  *#pieces(at: number, length: number): Generator<Uint8Array> {
    for (let done = 0; done < length; done += PIECE_BYTES) yield this.read(at + done, Math.min(PIECE_BYTES, length - done));
  }

  close(): void {
    closeSync(this.#fd);
  }
}

/** How much of a part is read from its file, or copied from it into the new one, at a time. */
const PIECE_BYTES = 1 << 16;

/**
 * A file the fold's deflater writes the new sheet's packed bytes to (fold.ts): its pieces are
 * read back when the new package is written, so the 5-6 MB of a 100k-row sheet are not held in
 * memory meanwhile (issue 24, part 13). Created fresh (`path` must not exist: a name from
 * disk.ts `tempPathFor`); `close()` closes and removes it.
 */
export class SpoolFile {
  readonly #path: string;
  readonly #fd: number;
  #length = 0;

  constructor(path: string) {
    this.#path = path;
    this.#fd = openSync(path, 'wx+', 0o600);
  }

  /** Appends `bytes`; answers where they start. */
  append(bytes: Uint8Array): number {
    const at = this.#length;
    for (let done = 0; done < bytes.length; ) {
      const wrote = writeSync(this.#fd, bytes, done, bytes.length - done, at + done);
      if (!(wrote > 0)) throw Object.assign(new Error('the disk took none of the bytes written'), { code: 'ENOSPC' });
      done += wrote;
    }
    this.#length += bytes.length;
    return at;
  }

  get length(): number {
    return this.#length;
  }

  /** The bytes from `at`, `length` long, as a part's packed bytes (read back a piece at a time). */
  packed(at: number, length: number): Packed {
    const read = (from: number, count: number): Uint8Array => {
      const out = new Uint8Array(count);
      for (let done = 0; done < count; ) {
        const got = readSync(this.#fd, out, done, count - done, from + done);
        if (got === 0) throw new Error('the fold\'s spool file was cut short');
        done += got;
      }
      return out;
    };
    return {
      length,
      *pieces() {
        for (let done = 0; done < length; done += PIECE_BYTES) yield read(at + done, Math.min(PIECE_BYTES, length - done));
      },
      raw: () => read(at, length),
    };
  }

  close(): void {
    closeSync(this.#fd);
    try {
      unlinkSync(this.#path);
    } catch {
      // Gone already: nothing to remove.
    }
  }
}

/** Where a part's packed bytes are when they are not one array in memory: in a file, or in the pieces a deflater gave. */
export interface Packed {
  readonly length: number;
  pieces(): Iterable<Uint8Array>;
  raw(): Uint8Array;
}

const packedElsewhere = new WeakMap<ZipEntry, Packed>();

/** A part's packed bytes a piece at a time: read from its file in bounded pieces, or as the deflater gave them. */
export function packedPieces(entry: ZipEntry): Iterable<Uint8Array> {
  return packedElsewhere.get(entry)?.pieces() ?? [entry.raw];
}

/** A part's packed length, known without reading its bytes. */
export function packedLength(entry: ZipEntry): number {
  return packedElsewhere.get(entry)?.length ?? entry.raw.length;
}

/** An entry whose `raw` is made only when asked (then kept), and whose pieces come from `packed`. */
function entryPackedElsewhere(fields: Omit<ZipEntry, 'raw'>, packed: Packed): ZipEntry {
  const entry = Object.defineProperty({ ...fields }, 'raw', { get: () => packed.raw(), enumerable: true }) as ZipEntry;
  packedElsewhere.set(entry, packed);
  return entry;
}

function entriesOf(bytes: ZipBytes, packedAt: (at: number, length: number) => Uint8Array | Packed): ZipEntry[] {
  const tailLength = Math.min(bytes.size, 22 + 0xffff);
  const tail = bytes.read(bytes.size - tailLength, tailLength);
  const tailView = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  const endInTail = findEnd(tailView);
  const end = bytes.size - tailLength + endInTail;
  const count = tailView.getUint16(endInTail + 10, true);
  const directoryAt = tailView.getUint32(endInTail + 16, true);
  if ((endInTail >= 20 && tailView.getUint32(endInTail - 20, true) === ZIP64_LOCATOR) || directoryAt === 0xffffffff) throw new Error('it is a zip64 package');
  // The directory runs from where the end record says up to the end record (read as one piece).
  if (directoryAt > end) throw new Error('its zip directory is damaged');
  const directory = bytes.read(directoryAt, end - directoryAt);
  const view = new DataView(directory.buffer, directory.byteOffset, directory.byteLength);
  let at = 0;
  const entries: ZipEntry[] = [];
  for (let index = 0; index < count; index++) {
    if (at + 46 > directory.length || view.getUint32(at, true) !== CENTRAL) throw new Error('its zip directory is damaged');
    const flags = view.getUint16(at + 8, true);
    const compressedSize = view.getUint32(at + 20, true);
    const size = view.getUint32(at + 24, true);
    const nameLength = view.getUint16(at + 28, true);
    const localAt = view.getUint32(at + 42, true);
    const name = names.decode(directory.subarray(at + 46, at + 46 + nameLength));
    if (flags & ENCRYPTED) throw new Error(`its part ${name} is encrypted`);
    if (compressedSize === 0xffffffff || size === 0xffffffff || localAt === 0xffffffff) throw new Error('it is a zip64 package');
    const local = localAt + 30 <= bytes.size ? bytes.read(localAt, 30) : new Uint8Array(0);
    const localView = new DataView(local.buffer, local.byteOffset, local.byteLength);
    if (local.length < 30 || localView.getUint32(0, true) !== LOCAL) throw new Error(`its part ${name} is damaged`);
    // The local header's name and extra field may differ in length from the directory's.
    const dataAt = localAt + 30 + localView.getUint16(26, true) + localView.getUint16(28, true);
    if (dataAt + compressedSize > bytes.size) throw new Error(`its part ${name} is cut short`);
    const fields = {
      name,
      method: view.getUint16(at + 10, true),
      flags,
      time: view.getUint16(at + 12, true),
      date: view.getUint16(at + 14, true),
      crc: view.getUint32(at + 16, true),
      size,
      versionMadeBy: view.getUint16(at + 4, true),
      internalAttributes: view.getUint16(at + 36, true),
      externalAttributes: view.getUint32(at + 38, true),
    };
    const packed = packedAt(dataAt, compressedSize);
    entries.push(packed instanceof Uint8Array ? { ...fields, raw: packed } : entryPackedElsewhere(fields, packed));
    at += 46 + nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
  }
  return entries;
}

function findEnd(view: DataView): number {
  // The end record is 22 bytes plus a comment of up to 65,535.
  for (let at = view.byteLength - 22; at >= Math.max(0, view.byteLength - 22 - 0xffff); at--) {
    if (view.getUint32(at, true) === END) return at;
  }
  throw new Error('it is not a zip package');
}

/**
 * A part's content: exactly the size its directory entry declares, which may be at most `limit`
 * bytes. Inflating stops one byte past the declared size (maxOutputLength), so a part declaring
 * 1,000 bytes that would inflate to 2 GiB is refused after 1,000.
 */
export function unpackEntry(entry: ZipEntry, limit: number = LOAD_LIMITS.partBytes): Uint8Array {
  if (entry.method !== 0 && entry.method !== 8) throw new Error(`its part ${entry.name} uses zip compression method ${entry.method}`);
  if (entry.size > limit || (entry.method === 0 && entry.raw.length > limit)) throw new PartTooLarge(entry.name, limit);
  let out: Uint8Array;
  if (entry.method === 0) {
    out = entry.raw;
  } else {
    try {
      // One byte more than declared, so that inflating to more is told from inflating to exactly it.
      const inflated = zlib.inflateRawSync(entry.raw, { maxOutputLength: entry.size + 1 });
      // A plain Uint8Array over the Buffer's memory, not a copy.
      out = new Uint8Array(inflated.buffer, inflated.byteOffset, inflated.byteLength);
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new PartSizeMismatch(entry.name, entry.size, null);
      throw new Error(`its part ${entry.name} cannot be unpacked (${(error as Error).message})`);
    }
  }
  if (out.length !== entry.size) throw new PartSizeMismatch(entry.name, entry.size, out.length);
  return out;
}

/** The part's content as text (XML parts are UTF-8), within the same limit. */
export function entryText(entry: ZipEntry, limit?: number): string {
  return new TextDecoder().decode(unpackEntry(entry, limit));
}

export class PartTooLarge extends Error {
  constructor(name: string, limit: number) {
    super(`its part ${name} unpacks to more than ${formatMiB(limit)}`);
  }
}

/** A part that unpacks to more (actual null: inflating was stopped) or fewer bytes than its directory entry declares. */
export class PartSizeMismatch extends Error {
  constructor(name: string, declared: number, actual: number | null) {
    super(
      actual === null || actual > declared
        ? `its part ${name} unpacks to more than the ${formatBytes(declared)} it declares (a damaged or hostile zip)`
        : `its part ${name} unpacks to ${formatBytes(actual)}, not the ${formatBytes(declared)} it declares (a damaged zip)`,
    );
  }
}

function formatBytes(bytes: number): string {
  return `${bytes.toLocaleString('en-US')} byte${bytes === 1 ? '' : 's'}`;
}

function formatMiB(bytes: number): string {
  return bytes >= 1_048_576 ? `${Math.round(bytes / 1_048_576).toLocaleString('en-US')} MiB` : `${bytes.toLocaleString('en-US')} bytes`;
}

/**
 * A new part holding `content`, deflated (method 8) or stored (0), with the name, stamp and
 * attributes of `like`, the part it replaces: a fold changes a part's bytes, not its date.
 */
export function replacedEntry(like: EntryStamp, content: Uint8Array | string, method: 0 | 8 = 8): ZipEntry {
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
  const raw = method === 0 ? bytes : zlib.deflateRawSync(bytes);
  return packedEntry(like, { method, raw: new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength), crc: crc32(bytes), size: bytes.length });
}

/**
 * A new part whose content was packed already (a worksheet deflated as it was written,
 * xlsx/stream-fold.ts), stamped as `like`. Given as `pieces` (the deflater's) or `spooled` (in a
 * SpoolFile), they are written
 * into the new package as they are (`zipPieces`), never joined into one array unless `raw` is asked for.
 */
export function packedEntry(like: EntryStamp, packed: Pick<ZipEntry, 'method' | 'crc' | 'size'> & ({ readonly raw: Uint8Array } | { readonly pieces: readonly Uint8Array[] } | { readonly spooled: Packed })): ZipEntry {
  const fields = {
    name: like.name,
    method: packed.method,
    // Only the name's encoding carries over: other bits describe how the old bytes were packed.
    flags: (like.flags ?? 0) & UTF8_NAMES,
    time: like.time ?? 0,
    // 1980-01-01, the first day an MS-DOS date can hold.
    date: like.date ?? 0x21,
    crc: packed.crc,
    size: packed.size,
    versionMadeBy: like.versionMadeBy ?? 20,
    internalAttributes: like.internalAttributes ?? 0,
    externalAttributes: like.externalAttributes ?? 0,
  };
  if ('raw' in packed) return { ...fields, raw: packed.raw };
  if ('spooled' in packed) return entryPackedElsewhere(fields, packed.spooled);
  const pieces = packed.pieces;
  return entryPackedElsewhere(fields, { length: pieces.reduce((sum, piece) => sum + piece.length, 0), pieces: () => pieces, raw: () => joined(pieces) });
}

function joined(pieces: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
  let at = 0;
  for (const piece of pieces) {
    out.set(piece, at);
    at += piece.length;
  }
  return out;
}

/**
 * The zip of `entries`, in their order (the caller puts an .ods `mimetype` first), without data
 * descriptors, extra fields or comments: sizes and CRC go in the local headers, so a stored
 * first entry's content starts at byte 30 + its name's length, where OpenDocument looks for it.
 */
export function writeZip(entries: readonly ZipEntry[]): Uint8Array {
  return joined([...zipPieces(entries)]);
}

/**
 * `writeZip`'s bytes a piece at a time: each local header, then the part's packed bytes as they
 * come (`packedPieces`: from the old file in bounded pieces, or the deflater's), then the central
 * directory. A fold writes them to its temp file as they come (fold.ts).
 */
export function* zipPieces(entries: readonly ZipEntry[]): Generator<Uint8Array> {
  const encoded = entries.map((entry) => new TextEncoder().encode(entry.name));
  const offsets: number[] = [];
  let at = 0;
  for (const [index, entry] of entries.entries()) {
    const length = packedLength(entry);
    offsets.push(at);
    const header = new Uint8Array(30 + encoded[index].length);
    const view = new DataView(header.buffer);
    view.setUint32(0, LOCAL, true);
    writeCommon(view, 4, entry, encoded[index], length);
    header.set(encoded[index], 30);
    yield header;
    let written = 0;
    for (const piece of packedPieces(entry)) {
      written += piece.length;
      yield piece;
    }
    if (written !== length) throw new Error(`its part ${entry.name} changed while it was copied`);
    at += header.length + length;
  }
  const centralAt = at;
  const central = new Uint8Array(entries.reduce((sum, _, index) => sum + 46 + encoded[index].length, 22));
  const view = new DataView(central.buffer);
  let to = 0;
  for (const [index, entry] of entries.entries()) {
    view.setUint32(to, CENTRAL, true);
    view.setUint16(to + 4, entry.versionMadeBy, true);
    writeCommon(view, to + 6, entry, encoded[index], packedLength(entry));
    // comment length and disk stay 0
    view.setUint16(to + 36, entry.internalAttributes, true);
    view.setUint32(to + 38, entry.externalAttributes, true);
    view.setUint32(to + 42, offsets[index], true);
    central.set(encoded[index], to + 46);
    to += 46 + encoded[index].length;
  }
  view.setUint32(to, END, true);
  view.setUint16(to + 8, entries.length, true);
  view.setUint16(to + 10, entries.length, true);
  view.setUint32(to + 12, to, true);
  view.setUint32(to + 16, centralAt, true);
  yield central;
}

/** The fields local and central headers share, from "version needed" to "extra length". */
function writeCommon(view: DataView, at: number, entry: ZipEntry, name: Uint8Array, packedSize: number): void {
  // The data descriptor a streaming writer used is dropped (the sizes are here); a name that is
  // not ASCII must say it is UTF-8, or readers take it as code page 437.
  const flags = (entry.flags & ~DATA_DESCRIPTOR) | (name.some((byte) => byte > 0x7f) ? UTF8_NAMES : 0);
  view.setUint16(at, 20, true);
  view.setUint16(at + 2, flags, true);
  view.setUint16(at + 4, entry.method, true);
  view.setUint16(at + 6, entry.time, true);
  view.setUint16(at + 8, entry.date, true);
  view.setUint32(at + 10, entry.crc, true);
  view.setUint32(at + 14, packedSize, true);
  view.setUint32(at + 18, entry.size, true);
  view.setUint16(at + 22, name.length, true);
  view.setUint16(at + 24, 0, true);
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** zlib's own where the runtime has it (Node 22.2+), about 20x faster than the table. */
const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array, value?: number) => number }).crc32;

/** The CRC-32 of `bytes`; with `previous`, of the bytes it was the CRC of followed by these (a part written in pieces). */
export function crc32(bytes: Uint8Array, previous = 0): number {
  if (typeof nativeCrc32 === 'function') return nativeCrc32(bytes, previous) >>> 0;
  let crc = (previous ^ 0xffffffff) >>> 0;
  for (let index = 0; index < bytes.length; index++) crc = CRC_TABLE[(crc ^ bytes[index]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
