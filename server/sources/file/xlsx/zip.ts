// The zip container of an .xlsx, read and rewritten part by part: `readZip(bytes)` lists the
// parts with their compressed bytes, `writeZip(entries, { 'xl/worksheets/sheet1.xml': xml })`
// copies every other part's compressed bytes unchanged and deflates only the replaced ones.
// node:zlib (built into Node, Deno and Bun) does the deflating; no zip library is needed.
import { deflateRawSync, inflateRawSync } from 'node:zlib';

export interface ZipEntry {
  readonly name: string;
  /** 0 stored, 8 deflated; anything else is copied but cannot be read. */
  readonly method: number;
  readonly flags: number;
  readonly time: number;
  readonly date: number;
  readonly crc: number;
  readonly size: number;
  readonly versionMadeBy: number;
  readonly internalAttributes: number;
  readonly externalAttributes: number;
  /** The part's bytes as stored in the file (compressed when method is 8). */
  readonly raw: Uint8Array;
}

const LOCAL = 0x04034b50;
const CENTRAL = 0x02014b50;
const END = 0x06054b50;
const ZIP64_LOCATOR = 0x07064b50;
const ENCRYPTED = 0x1;
const DATA_DESCRIPTOR = 0x8;
const UTF8_NAMES = 0x800;

/** Throws an Error saying why the bytes are not a zip this module can rewrite. */
export function readZip(bytes: Uint8Array): ZipEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = findEnd(view);
  if (end >= 20 && view.getUint32(end - 20, true) === ZIP64_LOCATOR) throw new Error('it is a zip64 package');
  const count = view.getUint16(end + 10, true);
  let at = view.getUint32(end + 16, true);
  const entries: ZipEntry[] = [];
  for (let index = 0; index < count; index++) {
    if (at + 46 > bytes.length || view.getUint32(at, true) !== CENTRAL) throw new Error('its zip directory is damaged');
    const flags = view.getUint16(at + 8, true);
    const compressedSize = view.getUint32(at + 20, true);
    const nameLength = view.getUint16(at + 28, true);
    const extraLength = view.getUint16(at + 30, true);
    const commentLength = view.getUint16(at + 32, true);
    const localAt = view.getUint32(at + 42, true);
    const name = new TextDecoder().decode(bytes.subarray(at + 46, at + 46 + nameLength));
    if (flags & ENCRYPTED) throw new Error(`its part ${name} is encrypted`);
    if (compressedSize === 0xffffffff || localAt === 0xffffffff) throw new Error('it is a zip64 package');
    if (localAt + 30 > bytes.length || view.getUint32(localAt, true) !== LOCAL) throw new Error(`its part ${name} is damaged`);
    const dataAt = localAt + 30 + view.getUint16(localAt + 26, true) + view.getUint16(localAt + 28, true);
    if (dataAt + compressedSize > bytes.length) throw new Error(`its part ${name} is cut short`);
    entries.push({
      name,
      method: view.getUint16(at + 10, true),
      flags,
      time: view.getUint16(at + 12, true),
      date: view.getUint16(at + 14, true),
      crc: view.getUint32(at + 16, true),
      size: view.getUint32(at + 24, true),
      versionMadeBy: view.getUint16(at + 4, true),
      internalAttributes: view.getUint16(at + 36, true),
      externalAttributes: view.getUint32(at + 38, true),
      raw: bytes.subarray(dataAt, dataAt + compressedSize),
    });
    at += 46 + nameLength + extraLength + commentLength;
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

/** The part's content; throws when it is stored with a method other than deflate. */
export function entryBytes(entry: ZipEntry): Uint8Array {
  if (entry.method === 0) return entry.raw;
  if (entry.method === 8) return new Uint8Array(inflateRawSync(entry.raw));
  throw new Error(`its part ${entry.name} uses zip compression method ${entry.method}`);
}

export function entryText(entry: ZipEntry): string {
  return new TextDecoder().decode(entryBytes(entry));
}

/** A new entry holding `content`, deflated, taking the replaced entry's name and dates. */
export function replacedEntry(entry: Pick<ZipEntry, 'name' | 'time' | 'date' | 'versionMadeBy' | 'internalAttributes' | 'externalAttributes'>, content: Uint8Array | string): ZipEntry {
  const bytes = typeof content === 'string' ? new TextEncoder().encode(content) : content;
  return { ...entry, method: 8, flags: UTF8_NAMES, crc: crc32(bytes), size: bytes.length, raw: new Uint8Array(deflateRawSync(bytes)) };
}

/** The zip of `entries`, in their order, without data descriptors, extra fields or comments. */
export function writeZip(entries: readonly ZipEntry[]): Uint8Array {
  const names = entries.map((entry) => new TextEncoder().encode(entry.name));
  const localSize = entries.reduce((sum, entry, index) => sum + 30 + names[index].length + entry.raw.length, 0);
  const centralSize = entries.reduce((sum, _entry, index) => sum + 46 + names[index].length, 0);
  const out = new Uint8Array(localSize + centralSize + 22);
  const view = new DataView(out.buffer);
  const offsets: number[] = [];
  let at = 0;
  entries.forEach((entry, index) => {
    offsets.push(at);
    // Sizes and CRC go in the local header: the data descriptor a streaming writer used is dropped.
    const flags = (entry.flags & ~DATA_DESCRIPTOR) | UTF8_NAMES;
    view.setUint32(at, LOCAL, true);
    view.setUint16(at + 4, 20, true);
    view.setUint16(at + 6, flags, true);
    view.setUint16(at + 8, entry.method, true);
    view.setUint16(at + 10, entry.time, true);
    view.setUint16(at + 12, entry.date, true);
    view.setUint32(at + 14, entry.crc, true);
    view.setUint32(at + 18, entry.raw.length, true);
    view.setUint32(at + 22, entry.size, true);
    view.setUint16(at + 26, names[index].length, true);
    view.setUint16(at + 28, 0, true);
    out.set(names[index], at + 30);
    out.set(entry.raw, at + 30 + names[index].length);
    at += 30 + names[index].length + entry.raw.length;
  });
  const centralAt = at;
  entries.forEach((entry, index) => {
    view.setUint32(at, CENTRAL, true);
    view.setUint16(at + 4, entry.versionMadeBy, true);
    view.setUint16(at + 6, 20, true);
    view.setUint16(at + 8, (entry.flags & ~DATA_DESCRIPTOR) | UTF8_NAMES, true);
    view.setUint16(at + 10, entry.method, true);
    view.setUint16(at + 12, entry.time, true);
    view.setUint16(at + 14, entry.date, true);
    view.setUint32(at + 16, entry.crc, true);
    view.setUint32(at + 20, entry.raw.length, true);
    view.setUint32(at + 24, entry.size, true);
    view.setUint16(at + 28, names[index].length, true);
    view.setUint16(at + 36, entry.internalAttributes, true);
    view.setUint32(at + 38, entry.externalAttributes, true);
    view.setUint32(at + 42, offsets[index], true);
    out.set(names[index], at + 46);
    at += 46 + names[index].length;
  });
  view.setUint32(at, END, true);
  view.setUint16(at + 8, entries.length, true);
  view.setUint16(at + 10, entries.length, true);
  view.setUint32(at + 12, at - centralAt, true);
  view.setUint32(at + 16, centralAt, true);
  return out;
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

export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (let index = 0; index < bytes.length; index++) crc = CRC_TABLE[(crc ^ bytes[index]) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
