// A write changes only what it writes: `POST /sheets/book/tabs/People` on a third-party-shaped
// .xlsx (fixtures/xlsx-corpus, made by test/helpers/make-xlsx-corpus.ts), folded into the file, leaves
// every zip part but People's worksheet byte for byte as it was (decompressed), keeps People's
// untouched rows, styles, merges, validation, table and image, and gives new cells their column's
// style. Checked through sheetrest and, where Debian's python3-openpyxl is installed, openpyxl.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { appOver, statusesOf, type WriteCall } from '../../helpers/app.ts';
import { openFileSource } from '../../../server/sources/file/mod.ts';
import { entryText, readZip, replacedEntry, unpackEntry, writeZip } from '../../../server/sources/file/zip.ts';
import { recordingLog } from '../../helpers/file-source.ts';
import { CORPUS_DIR, gapBook } from '../../helpers/make-xlsx-corpus.ts';
import { appendPlan, planned, row } from '../../helpers/source-contract.ts';

interface Folded {
  readonly before: Uint8Array;
  readonly after: Uint8Array;
  readonly statuses: number[];
  readonly path: string;
  /** Each tab's rows as sheetrest reads the folded file (displayed text). */
  readonly tabs: Record<string, string[][]>;
}

/** Copies a corpus book, sends the calls in-process, closes the source (which folds) and reads the file back. */
async function foldCalls(t: { after(fn: () => Promise<void>): void }, book: string | Uint8Array, calls: readonly WriteCall[]): Promise<Folded> {
  const dir = await mkdtemp(join(tmpdir(), 'sheetrest-xlsx-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'book.xlsx');
  if (typeof book === 'string') await copyFile(join(CORPUS_DIR, book), path);
  else await writeFile(path, book);
  const before = new Uint8Array(await readFile(path));
  const source = await openFileSource({ path, stateDir: join(dir, 'state'), foldAfterMs: Infinity, log: recordingLog().log });
  const statuses = await statusesOf(await appOver(t, source, { id: 'book' }), 'book', calls);
  await source.close();
  const after = new Uint8Array(await readFile(path));
  const again = await openFileSource({ path, stateDir: join(dir, 'state'), foldAfterMs: Infinity, log: recordingLog().log });
  const workbook = await again.read();
  await again.close();
  const tabs = Object.fromEntries(workbook.tabs.map((tab) => [tab.name, tab.rows.map((sheetRow) => sheetRow.text.slice())]));
  return { before, after, statuses, path, tabs };
}

/** The parts whose content differs; throws when the two packages do not list the same parts in the same order. */
function changedParts(before: Uint8Array, after: Uint8Array): string[] {
  const old = readZip(before);
  const next = readZip(after);
  assert.deepEqual(next.map((entry) => entry.name), old.map((entry) => entry.name), 'the same parts, in the same order');
  return next.filter((entry, index) => !sameBytes(unpackEntry(entry), unpackEntry(old[index]))).map((entry) => entry.name);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

const PEOPLE = 'xl/worksheets/sheet1.xml';
const EVE = { Name: 'Eve', Amount: 42.5, Joined: '2024-05-06', Active: true };

const cases: readonly { name: string; calls: WriteCall[]; changed: string[]; people: string[][] }[] = [
  {
    name: 'POST appends a row in the columns\' styles',
    calls: [{ method: 'POST', path: '/tabs/People', body: EVE }],
    changed: [PEOPLE],
    people: [
      ['Ann', '$1,200.50', '2024-03-01', 'TRUE', '$2,401.00', '', 'Merged note'],
      ['Bob', '$99.00', '2023-03-15', 'FALSE', '$198.00'],
      ['Cy', '$15.00', '2020-06-18', 'TRUE', '$30.00'],
      ['Dee', '$7.25', '2024-07-27', 'FALSE', '$14.50'],
      ['Eve', '$42.50', '2024-05-06', 'TRUE'],
    ],
  },
  {
    name: 'PATCH keeps the cell\'s style and the row\'s other cells',
    calls: [{ method: 'PATCH', path: '/tabs/People/1', body: { Amount: 100 } }],
    changed: [PEOPLE],
    people: [
      ['Ann', '$1,200.50', '2024-03-01', 'TRUE', '$2,401.00', '', 'Merged note'],
      ['Bob', '$100.00', '2023-03-15', 'FALSE', '$198.00'],
      ['Cy', '$15.00', '2020-06-18', 'TRUE', '$30.00'],
      ['Dee', '$7.25', '2024-07-27', 'FALSE', '$14.50'],
    ],
  },
  {
    name: 'DELETE moves the rows below up with their settings',
    calls: [{ method: 'DELETE', path: '/tabs/People/0' }],
    changed: [PEOPLE],
    people: [
      ['Bob', '$99.00', '2023-03-15', 'FALSE', '$198.00'],
      ['Cy', '$15.00', '2020-06-18', 'TRUE', '$30.00'],
      ['Dee', '$7.25', '2024-07-27', 'FALSE', '$14.50'],
    ],
  },
  {
    name: 'POST, PATCH and DELETE folded together',
    calls: [
      { method: 'POST', path: '/tabs/People', body: EVE },
      { method: 'PATCH', path: '/tabs/People/Name/Eve', body: { Amount: 43 } },
      { method: 'DELETE', path: '/tabs/People/2' },
    ],
    changed: [PEOPLE],
    people: [
      ['Ann', '$1,200.50', '2024-03-01', 'TRUE', '$2,401.00', '', 'Merged note'],
      ['Bob', '$99.00', '2023-03-15', 'FALSE', '$198.00'],
      ['Dee', '$7.25', '2024-07-27', 'FALSE', '$14.50'],
      ['Eve', '$43.00', '2024-05-06', 'TRUE'],
    ],
  },
  {
    name: 'a date-time where no style shows one adds a style, and changes nothing else',
    calls: [{ method: 'POST', path: '/tabs/People', body: { Name: '2024-05-06T09:30:00' } }],
    changed: ['xl/styles.xml', PEOPLE],
    people: [
      ['Ann', '$1,200.50', '2024-03-01', 'TRUE', '$2,401.00', '', 'Merged note'],
      ['Bob', '$99.00', '2023-03-15', 'FALSE', '$198.00'],
      ['Cy', '$15.00', '2020-06-18', 'TRUE', '$30.00'],
      ['Dee', '$7.25', '2024-07-27', 'FALSE', '$14.50'],
      ['2024-05-06 09:30:00'],
    ],
  },
];

for (const { name, calls, changed, people } of cases) {
  test(`styled.xlsx: ${name}`, async (t) => {
    const folded = await foldCalls(t, 'styled.xlsx', calls);
    assert.deepEqual(folded.statuses.every((status) => status < 300), true, `answers ${folded.statuses.join(', ')}`);
    assert.deepEqual(changedParts(folded.before, folded.after), changed);
    assert.deepEqual(folded.tabs.People.slice(1), people);
    assert.deepEqual(folded.tabs.Notes, [['Topic', 'Detail'], ['Kept as it is', '$12.50'], ['Hidden row'], ['Merged note']]);
    if (changed.includes('xl/styles.xml')) {
      // Styles are only added: every existing style keeps its index.
      const [old, next] = [folded.before, folded.after].map((bytes) => entryText(readZip(bytes).find((entry) => entry.name === 'xl/styles.xml')!));
      const xfs = (xml: string) => /<cellXfs[^>]*>([\s\S]*)<\/cellXfs>/.exec(xml)![1];
      assert.ok(xfs(next).startsWith(xfs(old)), 'the old styles come first, unchanged');
    }
  });
}

/** What openpyxl sees in a file, or a reason it cannot look. */
function openpyxlView(path: string): Record<string, unknown> | string {
  const python = ['/usr/bin/python3', 'python3'].find((candidate) => candidate === 'python3' || existsSync(candidate))!;
  const script = `
import json, sys
try:
    import openpyxl
except ImportError:
    print(json.dumps("python3-openpyxl is not installed")); sys.exit(0)
wb = openpyxl.load_workbook(sys.argv[1])
def cell(c):
    return [str(c.value), c.number_format, bool(c.font.b), c.fill.fgColor.rgb if c.fill.fill_type else None, c.border.left.style]
out = {"kinds": [type(s).__name__ for s in wb._sheets]}
for ws in wb.worksheets:
    out[ws.title] = {
        "cells": {c.coordinate: cell(c) for row in ws.iter_rows() for c in row if c.value is not None},
        "rows": {str(i): [ws.row_dimensions[i].height, bool(ws.row_dimensions[i].hidden)] for i in range(1, 8)},
        "cols": {k: v.width for k, v in sorted(ws.column_dimensions.items())},
        "merges": sorted(str(r) for r in ws.merged_cells.ranges),
        "validations": [str(v.sqref) for v in ws.data_validations.dataValidation],
        "tables": {k: (v if isinstance(v, str) else v.ref) for k, v in ws.tables.items()},
        "images": len(ws._images),
    }
print(json.dumps(out))
`;
  try {
    const parsed: unknown = JSON.parse(execFileSync(python, ['-c', script, path], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
    return parsed as Record<string, unknown> | string;
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return 'python3 is not installed';
    const stderr = String((error as { stderr?: unknown }).stderr ?? '').trim().split('\n').pop();
    throw new Error(`openpyxl could not read ${path}: ${stderr || String(error)}`);
  }
}

type SheetView = { cells: Record<string, unknown[]>; rows: Record<string, unknown[]>; cols: unknown; merges: string[]; validations: string[]; tables: unknown; images: number };

test('styled.xlsx through openpyxl: untouched cells, rows and settings as they were; new cells in their column\'s style', async (t) => {
  const folded = await foldCalls(t, 'styled.xlsx', [
    { method: 'POST', path: '/tabs/People', body: EVE },
    { method: 'PATCH', path: '/tabs/People/1', body: { Amount: 100 } },
  ]);
  const after = openpyxlView(folded.path);
  if (typeof after === 'string') return t.skip(after);
  const beforePath = join(CORPUS_DIR, 'styled.xlsx');
  const before = openpyxlView(beforePath) as Record<string, unknown>;
  assert.deepEqual(after.kinds, ['Worksheet', 'Worksheet', 'Chartsheet'], 'the chart sheet stays a chart sheet');
  assert.deepEqual(after.Notes, before.Notes, 'the untouched tab');
  const [old, next] = [before.People as SheetView, after.People as SheetView];
  for (const key of ['rows', 'cols', 'merges', 'validations', 'tables', 'images'] as const) assert.deepEqual(next[key], old[key], key);
  for (const [ref, cell] of Object.entries(old.cells)) if (ref !== 'B3') assert.deepEqual(next.cells[ref], cell, ref);
  assert.deepEqual(next.cells.B3, ['100', '"$"#,##0.00', false, null, 'thin'], 'the patched cell keeps its style');
  assert.deepEqual(next.cells.A6, ['Eve', 'General', false, null, null]);
  assert.deepEqual(next.cells.B6, ['42.5', '"$"#,##0.00', false, null, 'thin'], 'a new number in its column\'s number format and border');
  assert.deepEqual(next.cells.C6, ['2024-05-06 00:00:00', 'yyyy\\-mm\\-dd', false, null, null], 'a new date as a serial in the column\'s date style');
  assert.deepEqual(next.cells.D6, ['True', 'General', false, null, null]);
});

test('styled.xlsx through openpyxl: a DELETE moves rows, row settings and merges up; shared formulas left without their first cell keep their values', async (t) => {
  const folded = await foldCalls(t, 'styled.xlsx', [{ method: 'DELETE', path: '/tabs/People/0' }]);
  const after = openpyxlView(folded.path);
  if (typeof after === 'string') return t.skip(after);
  const people = after.People as SheetView;
  assert.deepEqual(people.rows['3'], [null, true], 'the hidden row (Cy) moved up to row 3');
  assert.deepEqual(people.rows['2'], [null, false]);
  assert.deepEqual(people.merges, ['G2:H2'], 'the merge over rows 2-3 lost its deleted row');
  assert.deepEqual(people.cells.A2, ['Bob', 'General', false, null, null]);
  assert.deepEqual(people.cells.E2, ['198', '"$"#,##0.00', false, null, 'thin']);
  assert.deepEqual(people.tables, { PeopleTable: 'A1:E5' }, 'the table part is not touched');
});

test('gap.xlsx: a dense sheet with a missing row, which SheetJS cannot write back, takes a POST', async (t) => {
  const folded = await foldCalls(t, 'gap.xlsx', [{ method: 'POST', path: '', body: { Name: 'Dee', Age: 52 } }]);
  assert.deepEqual(folded.statuses, [201]);
  assert.deepEqual(changedParts(folded.before, folded.after), [PEOPLE]);
  assert.deepEqual(folded.tabs.Data, [['Name', 'Age'], ['Ann', '30'], [], ['Cy', '41'], ['Dee', '52']]);
});

test('prefixed.xlsx: namespace-prefixed rows without `r` take writes in the same prefix', async (t) => {
  const folded = await foldCalls(t, 'prefixed.xlsx', [
    { method: 'POST', path: '', body: { Name: 'Cy', Age: 41 } },
    { method: 'PATCH', path: '/0', body: { Age: 31 } },
  ]);
  assert.deepEqual(changedParts(folded.before, folded.after), [PEOPLE]);
  assert.deepEqual(folded.tabs.Data, [['Name', 'Age'], ['Ann', '$31.00'], ['Bob', '$25.00'], ['Cy', '$41.00']]);
  const xml = entryText(readZip(folded.after).find((entry) => entry.name === PEOPLE)!);
  assert.match(xml, /<x:row r="4"><x:c r="A4" t="inlineStr"><x:is><x:t>Cy<\/x:t><\/x:is><\/x:c><x:c r="B4" s="2"><x:v>41<\/x:v><\/x:c><\/x:row>/);
});

test('a package sheetrest cannot write back is served read-only from the start, saying why', async (t) => {
  // A tab whose relationship is missing: SheetJS still reads the sheet, but no writer could place it.
  const broken = writeZip(readZip(gapBook()).map((entry) => (entry.name === 'xl/_rels/workbook.xml.rels' ? replacedEntry(entry, entryText(entry).replace('Id="rId1"', 'Id="rId9"')) : entry)));
  const dir = await mkdtemp(join(tmpdir(), 'sheetrest-xlsx-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'book.xlsx');
  await writeFile(path, broken);
  const recording = recordingLog();
  const source = await openFileSource({ path, stateDir: join(dir, 'state'), log: recording.log });
  assert.equal(source.writable, false);
  assert.match(recording.messages.join('\n'), /serving .*book\.xlsx read-only: sheetrest cannot write this file back \(its tab "Data" has no part\)/);
  await assert.rejects(
    source.write((workbook) => planned(workbook, appendPlan(workbook, [row('Dee', 52)]), null)),
    (error: unknown) => {
      assert.equal((error as { code?: string }).code, 'write_error');
      assert.match((error as Error).message, /read-only because sheetrest cannot write this file back \(its tab "Data" has no part\); nothing was written/);
      return true;
    },
  );
  assert.deepEqual((await source.read()).tabs[0].rows.length, 4, 'reads still work');
  await source.close();
  assert.ok(sameBytes(new Uint8Array(await readFile(path)), broken), 'the file is untouched');
});

test('a write to a chart sheet is refused before it is acknowledged', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sheetrest-xlsx-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'book.xlsx');
  await copyFile(join(CORPUS_DIR, 'styled.xlsx'), path);
  const source = await openFileSource({ path, stateDir: join(dir, 'state'), log: recordingLog().log });
  const plan = { tab: 'Chart', replaced: [], removed: [], appended: { start: 0, rows: [row('x')] } };
  await assert.rejects(
    source.write((workbook) => planned(workbook, plan, null)),
    (error: unknown) => (error as { code?: string }).code === 'write_error' && /The tab "Chart" is a chart sheet/.test((error as Error).message),
  );
  await source.close();
  assert.ok(sameBytes(new Uint8Array(await readFile(path)), new Uint8Array(await readFile(join(CORPUS_DIR, 'styled.xlsx')))));
});

test('a workbook without a styles part: a written date goes in as its ISO text, which reads back as written', async (t) => {
  const unstyled = writeZip(
    readZip(gapBook())
      .filter((entry) => entry.name !== 'xl/styles.xml')
      .map((entry) => {
        if (entry.name === 'xl/_rels/workbook.xml.rels') return replacedEntry(entry, entryText(entry).replace(/<Relationship Id="rId2"[^>]*\/>/, ''));
        if (entry.name === '[Content_Types].xml') return replacedEntry(entry, entryText(entry).replace(/<Override PartName="\/xl\/styles.xml"[^>]*\/>/, ''));
        return entry;
      }),
  );
  const folded = await foldCalls(t, unstyled, [{ method: 'POST', path: '', body: { Name: 'Dee', Age: '2024-03-01' } }]);
  assert.deepEqual(folded.statuses, [201]);
  assert.deepEqual(folded.tabs.Data.at(-1), ['Dee', '2024-03-01']);
});

test('writes journaled for a file that turns out impossible to write back make the stop fail, naming them', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sheetrest-xlsx-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'book.xlsx');
  const stateDir = join(dir, 'state');
  await writeFile(path, gapBook());
  const first = await openFileSource({ path, stateDir, foldAfterMs: Infinity, log: recordingLog().log });
  await first.write((workbook) => planned(workbook, appendPlan(workbook, [row('Dee', 52)]), null));
  // A crash before the fold, then the file replaced by one sheetrest cannot write back.
  await first.abandon();
  await writeFile(path, writeZip(readZip(gapBook()).map((entry) => (entry.name === 'xl/_rels/workbook.xml.rels' ? replacedEntry(entry, entryText(entry).replace('Id="rId1"', 'Id="rId9"')) : entry))));
  const again = await openFileSource({ path, stateDir, foldAfterMs: Infinity, log: recordingLog().log });
  assert.deepEqual((await again.read()).tabs[0].rows.at(-1)?.text, ['Dee', '52'], 'the journaled write is still served');
  await assert.rejects(again.close(), /book\.xlsx: 1 acknowledged write\(s\) could not be folded into the file \(sheetrest cannot write this file back: its tab "Data" has no part\); they stay in .*\.journal/);
});
