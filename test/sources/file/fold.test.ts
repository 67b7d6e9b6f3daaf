// Folding the journal into the file in a worker thread gives the very bytes folding on the main
// thread gives (POST, PATCH and DELETE on an .xlsx, .ods and .csv file); a worker that cannot
// start folds on the main thread; a fold that fails says why; the rows the server keeps hold no
// SheetJS cells (server/sources/file/model.ts, fold-runner.ts); and a .csv file folded a slice
// at a time is the file encodeWorkbook writes (fold-csv.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { readdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gridRows, handle } from '../../../lib/mod.ts';
import type { Workbook } from '../../../lib/workbook.ts';
import type { WritePlan } from '../../../lib/write-plan.ts';
import { decodeWorkbook, encodeWorkbook } from '../../../server/sources/file/codec.ts';
import type { FileFormat } from '../../../server/sources/file/format.ts';
import { fileIdentity, fingerprint } from '../../../server/durable/disk.ts';
import type { FoldJob, FoldResult } from '../../../server/sources/file/fold.ts';
import { formatCsvInSteps } from '../../../server/sources/file/csv/fold.ts';
import { runFold } from '../../../server/sources/file/fold-runner.ts';
import type { JournalEntry } from '../../../server/sources/file/journal.ts';
import { openFileSource } from '../../../server/sources/file/mod.ts';
import { rowsOnly } from '../../../server/sources/file/model.ts';
import { sourceCells } from '../../../server/sources/file/write-cells.ts';
import { readZip, replacedEntry, writeZip } from '../../../server/sources/file/zip.ts';
import { applyKeepingCells, expectationOf } from '../../../server/sources/file/rebase.ts';
import { bookBytes, bookOf, csvOf, tempFolder } from '../../helpers/file-source.ts';
import { loadSheetJs } from '../../../server/sources/file/xlsx/sheetjs.ts';
import { decodedOnTheMainThread } from '../../../server/sources/file/xlsx/stream-fold.ts';

// Decoding an .xlsx or .ods here, as the server does once it has opened one, needs SheetJS loaded.
await loadSheetJs();

// Files this small fold on the main thread unless told otherwise.
const WORKER = { inlineBelowBytes: 0 };
const INLINE = { inlineBelowBytes: Infinity };

const CELLS = [
  ['Name', 'Age', 'City'],
  ['Ann', 30, 'Lisbon'],
  ['Bob', 25, 'Porto'],
  ['Cy', 41, 'Oslo'],
];

const WRITES = [
  { method: 'POST', url: '/sheets/x', body: '{"Name":"Zoe","Age":52,"City":"Rome"}' },
  { method: 'PATCH', url: '/sheets/x/Name/Ann', body: '{"Age":31}' },
  { method: 'DELETE', url: '/sheets/x/Name/Bob' },
];

async function fileOf(dir: string, format: FileFormat): Promise<string> {
  const path = join(dir, `book.${format}`);
  if (format === 'csv') await writeFile(path, csvOf(CELLS));
  else await writeFile(path, bookBytes(bookOf([{ name: 'Sheet1', cells: CELLS.map((row) => row.map((cell) => (typeof cell === 'number' ? { t: 'n', v: cell } : { t: 's', v: cell }))) }]), format));
  return path;
}

/** The journal the server would hold after WRITES: each planned on the rows it keeps. */
function journalOf(workbook: Workbook): JournalEntry[] {
  const entries: JournalEntry[] = [];
  let current = workbook;
  for (const write of WRITES) {
    const result = handle(current, { ...write, headers: { 'Content-Type': 'application/json' } });
    assert.ok(result.status < 300 && result.plan !== null, `${write.method} ${write.url}: ${result.body}`);
    entries.push({ plan: result.plan, expected: expectationOf(current, result.plan) });
    current = result.workbook;
  }
  return entries;
}

async function jobFor(path: string, format: FileFormat): Promise<FoldJob> {
  const bytes = await readFile(path);
  const rows = rowsOnly(decodeWorkbook(bytes, format, 'book').workbook, format);
  return { path, expected: fingerprint(bytes), format, tabName: 'book', entries: journalOf(rows) };
}

/**
 * The bytes of the temp file a fold wrote beside the file (fold-runner.ts), which is then
 * removed; the identity the fold gave is that file's.
 */
async function writtenBy(result: FoldResult): Promise<Uint8Array> {
  assert.equal(result.kind, 'folded');
  if (result.kind !== 'folded') throw new Error('not folded');
  assert.equal(await fileIdentity(result.temp), result.identity);
  const bytes = new Uint8Array(await readFile(result.temp));
  await unlink(result.temp);
  return bytes;
}

for (const format of ['xlsx', 'ods', 'csv'] as const) {
  test(`${format}: a fold in a worker writes the bytes an inline fold writes`, async () => {
    const folder = await tempFolder();
    try {
      const job = await jobFor(await fileOf(folder.dir, format), format);
      const inWorker = await runFold(job, WORKER);
      const inline = await runFold(job, INLINE);
      assert.equal(inWorker.ranIn, 'worker');
      assert.equal(inline.ranIn, 'main thread');
      const workerBytes = await writtenBy(inWorker.result);
      const inlineBytes = await writtenBy(inline.result);
      assert.deepEqual(workerBytes, inlineBytes);
      // The worker's spool file (its deflated sheet, fold.ts) is gone with the fold.
      assert.deepEqual(await readdir(folder.dir), [`book.${format}`]);
      assert.equal(inWorker.result.kind === 'folded' && inWorker.result.fingerprint, fingerprint(workerBytes));
      // And the writes are in it.
      const folded = decodeWorkbook(workerBytes, format, 'book').workbook.tabs[0].rows.map((row) => row.text.slice(0, 3));
      assert.deepEqual(folded, [['Name', 'Age', 'City'], ['Ann', '31', 'Lisbon'], ['Cy', '41', 'Oslo'], ['Zoe', '52', 'Rome']]);
    } finally {
      await folder.cleanup();
    }
  });
}

test('xlsx: a package with a big part (over 256 KiB) has its few rows decoded in the worker, which loads SheetJS: the bytes an inline fold writes', async () => {
  const folder = await tempFolder();
  try {
    const path = await fileOf(folder.dir, 'xlsx');
    // A stored part of 300 KiB rides along in the package cut down for SheetJS (fold-worker.ts).
    const big = new Uint8Array(300 * 1024).fill(0x20);
    await writeFile(path, writeZip([...readZip(await readFile(path)), replacedEntry({ name: 'xl/media/padding.bin' }, big, 0)]));
    const job = await jobFor(path, 'xlsx');
    // The package cut down for SheetJS holds every part but the worksheets: this one stays in the worker.
    assert.equal(decodedOnTheMainThread(await readFile(path)), false);
    assert.equal(decodedOnTheMainThread(bookBytes(bookOf([{ name: 'Sheet1', cells: [[{ t: 's', v: 'Name' }]] }]), 'xlsx')), true);
    const inWorker = await runFold(job, WORKER);
    assert.equal(inWorker.ranIn, 'worker');
    const workerBytes = await writtenBy(inWorker.result);
    assert.deepEqual(workerBytes, await writtenBy((await runFold(job, INLINE)).result));
    const folded = decodeWorkbook(workerBytes, 'xlsx', 'book').workbook.tabs[0].rows.map((row) => row.text.slice(0, 3));
    assert.deepEqual(folded, [['Name', 'Age', 'City'], ['Ann', '31', 'Lisbon'], ['Cy', '41', 'Oslo'], ['Zoe', '52', 'Rome']]);
  } finally {
    await folder.cleanup();
  }
});

test('a worker that cannot start: the fold runs on the main thread', async () => {
  const folder = await tempFolder();
  try {
    const job = await jobFor(await fileOf(folder.dir, 'xlsx'), 'xlsx');
    const expected = await runFold(job, INLINE);
    const fallback = await runFold(job, { ...WORKER, workerModule: new URL('./no-such-fold-worker.ts', import.meta.url) });
    assert.equal(fallback.ranIn, 'main thread');
    assert.deepEqual(await writtenBy(fallback.result), await writtenBy(expected.result));
  } finally {
    await folder.cleanup();
  }
});

test('a worker that dies part way through writing fails the fold and leaves no temp file: the file and the journal stay as they were', async () => {
  const folder = await tempFolder();
  try {
    const path = await fileOf(folder.dir, 'xlsx');
    const before = await readFile(path);
    const job = await jobFor(path, 'xlsx');
    await assert.rejects(runFold(job, { ...WORKER, workerModule: new URL('../../helpers/torn-fold-worker.js', import.meta.url) }), /out of memory/);
    assert.deepEqual(await readdir(folder.dir), ['book.xlsx']);
    assert.deepEqual(await readFile(path), before);
    // And through the file source: the writes stay journaled, the file untouched, and the next fold takes them.
    const source = await openFileSource({ path, stateDir: join(folder.dir, 'state'), foldAfterMs: Infinity, fold: { ...WORKER, workerModule: new URL('../../helpers/torn-fold-worker.js', import.meta.url) }, log: () => undefined });
    await source.write((workbook) => {
      const result = handle(workbook, { method: 'POST', url: '/sheets/x', body: '{"Name":"Zoe"}', headers: { 'Content-Type': 'application/json' } });
      return { plan: result.plan, workbook: result.workbook, result: result.status };
    });
    await assert.rejects(source.close(), /could not be folded into the file \(the worker ran out of memory\)/);
    assert.deepEqual(await readFile(path), before);
    assert.deepEqual((await readdir(folder.dir)).sort(), ['book.xlsx', 'state']);
    const reopened = await openFileSource({ path, stateDir: join(folder.dir, 'state'), foldAfterMs: Infinity, fold: WORKER, log: () => undefined });
    await reopened.close();
    const rows = decodeWorkbook(await readFile(path), 'xlsx', 'book').workbook.tabs[0].rows.map((row) => row.text[0]);
    assert.deepEqual(rows, ['Name', 'Ann', 'Bob', 'Cy', 'Zoe']);
  } finally {
    await folder.cleanup();
  }
});

test('a fold that cannot decode the file rejects with the reason, in a worker or not', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'book.xlsx');
    await writeFile(path, 'not a workbook');
    const job: FoldJob = { path, expected: fingerprint('not a workbook'), format: 'xlsx', tabName: 'book', entries: [] };
    await assert.rejects(runFold(job, WORKER), /zip-packaged/);
    await assert.rejects(runFold(job, INLINE), /zip-packaged/);
    // And it leaves no temp file beside the file.
    assert.deepEqual(await readdir(folder.dir), ['book.xlsx']);
  } finally {
    await folder.cleanup();
  }
});

test('a small file folds on the main thread by default', async () => {
  const folder = await tempFolder();
  try {
    const job = await jobFor(await fileOf(folder.dir, 'csv'), 'csv');
    assert.equal((await runFold(job)).ranIn, 'main thread');
  } finally {
    await folder.cleanup();
  }
});

test('a file that is not the one the journal was planned on is not folded', async () => {
  const folder = await tempFolder();
  try {
    const job = { ...(await jobFor(await fileOf(folder.dir, 'csv'), 'csv')), expected: fingerprint('an earlier version') };
    assert.deepEqual((await runFold(job, WORKER)).result, { kind: 'changed' });
    assert.deepEqual((await runFold(job, INLINE)).result, { kind: 'changed' });
  } finally {
    await folder.cleanup();
  }
});

test('the rows the server keeps hold no source cells, and read the same', async (t) => {
  const folder = await tempFolder();
  try {
    for (const format of ['xlsx', 'ods'] as const) {
      await t.test(format, async () => {
        const decoded = decodeWorkbook(await readFile(await fileOf(folder.dir, format)), format, 'book').workbook;
        const kept = rowsOnly(decoded, format);
        // An .ods row carries its cells' XML for the in-place writer; an .xlsx row carries nothing
        // (its writer reads the sheet's XML itself).
        assert.ok(decoded.tabs[0].rows.every((row) => sourceCells.has(row) === (format === 'ods')), 'the decoder gives each .ods row its cells');
        assert.ok(kept.tabs[0].rows.every((row) => !sourceCells.has(row)));
        for (const url of ['/sheets/x', '/sheets/x?_raw=1', '/sheets/x/City/oslo']) {
          assert.equal(handle(kept, { method: 'GET', url }).body, handle(decoded, { method: 'GET', url }).body, url);
        }
      });
    }
  } finally {
    await folder.cleanup();
  }
});

test('the file source folds in a worker: writes reach the file, formats kept', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'book.xlsx');
    const money = { t: 'n', v: 10, z: '$#,##0.00' } as const;
    await writeFile(path, bookBytes(bookOf([{ name: 'S', cells: [[{ t: 's', v: 'Name' }, { t: 's', v: 'Price' }], [{ t: 's', v: 'Ann' }, money], [{ t: 's', v: 'Bob' }, money]] }]), 'xlsx'));
    const source = await openFileSource({ path, stateDir: join(folder.dir, 'state'), foldAfterMs: Infinity, fold: WORKER, log: () => undefined });
    for (const write of [{ method: 'PATCH', url: '/sheets/x/Name/Ann', body: '{"Name":"Annie"}' }, { method: 'POST', url: '/sheets/x', body: '{"Name":"Cy","Price":"3"}' }]) {
      await source.write((workbook) => {
        const result = handle(workbook, { ...write, headers: { 'Content-Type': 'application/json' } });
        return { plan: result.plan, workbook: result.workbook, result: result.status };
      });
    }
    await source.close();
    const rows = decodeWorkbook(await readFile(path), 'xlsx', 'book').workbook.tabs[0].rows.map((row) => row.text);
    // The new row's price takes the money style of the cell above it (the in-place writer).
    assert.deepEqual(rows, [['Name', 'Price'], ['Annie', '$10.00'], ['Bob', '$10.00'], ['Cy', '$3.00']]);
  } finally {
    await folder.cleanup();
  }
});

test('csv: the fold a slice at a time writes the bytes encodeWorkbook writes', async (t) => {
  const files = [
    'Name,Note\r\nAnn,"a, b"\r\nBob,=SUM(A1)\r\n',
    '\uFEFFName,Note\nAnn,\'=1+2\nBob,"say ""hi"""',
    'Name,Note\n',
    'Name,Note\nAnn,x\nBob,y\nCy,z\nDi,w\n',
  ];
  for (const file of files) {
    await t.test(JSON.stringify(file), async () => {
      const decoded = decodeWorkbook(new TextEncoder().encode(file), 'csv', 'book');
      let workbook = decoded.workbook;
      const plans = [];
      for (const write of [...WRITES, { method: 'PATCH', url: '/sheets/x/Name/Cy', body: '{"Note":"=HYPERLINK(1)"}' }]) {
        const result = handle(workbook, { ...write, url: write.url.replace('Age', 'Note'), headers: { 'Content-Type': 'application/json' } });
        if (result.plan === null) continue;
        plans.push(result.plan);
        workbook = applyKeepingCells(workbook, result.plan);
      }
      const expected = encodeWorkbook(workbook, decoded, plans).bytes;
      for (const step of [1, 2, 10_000]) {
        const { pieces, fingerprint: print } = await formatCsvInSteps(workbook.tabs[0].rows, decoded.csvStyle, step);
        // Bytes, not text: a decoder would drop the byte order mark.
        assert.equal(Buffer.concat(pieces).toString('latin1'), Buffer.from(expected).toString('latin1'), `${step} rows per step`);
        assert.equal(print, fingerprint(expected));
      }
    });
  }
});

test('csv: folds of a 3,000-row file after writes reuse the lines of the chunks they share, and write the bytes encodeWorkbook writes', async () => {
  const lines = ['Name,Note'];
  for (let i = 0; i < 3000; i++) lines.push(`n${i},"x, ${i}"`);
  for (const [lineEnding, finalNewline] of [['\n', true], ['\r\n', false]] as const) {
    const file = lines.join(lineEnding) + (finalNewline ? lineEnding : '');
    const decoded = decodeWorkbook(new TextEncoder().encode(file), 'csv', 'book');
    let workbook = decoded.workbook;
    const plans: WritePlan[] = [];
    let first: Uint8Array | undefined;
    const folded = async (): Promise<string> => {
      const { pieces, fingerprint: print } = await formatCsvInSteps(gridRows(workbook.tabs[0]), decoded.csvStyle);
      const expected = encodeWorkbook(workbook, decoded, plans).bytes;
      assert.equal(print, fingerprint(expected));
      // The first chunk (rows 0-1023) is only written to by the DELETE: until then its lines are the first fold's.
      if (first !== undefined && plans.length < 3) assert.equal(pieces[0], first, 'the first chunk is not encoded again');
      first ??= pieces[0];
      return Buffer.concat(pieces).toString('latin1');
    };
    assert.equal(await folded(), file);
    for (const write of [
      { method: 'POST', url: '/sheets/x', body: '{"Name":"new","Note":"a\\"b"}' },
      { method: 'PATCH', url: '/sheets/x/1500', body: '{"Note":"patched"}' },
      { method: 'DELETE', url: '/sheets/x/3' },
    ]) {
      const result = handle(workbook, { ...write, headers: { 'Content-Type': 'application/json' } });
      assert.ok(result.plan !== null, result.body);
      plans.push(result.plan);
      workbook = applyKeepingCells(workbook, result.plan);
      assert.equal(await folded(), Buffer.from(encodeWorkbook(workbook, decoded, plans).bytes).toString('latin1'), `${lineEnding === '\n' ? 'LF' : 'CRLF'} after ${write.method}`);
    }
  }
});
