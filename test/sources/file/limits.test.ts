// What a file format cannot store is refused before it is journaled (a 1 MB cell posted to an
// .xlsx connection answers 400 and writes nothing; to a .csv connection it is stored), and a
// fold that keeps failing backs off, is logged once, and makes close() say what it left.
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { test } from 'node:test';
import { isApiError } from '../../../lib/errors.ts';
import type { Workbook } from '../../../lib/workbook.ts';
import { configForFile } from '../../../server/config/config.ts';
import { fingerprint } from '../../../server/durable/disk.ts';
import { journalLine } from '../../../server/sources/file/journal.ts';
import { FORMAT_LIMITS, refuseUnstorable } from '../../../server/sources/file/limits.ts';
import { openFileSource, type FileFormat } from '../../../server/sources/file/mod.ts';
import { recordingLog, stateFiles, tempFolder, writeFixture } from '../../helpers/file-source.ts';
import { plainBook } from '../../helpers/make-xlsx-corpus.ts';
import { postJson, spawnServer, startServer, tempDir, within, writeXlsx } from '../../helpers/http.ts';
import { CONTRACT_FIXTURE, appendPlan, dataOf, planned, row } from '../../helpers/source-contract.ts';

const MEGABYTE_TEXT = 'x'.repeat(999_990) + 'end-marker';

function names(workbook: Workbook): string[] {
  return dataOf(workbook).map(([text]) => text[0]);
}

/** The fingerprints of the workbooks and journals in `dir` (the quota file counts requests, so it is left out). */
async function snapshot(dir: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const name of await readdir(dir, { recursive: true })) {
    if (!/\.(xlsx|csv|journal)$/.test(name)) continue;
    files.set(name, fingerprint(await readFile(join(dir, name))));
  }
  return files;
}

test('a 1 MB cell over HTTP: 400 on .xlsx with nothing written, stored exactly on .csv', async (t) => {
  const dir = await tempDir(t);
  const xlsx = dir.path('book.xlsx');
  await writeXlsx(xlsx, 'People', [['Name', 'Note'], ['Ann', 'short']]);
  const csv = dir.path('notes.csv');
  await writeFile(csv, 'Name,Note\r\nAnn,short\r\n');

  const xlsxServer = await startServer(t, configForFile(xlsx, { stateDir: dir.path('state-xlsx') }));
  const before = await snapshot(dir.dir);
  const refused = await postJson(`${xlsxServer.url}/sheets/book`, { Name: 'Big', Note: MEGABYTE_TEXT });
  assert.equal(refused.status, 400);
  const body = (await refused.json()) as { error: string; message: string };
  assert.equal(body.error, 'invalid_body');
  assert.match(body.message, /"Note"/, 'names the column');
  assert.match(body.message, /row 1\b/, 'names the row');
  assert.match(body.message, /32,767/, 'names the limit');
  assert.deepEqual((await (await fetch(`${xlsxServer.url}/sheets/book`)).json()), [{ Name: 'Ann', Note: 'short' }]);
  await xlsxServer.close();
  assert.deepEqual(await snapshot(dir.dir), before, 'neither the workbook nor its journal changed');

  const csvServer = await startServer(t, configForFile(csv, { stateDir: dir.path('state-csv') }));
  const accepted = await postJson(`${csvServer.url}/sheets/notes`, { Name: 'Big', Note: MEGABYTE_TEXT });
  assert.equal(accepted.status, 201);
  const rows = (await (await fetch(`${csvServer.url}/sheets/notes/1`)).json()) as Record<string, string>[];
  assert.equal(rows[0].Note, MEGABYTE_TEXT);
  await csvServer.close();
  assert.equal(await readFile(csv, 'utf8'), `Name,Note\r\nAnn,short\r\nBig,${MEGABYTE_TEXT}\r\n`);
});

test('format limits, per format', async (t) => {
  const workbook: Workbook = { tabs: [{ name: 'S', rows: [row('Name', 'Note')] }] };
  const cases: [string, FileFormat, string[], RegExp | null][] = [
    ['xlsx: 32,767 characters fit', 'xlsx', ['a', 'x'.repeat(32_767)], null],
    ['xlsx: 32,768 do not', 'xlsx', ['a', 'x'.repeat(32_768)], /"Note" in row 0 has 32,768 characters; an \.xlsx cell holds at most 32,767/],
    ['xlsx: a cell right of column XFD', 'xlsx', Array.from({ length: 16_385 }, () => 'x'), /column 16,385; an \.xlsx sheet holds at most 16,384 columns/],
    ['ods: long text fits', 'ods', ['a', 'x'.repeat(100_000)], null],
    ['ods: a cell right of column XFD', 'ods', Array.from({ length: 16_385 }, () => 'x'), /at most 16,384 columns/],
    ['csv: anything', 'csv', Array.from({ length: 16_385 }, () => 'x'.repeat(40_000)), null],
  ];
  for (const [name, format, cells, expected] of cases) {
    await t.test(name, () => {
      const plan = appendPlan(workbook, [row(...cells)]);
      const after = planned(workbook, plan, null).workbook;
      const refused = refuseUnstorable(format, plan, after);
      if (expected === null) return assert.equal(refused, null);
      assert.ok(isApiError(refused) && refused.code === 'invalid_body');
      assert.match(refused.message, expected);
    });
  }
  await t.test('xlsx: the row after row 1,048,576', () => {
    const full: Workbook = { tabs: [{ name: 'S', rows: Array.from({ length: FORMAT_LIMITS.xlsx!.rows }, () => row('a')) }] };
    const plan = appendPlan(full, [row('b')]);
    const refused = refuseUnstorable('xlsx', plan, planned(full, plan, null).workbook);
    assert.match(refused?.message ?? '', /would have 1,048,577 rows; an \.xlsx sheet holds at most 1,048,576/);
  });
});

/** An .xlsx whose tab name SheetJS refuses to write (`[`), as another program could leave it: every fold fails. */
/**
 * A workbook SheetJS reads but sheetrest cannot fold writes into, and cannot tell so at open
 * (it would have to inflate every sheet): its `<sheetData>` closes as `</x:sheetData>`.
 */
async function unwritableBook(path: string): Promise<void> {
  const sheet =
    '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>' +
    '<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t>Age</t></is></c></row>' +
    '<row r="2"><c r="A2" t="inlineStr"><is><t>Ann</t></is></c><c r="B2"><v>30</v></c></row></x:sheetData></worksheet>';
  await writeFile(path, plainBook(sheet, 'People'));
}

test('a fold that keeps failing backs off, is logged once, and close() names what it left', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'odd.xlsx');
    await unwritableBook(path);
    const recording = recordingLog();
    const source = await openFileSource({ path, foldAfterMs: 5, log: recording.log });
    await source.write((workbook) => planned(workbook, appendPlan(workbook, [row('Dee', 52)]), null));
    // Without backoff a 5 ms retry loop would fail about 80 times in 400 ms; doubling gives about 6.
    await new Promise((resolve) => setTimeout(resolve, 400));
    await source.write((workbook) => planned(workbook, appendPlan(workbook, [row('Eve', 33)]), null));
    await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(source.foldFailures >= 1 && source.foldFailures <= 9, `${source.foldFailures} failed folds`);
    const failures = recording.messages.filter((message) => message.includes('could not fold'));
    assert.equal(failures.length, 1, `logged once: ${recording.messages.join('\n')}`);
    assert.match(failures[0], /has no <sheetData>/);
    assert.deepEqual(names(await source.read()), ['Ann', 'Dee', 'Eve'], 'the writes are served from the journal');
    await assert.rejects(source.close(), (error: unknown) => {
      assert.ok(error instanceof Error);
      assert.match(error.message, new RegExp(`${basename(path).replace('.', '\\.')}: 2 acknowledged write\\(s\\) could not be folded`));
      assert.match(error.message, /\.journal/);
      return true;
    });
    const again = await openFileSource({ path, foldAfterMs: Infinity, log: recordingLog().log });
    assert.deepEqual(names(await again.read()), ['Ann', 'Dee', 'Eve'], 'the next start replays them');
    await again.abandon();
  } finally {
    await folder.cleanup();
  }
});

test('a journal from an earlier version holding an over-long .xlsx cell is set aside at start, not retried forever', async () => {
  const folder = await tempFolder();
  try {
    const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
    const crashed = await openFileSource({ path, foldAfterMs: Infinity, log: recordingLog().log });
    await crashed.write((workbook) => planned(workbook, appendPlan(workbook, [row('Dee', 52, 'x')]), null));
    await crashed.abandon();
    const stateDir = join(folder.dir, '.sheetrest');
    const journal = join(stateDir, (await stateFiles(stateDir)).find((name) => name.endsWith('.journal')) ?? '');
    // What an earlier version acknowledged: a 40,000-character cell, then one more row.
    const long = 'y'.repeat(40_000);
    const entry = (start: number, cells: string[]) => ({
      plan: { tab: 'People', replaced: [], removed: [], appended: { start, rows: [{ text: cells, value: cells }] } },
      expected: { dataRows: start, rows: [] },
    });
    await writeFile(journal, (await readFile(journal, 'utf8')) + journalLine(entry(4, ['Big', long])) + journalLine(entry(5, ['Fay', 'z'])));
    const recording = recordingLog();
    const source = await openFileSource({ path, log: recording.log });
    assert.deepEqual(names(await source.read()), ['Ann', 'Bob', 'Cy', 'Dee', 'Fay'], 'the row after it moves into its place');
    const conflict = (await stateFiles(stateDir)).find((name) => name.includes('.conflict-'));
    assert.ok(conflict !== undefined);
    assert.ok((await readFile(join(stateDir, conflict), 'utf8')).includes(long), 'the over-long write is kept in the state folder');
    assert.match(recording.messages.join('\n'), /cannot store; saved the writes to/);
    await source.close();
    const again = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual(names(await again.read()), ['Ann', 'Bob', 'Cy', 'Dee', 'Fay'], 'the fold took the rest into the file');
    await again.close();
  } finally {
    await folder.cleanup();
  }
});

test('the CLI exits 1 on SIGTERM when acknowledged writes could not be folded, naming the file', async (t) => {
  const dir = await tempDir(t);
  const path = dir.path('odd.xlsx');
  await unwritableBook(path);
  const child = await spawnServer(t, [path, '--state-dir', dir.path('state'), '--log-level', 'warn']);
  const posted = await postJson(`${child.url}/sheets/odd`, { Name: 'Dee', Age: 52 });
  assert.equal(posted.status, 201);
  child.signal('SIGTERM');
  assert.deepEqual(await within(15_000, 'exit after SIGTERM', child.exited), { code: 1, signal: null });
  assert.match(child.stderr(), /odd\.xlsx: 1 acknowledged write\(s\) could not be folded into the file/);
  const again = await openFileSource({ path, stateDir: dir.path('state'), foldAfterMs: Infinity, log: recordingLog().log });
  assert.deepEqual(names(await again.read()), ['Ann', 'Dee'], 'the journal still holds the write');
  await again.abandon();
});
