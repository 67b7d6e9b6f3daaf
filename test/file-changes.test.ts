// Changes made to a workbook behind the server: an edit that keeps the size and puts the mtime
// back, a stale copy saved over the file after the server compacted writes into it, and how
// soon a read sees an outside save without a stat on every request.
import assert from 'node:assert/strict';
import { readFile, rename, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { CellObject } from '@e965/xlsx';
import type { Workbook } from '../lib/workbook.ts';
import { openFileSource } from '../server/sources/file/mod.ts';
import { bookBytes, bookOf, recordingLog, shownText, stateFiles, tempFolder, writeFixture } from './file-source-helpers.ts';
import { CONTRACT_FIXTURE, appendPlan, dataOf, planned, replacePlan, row } from './source-contract.ts';

function names(workbook: Workbook): string[] {
  return dataOf(workbook).map(([text]) => text[0]);
}

test('an outside edit that keeps the size and restores the mtime is still seen', async () => {
  const folder = await tempFolder();
  try {
    const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'csv');
    // Whole seconds, so that putting the mtime back restores it exactly.
    const mtime = new Date('2024-03-01T09:30:00Z');
    await utimes(path, mtime, mtime);
    const source = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual(names(await source.read()), ['Ann', 'Bob', 'Cy']);
    const before = await stat(path);
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.replace('Bob', 'Rob'));
    await utimes(path, mtime, mtime);
    const after = await stat(path);
    assert.equal(after.size, before.size);
    assert.equal(after.mtimeMs, before.mtimeMs);
    assert.deepEqual(names(await source.read({ fresh: true })), ['Ann', 'Rob', 'Cy']);
    await source.write((workbook) => planned(workbook, appendPlan(workbook, [row('Dee', 52, 'Kyiv')]), null));
    await source.close();
    assert.match(await readFile(path, 'utf8'), /Ann,30,Oslo\r\nRob,41,Rome\r\nCy,25,Lima\r\nDee,52,Kyiv/, 'a later write keeps the edit');
  } finally {
    await folder.cleanup();
  }
});

const append = (name: string, age: number) => (workbook: Workbook) => planned(workbook, appendPlan(workbook, [row(name, age, 'x')]), name);
const TWENTY = Array.from({ length: 20 }, (_, n) => `W${n}`);

/** Saves `bytes` over the workbook the way a program saves: a new file renamed over the old one. */
async function saveOver(path: string, bytes: Uint8Array | string): Promise<void> {
  await writeFile(`${path}.other`, bytes);
  await rename(`${path}.other`, path);
}

/** An .xlsx like the fixture's, as another program would save it, with these People rows. */
function xlsxWith(rows: (string | number)[][]): Uint8Array {
  const cells = rows.map((cells) => cells.map((v): CellObject => (typeof v === 'number' ? { t: 'n', v } : { t: 's', v })));
  return bookBytes(bookOf([{ name: 'People', cells }, { name: 'Notes', cells: [[{ t: 's', v: 'Key' }, { t: 's', v: 'Value' }], [{ t: 's', v: 'a' }, { t: 'b', v: true }]] }]), 'xlsx');
}

/** Waits until the file holds `rows` People rows (the compactions landed), at most 10 s. */
async function holdsRows(path: string, rows: number): Promise<void> {
  for (let tries = 0; tries < 1000; tries++) {
    if ((await shownText(path)).People.length === rows) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('the file was never compacted');
}

test('a stale copy saved over the file after a compaction: the writes it lacks are applied again', async (t) => {
  const stale = xlsxWith([['Name', 'Age', 'City'], ['Ann', 30, 'Oslo'], ['Bob', 41, 'Rome'], ['Cy', 25, 'Lima']]);
  const edited = xlsxWith([['Name', 'Age', 'City'], ['Ann', 31, 'Oslo'], ['Bob', 41, 'Rome'], ['Cy', 25, 'Lima']]);
  // [case, the copy saved (null: the file's bytes before the writes), writes per compaction, Ann's row after]
  const cases: [string, Uint8Array | null, number, string][] = [
    ['the very bytes it had before', null, 20, 'Ann 30'],
    ['the very bytes, 20 compactions later', null, 1, 'Ann 30'],
    ['an edited copy of it (another program re-saved it, Ann is 31 now)', edited, 20, 'Ann 31'],
    ['an edited copy, 20 compactions later', edited, 1, 'Ann 31'],
  ];
  const expected = ['Ann', 'Bob', 'Cy', ...TWENTY];
  for (const [name, copy, perCompaction, ann] of cases) {
    await t.test(name, async () => {
      const folder = await tempFolder();
      try {
        const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
        const original = await readFile(path);
        const recording = recordingLog();
        const source = await openFileSource({ path, compactAfterMs: Infinity, compactAfterEntries: perCompaction, log: recording.log });
        for (const name of TWENTY) await source.write(append(name, 1));
        await holdsRows(path, 24);
        await saveOver(path, copy ?? original);
        assert.deepEqual(names(await source.read({ fresh: true })), expected);
        assert.match(recording.messages.join('\n'), /lacking 20 acknowledged write/);
        await source.close();
        const shown = (await shownText(path)).People;
        assert.deepEqual(shown.slice(1).map((cells) => cells[0]), expected, 'and folded into the file again');
        assert.equal(shown[1].slice(0, 2).join(' '), ann, 'the outside edit is kept');
      } finally {
        await folder.cleanup();
      }
    });
  }

  await t.test('saved while the server was stopped', async () => {
    const folder = await tempFolder();
    try {
      const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
      const source = await openFileSource({ path, log: recordingLog().log });
      for (const name of TWENTY) await source.write(append(name, 1));
      await source.close();
      await saveOver(path, stale);
      const recording = recordingLog();
      const again = await openFileSource({ path, log: recording.log });
      assert.deepEqual(names(await again.read()), ['Ann', 'Bob', 'Cy', ...TWENTY]);
      assert.match(recording.messages.join('\n'), /lacking 20 acknowledged write/);
      await again.close();
      const third = await openFileSource({ path, log: recordingLog().log });
      assert.deepEqual(names(await third.read()), ['Ann', 'Bob', 'Cy', ...TWENTY], 'applied once, not again on the next start');
      await third.close();
    } finally {
      await folder.cleanup();
    }
  });

  await t.test('a lost write whose row changed meanwhile goes to a conflict file', async () => {
    const folder = await tempFolder();
    try {
      const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
      const recording = recordingLog();
      const source = await openFileSource({ path, log: recording.log });
      await source.write((workbook) => planned(workbook, replacePlan(workbook, 1, row('Bob', 42, 'Rome'), [1]), null));
      await source.close();
      // A copy from before the PATCH, in which someone else changed Bob's row as well.
      await saveOver(path, xlsxWith([['Name', 'Age', 'City'], ['Ann', 30, 'Oslo'], ['Bob', 40, 'Rome'], ['Cy', 25, 'Lima']]));
      const again = await openFileSource({ path, log: recording.log });
      assert.equal(dataOf(await again.read())[1][1][1], 40, 'the outside version wins');
      const conflict = (await stateFiles(join(folder.dir, '.sheetrest'))).find((file) => file.includes('.conflict-'));
      assert.ok(conflict !== undefined, 'the lost write is saved aside');
      assert.match(await readFile(join(folder.dir, '.sheetrest', conflict), 'utf8'), /"Bob",42/);
      await again.close();
    } finally {
      await folder.cleanup();
    }
  });

  await t.test('a fresh copy edited outside is taken as it is', async () => {
    const folder = await tempFolder();
    try {
      const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
      const source = await openFileSource({ path, log: recordingLog().log });
      await source.write(append('Dee', 52));
      await source.close();
      // Someone opened the compacted file, corrected the row the server added and added one more.
      await saveOver(path, xlsxWith([['Name', 'Age', 'City'], ['Ann', 30, 'Oslo'], ['Bob', 41, 'Rome'], ['Cy', 25, 'Lima'], ['Dee', 53, 'x'], ['Eve', 1, 'y']]));
      const recording = recordingLog();
      const again = await openFileSource({ path, log: recording.log });
      assert.deepEqual(names(await again.read()), ['Ann', 'Bob', 'Cy', 'Dee', 'Eve']);
      assert.doesNotMatch(recording.messages.join('\n'), /lacking/);
      await again.close();
    } finally {
      await folder.cleanup();
    }
  });
});

test('a plain read sees an outside save without being asked to look (watcher, or at most 100 ms later)', async () => {
  const folder = await tempFolder();
  try {
    const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'csv');
    const source = await openFileSource({ path, log: recordingLog().log });
    assert.deepEqual(names(await source.read()), ['Ann', 'Bob', 'Cy']);
    await saveOver(path, (await readFile(path, 'utf8')).replace('Bob', 'Rob'));
    let seen: string[] = [];
    for (let tries = 0; tries < 500 && seen[1] !== 'Rob'; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      seen = names(await source.read());
    }
    assert.deepEqual(seen, ['Ann', 'Rob', 'Cy']);
    await source.close();
  } finally {
    await folder.cleanup();
  }
});
