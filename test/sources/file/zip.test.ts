// The one zip reader and writer behind .xlsx and .ods folds (server/sources/file/zip.ts): parts
// not replaced keep their compressed bytes, CRC, stamp and attributes; a stored first
// `mimetype` stays first and stored; a part unpacking past the limit or its declared size is refused (a zip bomb),
// on the .xlsx side too; and what cannot be read says why ("its part a.xml is encrypted").
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deflateRawSync } from 'node:zlib';
import * as XLSX from '@e965/xlsx';
import { decodeWorkbook } from '../../../server/sources/file/codec.ts';
import { decodeOds, encodeOds } from '../../../server/sources/file/ods/write.ts';
import { readPackage } from '../../../server/sources/file/xlsx/package.ts';
import { crc32, entryText, PartSizeMismatch, PartTooLarge, readZip, replacedEntry, unpackEntry, writeZip, type ZipEntry } from '../../../server/sources/file/zip.ts';
import { odsPackage } from '../../helpers/make-ods-fixtures.ts';
import { plainBook } from '../../helpers/make-xlsx-corpus.ts';
import { loadSheetJs } from '../../../server/sources/file/xlsx/sheetjs.ts';

// Decoding an .xlsx or .ods here, as the server does once it has opened one, needs SheetJS loaded.
await loadSheetJs();

/** A part as an outside writer left it: a Unix mode, a stamp, deflate hints and a data descriptor. */
const UNIX_PART = { flags: 0x8 | 0x2, time: 0x6b5d, date: 0x5a2e, versionMadeBy: 0x031e, internalAttributes: 1, externalAttributes: 0o100644 * 0x10000 };

function withEntry(bytes: Uint8Array, name: string, change: (entry: ZipEntry) => ZipEntry): Uint8Array {
  return writeZip(readZip(bytes).map((entry) => (entry.name === name ? change(entry) : entry)));
}

/** Where the central directory starts, from the end record. */
function directoryAt(bytes: Uint8Array): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return view.getUint32(bytes.length - 6, true);
}

test('zip: a part replaced, the others copied with their compressed bytes and CRC', () => {
  const book = XLSX.utils.book_new();
  XLSX.utils.book_append_sheet(book, XLSX.utils.aoa_to_sheet([['a', 1]]), 'S');
  const bytes = new Uint8Array(XLSX.write(book, { type: 'array', bookType: 'xlsx', compression: true }) as ArrayBuffer);
  const entries = readZip(bytes);
  const sheet = entries.findIndex((entry) => entry.name === 'xl/worksheets/sheet1.xml');
  const next = writeZip(entries.map((entry, index) => (index === sheet ? replacedEntry(entry, entryText(entry).replace('<v>1</v>', '<v>2</v>')) : entry)));
  const reread = readZip(next);
  assert.deepEqual(reread.map((entry) => entry.name), entries.map((entry) => entry.name));
  reread.forEach((entry, index) => {
    if (index === sheet) return;
    assert.deepEqual(entry.raw, entries[index].raw, entry.name);
    assert.equal(entry.crc, crc32(unpackEntry(entry)), `${entry.name} CRC`);
  });
  assert.equal(XLSX.read(next, { type: 'array' }).Sheets.S.B1.v, 2, 'SheetJS reads the new part');
});

test('zip: every field of a copied part is kept but the data descriptor flag; a replaced part keeps its stamp', async (t) => {
  const original = writeZip([
    { ...replacedEntry({ name: 'kept.xml' }, '<a/>'), ...UNIX_PART },
    { ...replacedEntry({ name: 'new.xml' }, '<old/>'), ...UNIX_PART },
    { ...replacedEntry({ name: 'données.xml' }, '<b/>'), flags: 0 },
  ]);
  const [kept, old, accented] = readZip(original);
  const [keptAgain, replaced, accentedAgain] = readZip(writeZip([kept, replacedEntry(old, '<new/>'), accented]));
  const cases: [string, unknown, unknown][] = [
    ['copied: everything but the raw bytes', { ...keptAgain, raw: null }, { ...kept, raw: null, flags: 0x2 }],
    ['copied: the compressed bytes', keptAgain.raw, kept.raw],
    ['replaced: content', entryText(replaced), '<new/>'],
    ['replaced: CRC of the new content', replaced.crc, crc32(new TextEncoder().encode('<new/>'))],
    ['replaced: stamp and attributes of the old part', [replaced.time, replaced.date, replaced.versionMadeBy, replaced.internalAttributes, replaced.externalAttributes], [UNIX_PART.time, UNIX_PART.date, UNIX_PART.versionMadeBy, UNIX_PART.internalAttributes, UNIX_PART.externalAttributes]],
    ['replaced: no packing hints carried over', replaced.flags, 0],
    ['a name that is not ASCII is flagged UTF-8', [accentedAgain.name, accentedAgain.flags], ['données.xml', 0x800]],
  ];
  for (const [name, actual, expected] of cases) await t.test(name, () => assert.deepEqual(actual, expected));
});

test('zip: a stored first mimetype stays first and stored, its text at byte 38', async (t) => {
  const mimetype = 'application/vnd.oasis.opendocument.spreadsheet';
  const entries = readZip(odsPackage('<x/>'));
  const next = writeZip(entries.map((entry) => (entry.name === 'content.xml' ? replacedEntry(entry, '<y/>') : entry)));
  const cases: [string, unknown, unknown][] = [
    ['first entry', readZip(next)[0].name, 'mimetype'],
    ['stored', readZip(next)[0].method, 0],
    ['bytes 30 to 38 name it', new TextDecoder().decode(next.subarray(30, 38)), 'mimetype'],
    ['its content follows, uncompressed', new TextDecoder().decode(next.subarray(38, 38 + mimetype.length)), mimetype],
    ['content.xml replaced', entryText(readZip(next).find((entry) => entry.name === 'content.xml')!), '<y/>'],
  ];
  for (const [name, actual, expected] of cases) await t.test(name, () => assert.deepEqual(actual, expected));
});

test('zip: an .ods fold puts a deflated mimetype first and stored and keeps every part\'s attributes', () => {
  const content = '<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:spreadsheet><table:table table:name="T"><table:table-row><table:table-cell office:value-type="string"><text:p>a</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>';
  const entries = readZip(odsPackage(content)).map((entry) => ({ ...entry, ...UNIX_PART }));
  // A careless writer: mimetype deflated and last.
  const mimetype = entries.shift()!;
  entries.push(replacedEntry(mimetype, unpackEntry(mimetype)));
  const { tabs, ods } = decodeOds(writeZip(entries));
  const folded = readZip(encodeOds({ tabs }, new Map(tabs.map((tab) => [tab.name, tab.rows])), ods).bytes);
  assert.deepEqual(folded.map((entry) => [entry.name, entry.method === 0]), [['mimetype', true], ...entries.slice(0, -1).map((entry) => [entry.name, entry.method === 0])]);
  for (const entry of folded) {
    assert.deepEqual([entry.time, entry.date, entry.versionMadeBy, entry.internalAttributes, entry.externalAttributes], [UNIX_PART.time, UNIX_PART.date, UNIX_PART.versionMadeBy, UNIX_PART.internalAttributes, UNIX_PART.externalAttributes], entry.name);
  }
});

test('zip: a part unpacking past the limit is refused, whatever size it declares', async (t) => {
  const zeros = new Uint8Array(64 * 1024);
  const bomb = { ...replacedEntry({ name: 'bomb.xml' }, zeros), size: 10 };
  const cases: [string, () => unknown][] = [
    ['declared past the limit', () => unpackEntry({ ...bomb, size: 2048 }, 1024)],
    ['stored past the limit', () => unpackEntry(replacedEntry({ name: 'bomb.xml' }, zeros, 0), 1024)],
  ];
  for (const [name, unpack] of cases) {
    await t.test(name, () => assert.throws(unpack, (error) => error instanceof PartTooLarge && /its part bomb\.xml unpacks to more than 1,024 bytes/.test(error.message)));
  }
  // Inflating stops at the declared size, below the limit (zip-sizes.test.ts has the 2 GiB case).
  for (const [name, unpack] of [['declared small, inflating past it', () => unpackEntry(bomb, 1024)], ['as text', () => entryText(bomb, 1024)]] as const) {
    await t.test(name, () => assert.throws(unpack, (error) => error instanceof PartSizeMismatch && /its part bomb\.xml unpacks to more than the 10 bytes it declares/.test(error.message)));
  }
  await t.test('within the limit', () => assert.equal(unpackEntry({ ...bomb, size: zeros.length }, zeros.length).length, zeros.length));
  await t.test('.xlsx: a workbook part declaring more than 500 MiB makes the package one sheetrest will not rewrite', () => {
    const bytes = withEntry(plainBook('<worksheet/>'), 'xl/workbook.xml', (entry) => ({ ...entry, size: 600 * 1_048_576 }));
    assert.throws(() => readPackage(bytes), /its part xl\/workbook\.xml unpacks to more than 500 MiB/);
  });
  await t.test('.xlsx: a sheet declaring more than 500 MiB is refused at open, before SheetJS unpacks it', () => {
    const bytes = withEntry(plainBook('<worksheet/>'), 'xl/worksheets/sheet1.xml', (entry) => ({ ...entry, size: 600 * 1_048_576 }));
    assert.throws(() => decodeWorkbook(bytes, 'xlsx', 'book'), /its part xl\/worksheets\/sheet1\.xml unpacks to 600 MiB, more than the 500 MiB a part may hold/);
  });
});

test('zip: what cannot be read is named', async (t) => {
  const one = () => writeZip([replacedEntry({ name: 'a.xml' }, '<a/>')]);
  const patched = (change: (view: DataView, bytes: Uint8Array) => void) => {
    const bytes = one();
    change(new DataView(bytes.buffer), bytes);
    return bytes;
  };
  const cases: [string, Uint8Array, RegExp][] = [
    ['not a zip', new TextEncoder().encode('Name,Age\n'), /it is not a zip package/],
    ['directory offset past the end', patched((view, bytes) => view.setUint32(bytes.length - 6, 999_999, true)), /its zip directory is damaged/],
    ['ZIP64 directory offset', patched((view, bytes) => view.setUint32(bytes.length - 6, 0xffffffff, true)), /zip64/],
    ['ZIP64 part size', patched((view, bytes) => view.setUint32(directoryAt(bytes) + 24, 0xffffffff, true)), /zip64/],
    ['encrypted part', patched((view, bytes) => view.setUint16(directoryAt(bytes) + 8, 1, true)), /its part a\.xml is encrypted/],
    ['local header missing', patched((view, bytes) => view.setUint32(directoryAt(bytes) + 42, 7, true)), /its part a\.xml is damaged/],
    ['part cut short', patched((view, bytes) => view.setUint32(directoryAt(bytes) + 20, 999_999, true)), /its part a\.xml is cut short/],
  ];
  for (const [name, bytes, message] of cases) await t.test(name, () => assert.throws(() => readZip(bytes), message));
});

test('zip: a part packed some other way is copied but not unpacked, and an .ods holding one is refused at open', async (t) => {
  const bzip = { ...replacedEntry({ name: 'a.xml' }, '<a/>'), method: 12 };
  const [copied] = readZip(writeZip([bzip]));
  await t.test('copied', () => assert.deepEqual([copied.method, copied.raw], [12, bzip.raw]));
  await t.test('not unpacked', () => assert.throws(() => unpackEntry(copied), /its part a\.xml uses zip compression method 12/));
  await t.test('.ods refused', () => {
    const odd = writeZip([...readZip(odsPackage('<x/>')), { ...bzip, name: 'Thumbnails/thumbnail.png' }]);
    assert.throws(() => decodeOds(odd), /its part Thumbnails\/thumbnail\.png uses zip compression method 12/);
  });
});

test('zip: CRC-32 of the standard check string, and of deflated parts', async (t) => {
  const cases: [string, Uint8Array, number][] = [
    ['123456789', new TextEncoder().encode('123456789'), 0xcbf43926],
    ['empty', new Uint8Array(0), 0],
  ];
  for (const [name, bytes, crc] of cases) await t.test(name, () => assert.equal(crc32(bytes), crc));
  await t.test('a replaced part inflates back to what was given', () => {
    const text = 'x'.repeat(1000);
    const entry = replacedEntry({ name: 'a' }, text);
    assert.deepEqual(entry.raw, new Uint8Array(deflateRawSync(new TextEncoder().encode(text))));
    assert.equal(entryText(entry), text);
  });
});
