// The file source: the source contract on .xlsx, .ods and .csv, then what only files have:
// formatted text and typed values, CSV exactness, crash recovery from the journal, folding,
// changes made behind the server's back, unwritable and vanishing files.
import assert from 'node:assert/strict';
import { readFile, rename, truncate, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CellObject } from '@e965/xlsx';
import { isApiError } from '../../../lib/errors.ts';
import type { Workbook } from '../../../lib/workbook.ts';
import { parseCsv, formatCsv } from '../../../server/sources/file/csv/csv.ts';
import { isoToSerial, serialToIso } from '../../../server/sources/file/dates.ts';
import { fingerprint } from '../../../server/durable/disk.ts';
import { journalLine } from '../../../server/sources/file/journal.ts';
import { openFileSource, type FileFormat, type FileSourceOptions } from '../../../server/sources/file/mod.ts';
import { bookBytes, bookOf, csvOf, makeUnwritable, recordingLog, shownText, stateFiles, tempFolder, writeFixture } from '../../helpers/file-source.ts';
import { CONTRACT_FIXTURE, appendPlan, planned, dataOf, removePlan, replacePlan, row, runSourceContract, type ContractFixture } from '../../helpers/source-contract.ts';

const FORMATS: readonly FileFormat[] = ['xlsx', 'ods', 'csv'];

for (const format of FORMATS) {
  test(`file source contract: ${format}`, async (t) => {
    await runSourceContract(t, {
      name: `file ${format}`,
      singleTab: format === 'csv',
      async open(fixture, { readOnly }) {
        const folder = await tempFolder();
        const path = await writeFixture(folder.dir, fixture, format);
        const { log } = recordingLog();
        const options = { path, readOnly, log };
        return { source: await openFileSource(options), reopen: () => openFileSource(options), cleanup: folder.cleanup };
      },
    });
  });
}

/** A temp folder holding the contract fixture as `format`, cleaned up after `body`. */
async function withFile(format: FileFormat, body: (path: string, dir: string) => Promise<void>, fixture: ContractFixture = CONTRACT_FIXTURE): Promise<void> {
  const folder = await tempFolder();
  try {
    await body(await writeFixture(folder.dir, fixture, format), folder.dir);
  } finally {
    await folder.cleanup();
  }
}

function names(workbook: Workbook): string[] {
  return dataOf(workbook).map(([text]) => text[0]);
}

const append = (name: string, age: number) => (workbook: Workbook) => planned(workbook, appendPlan(workbook, [row(name, age, 'x')]), name);

test('serial <-> ISO dates, free of time zones', async (t) => {
  const cases: [number, boolean, string][] = [
    [45352, false, '2024-03-01'],
    [45352.395833333336, false, '2024-03-01T09:30:00'],
    [45352.5000057870, false, '2024-03-01T12:00:00.5'],
    [1, false, '1900-01-01'],
    [59, false, '1900-02-28'],
    [61, false, '1900-03-01'],
    [43890, true, '2024-03-01'],
  ];
  for (const [serial, date1904, iso] of cases) {
    await t.test(`${serial}${date1904 ? ' (1904)' : ''} is ${iso}`, () => {
      assert.equal(serialToIso(serial, date1904), iso);
      assert.ok(Math.abs((isoToSerial(iso, date1904) ?? Number.NaN) - serial) < 1e-6);
    });
  }
  await t.test('a time-only format gives a time', () => assert.equal(serialToIso(0.5, false, true), '12:00:00'));
});

for (const format of ['xlsx', 'ods'] as const) {
  test(`${format}: cells read as the spreadsheet shows them, with typed values`, async () => {
    // `w` is the text a spreadsheet program stores beside the value: an .ods file keeps it (and
    // sheetrest shows it), an .xlsx file does not (sheetrest formats the value with its format).
    const cells: (CellObject | undefined)[][] = [
      ['Price', 'Share', 'Day', 'When', 'Paid', 'Double', 'Code', 'Missing', 'Empty', 'Plain'].map((v) => ({ t: 's', v })),
      [
        { t: 'n', v: 1234.5, z: '$#,##0.00', w: '$1,234.50' },
        { t: 'n', v: 0.125, z: '0.0%', w: '12.5%' },
        { t: 'n', v: 45352, z: 'yyyy\\-mm\\-dd', w: '2024-03-01' },
        { t: 'n', v: 45352.395833333336, z: format === 'xlsx' ? 'yyyy-mm-dd hh:mm:ss' : 'yyyy\\-mm\\-dd\\ hh:mm:ss', w: '2024-03-01 09:30:00' },
        { t: 'b', v: true },
        { t: 'n', v: 2469, f: 'A2*2' },
        { t: 's', v: '007' },
        { t: 'e', v: 0x2a, w: '#N/A' },
        undefined,
        { t: 'n', v: 42 },
      ],
    ];
    const folder = await tempFolder();
    try {
      const path = join(folder.dir, `cells.${format}`);
      await writeFile(path, bookBytes(bookOf([{ name: 'Cells', cells }]), format));
      const source = await openFileSource({ path, log: recordingLog().log });
      const [data] = (await source.read()).tabs[0].rows.slice(1);
      // SheetJS's ODS writer drops error cells, so the .ods file has none to read.
      const expectedText = ['$1,234.50', '12.5%', '2024-03-01', '2024-03-01 09:30:00', 'TRUE', '2469', '007', format === 'xlsx' ? '#N/A' : '', '', '42'];
      assert.deepEqual(Array.from({ length: 10 }, (_, c) => data.text[c] ?? ''), expectedText);
      const expectedValues = [1234.5, 0.125, { iso: '2024-03-01' }, { iso: '2024-03-01T09:30:00' }, true, 2469, '007', format === 'xlsx' ? '#N/A' : null, null, 42];
      assert.deepEqual(Array.from({ length: 10 }, (_, c) => data.value[c] ?? null), expectedValues);
      await source.close();
    } finally {
      await folder.cleanup();
    }
  });

  test(`${format}: written numbers, booleans, dates and text read back typed after a fold`, () =>
    withFile(format, async (path) => {
      const source = await openFileSource({ path, log: recordingLog().log });
      const written = { text: ['Eve', '2024-03-01', 'TRUE', '2024-03-01 09:30:00', '007', '3.5'], value: ['Eve', { iso: '2024-03-01' }, true, { iso: '2024-03-01T09:30:00' }, '007', 3.5] };
      await source.write((workbook) => planned(workbook, appendPlan(workbook, [written]), null));
      await source.close();
      const again = await openFileSource({ path, log: recordingLog().log });
      const last = (await again.read()).tabs[0].rows[4];
      assert.deepEqual(last.value.slice(0, 6), written.value);
      assert.deepEqual(last.text.slice(0, 6), written.text);
      assert.deepEqual((await again.read()).tabs.map((tab) => tab.name), ['People', 'Notes'], 'other tabs stay, in order');
      await again.close();
    }));
}

test('xlsx: a PATCH keeps the formats and formulas of the cells it does not set', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'formats.xlsx');
    const cells: (CellObject | undefined)[][] = [
      [{ t: 's', v: 'Name' }, { t: 's', v: 'Price' }, { t: 's', v: 'Double' }],
      [{ t: 's', v: 'Ann' }, { t: 'n', v: 10, z: '$#,##0.00' }, { t: 'n', v: 20, f: 'B2*2' }],
    ];
    await writeFile(path, bookBytes(bookOf([{ name: 'S', cells }]), 'xlsx'));
    const source = await openFileSource({ path, log: recordingLog().log });
    await source.write((workbook) => {
      const old = workbook.tabs[0].rows[1];
      const next = { text: ['Annie', ...old.text.slice(1)], value: ['Annie', ...old.value.slice(1)] };
      return planned(workbook, replacePlan(workbook, 0, next, [0]), null);
    });
    await source.close();
    assert.deepEqual((await shownText(path)).S[1], ['Annie', '$10.00', '20']);
    const again = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual((await again.read()).tabs[0].rows[1].value, ['Annie', 10, 20]);
    await again.close();
  } finally {
    await folder.cleanup();
  }
});

test('csv: fields read exactly as written, typed as if typed', async (t) => {
  const cases: [string, string[][]][] = [
    ['a,b\r\n007,"x, y"\r\n', [['a', 'b'], ['007', 'x, y']]],
    ['a\n"say ""hi"""\n', [['a'], ['say "hi"']]],
    ['a\n"two\nlines"', [['a'], ['two\nlines']]],
    ['a,,c\n\nd\n', [['a', '', 'c'], [''], ['d']]],
    ['\uFEFFa,b', [['a', 'b']]],
  ];
  for (const [input, records] of cases) {
    await t.test(JSON.stringify(input), () => {
      const parsed = parseCsv(input);
      assert.deepEqual(parsed.records, records);
      assert.equal(formatCsv(parsed.records, parsed.style), input, 'writes back byte for byte');
    });
  }
  await t.test('source values', () =>
    withFile('csv', async (path) => {
      await writeFile(path, 'Code,Amount,Flag,Day,Note\r\n007,42,true,2024-03-01,"a, ""b"""\r\n3.50,-3.5,FALSE,2024-02-30,1e3\r\n');
      const source = await openFileSource({ path, log: recordingLog().log });
      const rows = (await source.read()).tabs[0].rows;
      assert.equal((await source.read()).tabs[0].name, 'People');
      assert.deepEqual(rows[1].text, ['007', '42', 'true', '2024-03-01', 'a, "b"']);
      assert.deepEqual(rows[1].value, ['007', 42, true, { iso: '2024-03-01' }, 'a, "b"']);
      assert.deepEqual(rows[2].value, ['3.50', -3.5, false, '2024-02-30', '1e3']);
      await source.close();
    }));
});

test('csv: writes keep RFC 4180 and leave untouched fields byte for byte', () =>
  withFile('csv', async (path) => {
    await writeFile(path, 'Name,Note\n007,"a, b"\n');
    const source = await openFileSource({ path, log: recordingLog().log });
    const tricky = { text: ['Zed', 'say "hi",\nbye'], value: ['Zed', 'say "hi",\nbye'] };
    await source.write((workbook) => planned(workbook, appendPlan(workbook, [tricky]), null));
    await source.close();
    assert.equal(await readFile(path, 'utf8'), 'Name,Note\n007,"a, b"\nZed,"say ""hi"",\nbye"\n');
    const again = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual((await again.read()).tabs[0].rows[2].text, tricky.text);
    await again.close();
  }));

for (const format of FORMATS) {
  test(`${format}: an acknowledged write survives a crash (journal replay)`, () =>
    withFile(format, async (path, dir) => {
      const before = await readFile(path);
      const crashed = await openFileSource({ path, foldAfterMs: Infinity, log: recordingLog().log });
      await crashed.write(append('Dee', 52));
      await crashed.write(append('Eve', 33));
      await crashed.abandon();
      assert.deepEqual(await readFile(path), before, 'the workbook itself is rewritten only by a fold');
      // No close(): the process "died" right after the acknowledgement.
      const recording = recordingLog();
      const recovered = await openFileSource({ path, log: recording.log });
      assert.deepEqual(names(await recovered.read()), ['Ann', 'Bob', 'Cy', 'Dee', 'Eve']);
      assert.match(recording.messages.join('\n'), /recovered 2 journaled write/);
      await recovered.close();
      const shown = await shownText(path);
      assert.deepEqual(Object.values(shown)[0].slice(1).map((cells) => cells[0]), ['Ann', 'Bob', 'Cy', 'Dee', 'Eve'], 'the fold wrote a readable file');
      assert.ok((await stateFiles(join(dir, '.sheetrest'))).some((name) => name.endsWith('.journal')));
    }));
}

test('a torn journal tail is ignored without losing the entries before it', () =>
  withFile('xlsx', async (path, dir) => {
    const crashed = await openFileSource({ path, foldAfterMs: Infinity, log: recordingLog().log });
    for (const name of ['Dee', 'Eve', 'Fay']) await crashed.write(append(name, 1));
    await crashed.abandon();
    const journal = join(dir, '.sheetrest', (await stateFiles(join(dir, '.sheetrest'))).find((name) => name.endsWith('.journal')) ?? '');
    const text = await readFile(journal, 'utf8');
    // Cut the last line in half, as a crash during its write would.
    await truncate(journal, Buffer.byteLength(text) - 40);
    const recovered = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual(names(await recovered.read()), ['Ann', 'Bob', 'Cy', 'Dee', 'Eve']);
    await recovered.write(append('Gil', 2));
    await recovered.close();
    const again = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual(names(await again.read()), ['Ann', 'Bob', 'Cy', 'Dee', 'Eve', 'Gil']);
    await again.close();
  }));

test('a crash after a fold renamed the file, before the journal reset, applies nothing twice', () =>
  withFile('xlsx', async (path, dir) => {
    const crashed = await openFileSource({ path, foldAfterMs: Infinity, log: recordingLog().log });
    await crashed.write(append('Dee', 52));
    await crashed.abandon();
    const stateDir = join(dir, '.sheetrest');
    const journal = join(stateDir, (await stateFiles(stateDir)).find((name) => name.endsWith('.journal')) ?? '');
    const oldJournal = await readFile(journal, 'utf8');
    // Let a second run fold, then put back the old journal plus the mark a fold writes before renaming.
    const second = await openFileSource({ path, log: recordingLog().log });
    await second.close();
    await writeFile(journal, oldJournal + journalLine({ compactedTo: fingerprint(await readFile(path)) }));
    const third = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual(names(await third.read()), ['Ann', 'Bob', 'Cy', 'Dee']);
    await third.close();
  }));

test('200 concurrent appends land as 200 rows in arrival order', () =>
  withFile('xlsx', async (path) => {
    const source = await openFileSource({ path, log: recordingLog().log });
    const writes = Array.from({ length: 200 }, (_, n) => source.write(append(`R${n}`, n)));
    await Promise.all(writes);
    const expected = ['Ann', 'Bob', 'Cy', ...Array.from({ length: 200 }, (_, n) => `R${n}`)];
    assert.deepEqual(names(await source.read()), expected);
    await source.close();
    const again = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual(names(await again.read()), expected);
    await again.close();
  }));

/** Rewrites the workbook as another program would: a new file renamed over the old one. */
async function saveBehindTheServer(path: string, rows: (string | number)[][]): Promise<void> {
  const cells = rows.map((cells) => cells.map((v): CellObject => (typeof v === 'number' ? { t: 'n', v } : { t: 's', v })));
  await writeFile(`${path}.other`, bookBytes(bookOf([{ name: 'People', cells }, { name: 'Notes', cells: [[{ t: 's', v: 'Key' }]] }]), 'xlsx'));
  await rename(`${path}.other`, path);
}

test('a change saved behind the server is read, and a later write keeps both', () =>
  withFile('xlsx', async (path) => {
    const source = await openFileSource({ path, log: recordingLog().log });
    await source.write(append('Dee', 52));
    await source.close();
    const reopened = await openFileSource({ path, foldAfterMs: Infinity, log: recordingLog().log });
    await saveBehindTheServer(path, [['Name', 'Age', 'City'], ['Ann', 31, 'Oslo'], ['Bob', 41, 'Rome'], ['Cy', 25, 'Lima'], ['Dee', 52, 'x'], ['Out', 7, 'side']]);
    assert.deepEqual(names(await reopened.read({ fresh: true })), ['Ann', 'Bob', 'Cy', 'Dee', 'Out']);
    assert.equal(dataOf(await reopened.read())[0][1][1], 31);
    await reopened.write(append('New', 1));
    await reopened.close();
    const shown = await shownText(path);
    assert.deepEqual(shown.People.slice(1).map((cells) => cells[0]), ['Ann', 'Bob', 'Cy', 'Dee', 'Out', 'New']);
    assert.equal(shown.People[1][1], '31');
  }));

test('journaled writes are re-applied on an outside change when their rows still match', () =>
  withFile('xlsx', async (path) => {
    const source = await openFileSource({ path, foldAfterMs: Infinity, log: recordingLog().log });
    await source.write(append('Dee', 52));
    await source.write((workbook) => planned(workbook, replacePlan(workbook, 1, row('Bob', 42, 'Rome'), [1]), null));
    // Another program adds a row at the end, unaware of the two writes still in the journal.
    await saveBehindTheServer(path, [['Name', 'Age', 'City'], ['Ann', 30, 'Oslo'], ['Bob', 41, 'Rome'], ['Cy', 25, 'Lima'], ['Out', 7, 'side']]);
    // fresh: look at the file now rather than when the folder watcher reports the save.
    const workbook = await source.read({ fresh: true });
    assert.deepEqual(names(workbook), ['Ann', 'Bob', 'Cy', 'Out', 'Dee']);
    assert.equal(dataOf(workbook)[1][1][1], 42);
    await source.close();
    assert.deepEqual((await shownText(path)).People.slice(1).map((cells) => cells.slice(0, 2).join(' ')), ['Ann 30', 'Bob 42', 'Cy 25', 'Out 7', 'Dee 52']);
  }));

test('a journaled write that conflicts with an outside change is saved aside, never silently dropped', () =>
  withFile('xlsx', async (path, dir) => {
    const recording = recordingLog();
    const source = await openFileSource({ path, foldAfterMs: Infinity, log: recording.log });
    await source.write((workbook) => planned(workbook, removePlan(workbook, [0]), null));
    await saveBehindTheServer(path, [['Name', 'Age', 'City'], ['Ann', 99, 'Oslo'], ['Bob', 41, 'Rome'], ['Cy', 25, 'Lima']]);
    assert.deepEqual(dataOf(await source.read({ fresh: true }))[0][1], ['Ann', 99, 'Oslo'], 'the outside version wins');
    const conflict = (await stateFiles(join(dir, '.sheetrest'))).find((name) => name.includes('.conflict-'));
    assert.ok(conflict !== undefined, 'the conflicting write is saved in the state folder');
    assert.match(recording.messages.join('\n'), new RegExp(conflict.replaceAll('.', '\\.')));
    assert.match(await readFile(join(dir, '.sheetrest', conflict), 'utf8'), /"removed":\[0\]/);
    await source.close();
    assert.deepEqual((await shownText(path)).People[1], ['Ann', '99', 'Oslo']);
  }));

test('an unwritable file answers writes with write_error and keeps serving reads', () =>
  withFile('xlsx', async (path) => {
    const unlock = await makeUnwritable(path);
    try {
      const recording = recordingLog();
      const source = await openFileSource({ path, log: recording.log });
      assert.equal(source.writable, false);
      assert.match(recording.messages.join('\n'), /read-only/);
      await assert.rejects(source.write(append('No', 0)), (error: unknown) => isApiError(error) && error.code === 'write_error');
      assert.deepEqual(names(await source.read()), ['Ann', 'Bob', 'Cy']);
      await source.close();
    } finally {
      await unlock();
    }
  }));


test('start-up errors name the path and the problem', async (t) => {
  const folder = await tempFolder();
  try {
    const cases: [string, FileSourceOptions, RegExp][] = [
      ['missing file', { path: join(folder.dir, 'nope.xlsx') }, /nope\.xlsx: file not found/],
      ['unsupported type', { path: join(folder.dir, 'data.txt') }, /data\.txt: unsupported file type/],
      ['not a workbook', { path: join(folder.dir, 'bad.xlsx') }, /bad\.xlsx: not a readable \.xlsx file/],
      ['a folder', { path: folder.dir + '/dir.csv' }, /dir\.csv: is a folder/],
    ];
    await writeFile(join(folder.dir, 'bad.xlsx'), 'this is not a zip file');
    await import('node:fs/promises').then((fs) => fs.mkdir(join(folder.dir, 'dir.csv')));
    for (const [name, options, message] of cases) {
      await t.test(name, () => assert.rejects(openFileSource({ ...options, log: recordingLog().log }), message));
    }
  } finally {
    await folder.cleanup();
  }
});

test('a file deleted while serving answers 503 upstream_unavailable, and recovers when it is back', () =>
  withFile('csv', async (path) => {
    const recording = recordingLog();
    const source = await openFileSource({ path, log: recording.log });
    const saved = await readFile(path);
    await unlink(path);
    const unavailable = (error: unknown) => isApiError(error) && error.code === 'upstream_unavailable' && error.status === 503 && error.headers['Retry-After'] !== undefined;
    await assert.rejects(source.read({ fresh: true }), unavailable);
    await assert.rejects(source.write(append('No', 0)), unavailable);
    assert.match(recording.messages.join('\n'), /is missing/);
    await writeFile(path, saved);
    assert.deepEqual(names(await source.read()), ['Ann', 'Bob', 'Cy']);
    await source.close();
  }));

test('a readOnly connection never touches the state folder', () =>
  withFile('csv', async (path, dir) => {
    const source = await openFileSource({ path, readOnly: true, log: recordingLog().log });
    await assert.rejects(source.write(append('No', 0)), (error: unknown) => isApiError(error) && error.code === 'write_error');
    await source.close();
    assert.deepEqual(await stateFiles(join(dir, '.sheetrest')), []);
    assert.equal(await readFile(path, 'utf8'), csvOf(CONTRACT_FIXTURE.tabs[0].rows));
  }));
