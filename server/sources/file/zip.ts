// The zip container of an .ods file, read and written part by part: folding a write into
// `book.ods` replaces content.xml and copies every other part's compressed bytes as they were,
// with `mimetype` first and stored uncompressed, as the OpenDocument package rules demand.
// Only what ODF packages use: no encryption, no ZIP64, one disk.
import * as zlib from 'node:zlib';
import { deflateRawSync, inflateRawSync } from 'node:zlib';

export interface ZipEntry {
  readonly name: string;
  /** 0 stored, 8 deflated. */
  readonly method: number;
  readonly crc: number;
  /** The bytes as they sit in the archive (compressed for method 8). */
  readonly data: Uint8Array;
  /** Uncompressed size. */
  readonly size: number;
  /** MS-DOS time and date, kept so an untouched part keeps its stamp. */
  readonly time: number;
  readonly date: number;
}

/** The entries of a zip archive, in central directory order; throws on what is not a plain zip. */
export function readZip(bytes: Uint8Array): ZipEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = findEndOfDirectory(view);
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  if (at === 0xffffffff || count === 0xffff) throw new Error('the zip uses ZIP64, which OpenDocument files do not need');
  const entries: ZipEntry[] = [];
  for (let n = 0; n < count; n++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== 0x02014b50) throw new Error('the zip directory is damaged');
    const flags = view.getUint16(at + 8, true);
    const method = view.getUint16(at + 10, true);
    const nameLength = view.getUint16(at + 28, true);
    const skip = nameLength + view.getUint16(at + 30, true) + view.getUint16(at + 32, true);
    const name = new TextDecoder().decode(bytes.subarray(at + 46, at + 46 + nameLength));
    if ((flags & 1) !== 0) throw new Error(`the zip part ${name} is encrypted`);
    if (method !== 0 && method !== 8) throw new Error(`the zip part ${name} uses compression method ${method}`);
    const local = view.getUint32(at + 42, true);
    const compressedSize = view.getUint32(at + 20, true);
    if (local + 30 > bytes.length || view.getUint32(local, true) !== 0x04034b50) throw new Error(`the zip part ${name} is damaged`);
    const start = local + 30 + view.getUint16(local + 26, true) + view.getUint16(local + 28, true);
    if (start + compressedSize > bytes.length) throw new Error(`the zip part ${name} is cut short`);
    entries.push({
      name,
      method,
      crc: view.getUint32(at + 16, true),
      data: bytes.subarray(start, start + compressedSize),
      size: view.getUint32(at + 24, true),
      time: view.getUint16(at + 12, true),
      date: view.getUint16(at + 14, true),
    });
    at += 46 + skip;
  }
  return entries;
}

function findEndOfDirectory(view: DataView): number {
  // The end record sits in the last 22 bytes plus a comment of at most 65,535.
  for (let at = view.byteLength - 22; at >= Math.max(0, view.byteLength - 22 - 65_535); at--) {
    if (view.getUint32(at, true) === 0x06054b50) return at;
  }
  throw new Error('the file is not a zip archive (no end of central directory)');
}

/**
 * A part's uncompressed bytes, refused past `limit` bytes: a few kilobytes of deflate can unpack
 * to gigabytes (a zip bomb), so the size is checked while unpacking, not after.
 */
export function unpackEntry(entry: ZipEntry, limit: number): Uint8Array {
  if (entry.size > limit) throw new PartTooLarge(entry.name, limit);
  if (entry.method === 0) return entry.data;
  try {
    return inflateRawSync(entry.data, { maxOutputLength: limit });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new PartTooLarge(entry.name, limit);
    throw new Error(`the zip part ${entry.name} cannot be unpacked (${(error as Error).message})`);
  }
}

export class PartTooLarge extends Error {
  constructor(name: string, limit: number) {
    super(`its part ${name} unpacks to more than ${Math.round(limit / 1_048_576).toLocaleString('en-US')} MiB`);
  }
}

/** A new deflated entry, stamped with the time of `like` (the part it replaces). */
export function deflatedEntry(name: string, content: Uint8Array, like?: ZipEntry): ZipEntry {
  return { name, method: 8, crc: crc32(content), data: deflateRawSync(content, { level: 6 }), size: content.length, time: like?.time ?? 0, date: like?.date ?? 0x21 };
}

/** The archive of `entries` in the order given (the caller puts `mimetype` first). */
export function writeZip(entries: readonly ZipEntry[]): Uint8Array {
  const encoder = new TextEncoder();
  const names = entries.map((entry) => encoder.encode(entry.name));
  let total = 22;
  for (const [n, entry] of entries.entries()) total += 30 + 46 + 2 * names[n].length + entry.data.length;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  const offsets: number[] = [];
  let at = 0;
  for (const [n, entry] of entries.entries()) {
    offsets.push(at);
    view.setUint32(at, 0x04034b50, true);
    writeCommon(view, at + 4, entry, names[n]);
    out.set(names[n], at + 30);
    out.set(entry.data, at + 30 + names[n].length);
    at += 30 + names[n].length + entry.data.length;
  }
  const directory = at;
  for (const [n, entry] of entries.entries()) {
    view.setUint32(at, 0x02014b50, true);
    view.setUint16(at + 4, 20, true);
    writeCommon(view, at + 6, entry, names[n]);
    // comment length, disk, internal and external attributes stay 0
    view.setUint32(at + 42, offsets[n], true);
    out.set(names[n], at + 46);
    at += 46 + names[n].length;
  }
  view.setUint32(at, 0x06054b50, true);
  view.setUint16(at + 8, entries.length, true);
  view.setUint16(at + 10, entries.length, true);
  view.setUint32(at + 12, at - directory, true);
  view.setUint32(at + 16, directory, true);
  return out;
}

/** The fields local and central headers share, from "version needed" to "extra length". */
function writeCommon(view: DataView, at: number, entry: ZipEntry, name: Uint8Array): void {
  const utf8 = name.some((byte) => byte > 0x7f);
  view.setUint16(at, 20, true);
  view.setUint16(at + 2, utf8 ? 0x0800 : 0, true);
  view.setUint16(at + 4, entry.method, true);
  view.setUint16(at + 6, entry.time, true);
  view.setUint16(at + 8, entry.date, true);
  view.setUint32(at + 10, entry.crc, true);
  view.setUint32(at + 14, entry.data.length, true);
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

/** zlib's own where the runtime has it (Node 22.2+), about 20x faster than the table below. */
const nativeCrc32 = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;

export function crc32(bytes: Uint8Array): number {
  if (typeof nativeCrc32 === 'function') return nativeCrc32(bytes) >>> 0;
  let crc = 0xffffffff;
  for (let n = 0; n < bytes.length; n++) crc = CRC_TABLE[(crc ^ bytes[n]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
