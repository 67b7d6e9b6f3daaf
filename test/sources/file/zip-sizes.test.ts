// A zip part that lies about its size (issue 24, part 12): a `sheet1.xml` declaring 1,000 bytes
// that inflated to 2 GiB gave an empty tab after 8.8 s. Inflating stops at the declared size,
// on every path that unpacks (zip.ts, and the package SheetJS reads, xlsx/read-cells.ts), and
// the file is refused naming the part: at start, and on an outside save (the last good rows are
// served meanwhile). A part declaring more than it holds is refused too.
import assert from 'node:assert/strict';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { inflateRawSync } from 'node:zlib';
import { decodeWorkbook } from '../../../server/sources/file/codec.ts';
import { openFileSource } from '../../../server/sources/file/mod.ts';
import { loadSheetJs } from '../../../server/sources/file/xlsx/sheetjs.ts';
import { PartSizeMismatch, readZip, unpackEntry } from '../../../server/sources/file/zip.ts';
import { recordingLog, tempFolder } from '../../helpers/file-source.ts';
import { odsPackage } from '../../helpers/make-ods-fixtures.ts';
import { plainBook } from '../../helpers/make-xlsx-corpus.ts';
import { withLyingPart, zerosDeflated } from '../../helpers/zip-bomb.ts';

await loadSheetJs();

const SHEET = 'xl/worksheets/sheet1.xml';
const GOOD = plainBook('<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c></row><row r="2"><c r="A2" t="inlineStr"><is><t>Ann</t></is></c></row></sheetData></worksheet>');
/** 2 GiB of zeros in about 2 MB of deflate, declaring 1,000 bytes. */
const BOMB = withLyingPart(GOOD, SHEET, 1000, { deflated: zerosDeflated(2048) });
/** A sheet part declaring 1,000,000 bytes that holds a few hundred. */
const SHORT = withLyingPart(GOOD, SHEET, 1_000_000, { text: '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData/></worksheet>' });
const MORE_THAN_DECLARED = /its part xl\/worksheets\/sheet1\.xml unpacks to more than the 1,000 bytes it declares/;
const FEWER_THAN_DECLARED = /its part xl\/worksheets\/sheet1\.xml unpacks to \d+ bytes, not the 1,000,000 bytes it declares/;

/** A generous sanity bound, not a speed target: the refusal took 8.8 s when every byte was inflated. */
const WELL_UNDER_SECONDS = 3;

function timed<T>(run: () => T): { result: T; seconds: number } {
  const start = performance.now();
  const result = run();
  return { result, seconds: (performance.now() - start) / 1000 };
}

test('the crafted part really inflates past 2 GiB (a small sample of it: 4 MiB)', () => {
  assert.equal(inflateRawSync(zerosDeflated(4)).length, 4 * 1_048_576);
  assert.ok(BOMB.length < 4_000_000, `${BOMB.length} bytes`);
});

test('a part inflating past its declared size is refused at that size, named', () => {
  const entry = readZip(BOMB).find((candidate) => candidate.name === SHEET)!;
  const { seconds } = timed(() => assert.throws(() => unpackEntry(entry), (error) => error instanceof PartSizeMismatch && MORE_THAN_DECLARED.test(error.message)));
  assert.ok(seconds < WELL_UNDER_SECONDS, `${seconds} s`);
});

test('decoding: the .xlsx is refused with the part named, before SheetJS inflates anything', async (t) => {
  await t.test('declared 1,000 bytes, inflating to 2 GiB', () => {
    const { seconds } = timed(() => assert.throws(() => decodeWorkbook(BOMB, 'xlsx', 'Data'), MORE_THAN_DECLARED));
    t.diagnostic(`refused in ${(seconds * 1000).toFixed(1)} ms`);
    assert.ok(seconds < WELL_UNDER_SECONDS, `${seconds} s`);
  });
  await t.test('declared 1,000,000 bytes, holding fewer', () => assert.throws(() => decodeWorkbook(SHORT, 'xlsx', 'Data'), FEWER_THAN_DECLARED));
  await t.test('an honest package still reads', () => assert.deepEqual(decodeWorkbook(GOOD, 'xlsx', 'Data').workbook.tabs[0].rows.map((row) => row.text), [['Name'], ['Ann']]));
  await t.test('an .ods content.xml that lies is refused the same way', () => {
    const ods = withLyingPart(odsPackage('<x/>'), 'content.xml', 1000, { deflated: zerosDeflated(64) });
    assert.throws(() => decodeWorkbook(ods, 'ods', 'Data'), /its part content\.xml unpacks to more than the 1,000 bytes it declares/);
  });
});

test('at start: the error names the file and the part', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'bomb.xlsx');
    await writeFile(path, BOMB);
    const start = performance.now();
    await assert.rejects(openFileSource({ path, log: recordingLog().log }), (error: Error) => error.message.includes(path) && MORE_THAN_DECLARED.test(error.message));
    assert.ok(performance.now() - start < WELL_UNDER_SECONDS * 1000);
  } finally {
    await folder.cleanup();
  }
});

test('an outside save bringing such a file: the last good rows are served, the log names the file and the part', async () => {
  const folder = await tempFolder();
  const path = join(folder.dir, 'book.xlsx');
  await writeFile(path, GOOD);
  const recording = recordingLog();
  const source = await openFileSource({ path, log: recording.log });
  try {
    for (const [name, bytes, message] of [['bomb', BOMB, MORE_THAN_DECLARED], ['short', SHORT, FEWER_THAN_DECLARED]] as const) {
      await writeFile(`${path}.other`, bytes);
      await rename(`${path}.other`, path);
      const rows = (await source.read({ fresh: true })).tabs[0].rows.map((row) => row.text);
      assert.deepEqual(rows, [['Name'], ['Ann']], `${name}: the last good rows`);
      const said = recording.messages.find((line) => line.includes('cannot be read') && message.test(line));
      assert.ok(said?.includes(path), `${name}: logged with the path: ${recording.messages.join('\n')}`);
    }
  } finally {
    await source.close();
    await folder.cleanup();
  }
});
