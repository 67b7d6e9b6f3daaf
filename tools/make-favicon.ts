// Writes server/dashboard/favicon.ico: the icon of favicon.svg (a blue rounded square with a
// white table: a header row, two rows, a first column) drawn as 32x32 pixels, stored as one PNG
// inside an ICO (browsers that ask for /favicon.ico read either). Run once after changing the
// drawing: `node tools/make-favicon.ts`; the file is committed, nothing runs at start.
import { writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';

const SIZE = 32;
const BLUE = [0x1d, 0x4e, 0xd8, 255];
const WHITE = [255, 255, 255, 255];
const CLEAR = [0, 0, 0, 0];

/** The pixel at (x, y): the shapes of favicon.svg, its 2-unit lines as 2 pixels. */
function pixel(x: number, y: number): number[] {
  const radius = 7;
  const cx = Math.min(Math.max(x + 0.5, radius), SIZE - radius);
  const cy = Math.min(Math.max(y + 0.5, radius), SIZE - radius);
  if ((x + 0.5 - cx) ** 2 + (y + 0.5 - cy) ** 2 > radius ** 2) return CLEAR;
  const inside = x >= 6 && x <= 25 && y >= 7 && y <= 24;
  const line = (at: number, v: number) => v === at || v === at + 1;
  const border = inside && (line(6, x) || line(24, x) || line(7, y) || line(23, y));
  const rows = inside && (line(12, y) || line(17, y));
  const column = inside && line(12, x);
  return border || rows || column ? WHITE : BLUE;
}

function crc32(bytes: Uint8Array): number {
  let crc = -1;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return (crc ^ -1) >>> 0;
}

function chunk(type: string, data: Uint8Array): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

function png(): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(SIZE, 0);
  header.writeUInt32BE(SIZE, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits, RGBA, deflate, no filter method, no interlace
  const raw = Buffer.alloc(SIZE * (SIZE * 4 + 1));
  for (let y = 0; y < SIZE; y++) {
    raw[y * (SIZE * 4 + 1)] = 0; // filter: none
    for (let x = 0; x < SIZE; x++) raw.set(pixel(x, y), y * (SIZE * 4 + 1) + 1 + x * 4);
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(raw, { level: 9 })), chunk('IEND', new Uint8Array())]);
}

const image = png();
const directory = Buffer.alloc(6 + 16);
directory.writeUInt16LE(0, 0); // reserved
directory.writeUInt16LE(1, 2); // an icon
directory.writeUInt16LE(1, 4); // one image
directory.writeUInt8(SIZE, 6);
directory.writeUInt8(SIZE, 7);
directory.writeUInt16LE(1, 10); // planes
directory.writeUInt16LE(32, 12); // bits per pixel
directory.writeUInt32LE(image.length, 14);
directory.writeUInt32LE(22, 18); // where the image starts
writeFileSync(new URL('../server/dashboard/favicon.ico', import.meta.url), Buffer.concat([directory, image]));
