// Changes made to a workbook behind the server: an edit that keeps the size and puts the mtime
// back, a stale copy saved over the file after the server compacted writes into it, and how
// soon a read sees an outside save without a stat on every request.
import assert from 'node:assert/strict';
import { readFile, stat, utimes, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import type { Workbook } from '../lib/workbook.ts';
import { openFileSource } from '../server/sources/file/mod.ts';
import { recordingLog, tempFolder, writeFixture } from './file-source-helpers.ts';
import { CONTRACT_FIXTURE, appendPlan, dataOf, planned, row } from './source-contract.ts';

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
