// The file source is single-instance: a second server writing to the same workbook stops at
// start with a clear message, even with a state folder of its own (the state folder's lock
// covers only the same folder); a read-only server on the same file may still start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { lockWorkbook, workbookLockPath, WorkbookLocked } from '../../../server/durable/lock.ts';
import { RUNTIME, runCli, spawnServer, tempDir } from '../../helpers/http.ts';

test('lockWorkbook is shared within a process and released with its last user', async (t) => {
  const dir = await tempDir(t);
  const file = dir.path('book.csv');
  const first = lockWorkbook(file);
  const second = lockWorkbook(file);
  assert.ok(existsSync(workbookLockPath(file)));
  first.release();
  first.release();
  assert.ok(existsSync(workbookLockPath(file)), 'still held by the second connection');
  second.release();
  assert.equal(existsSync(workbookLockPath(file)), false);
  assert.equal(workbookLockPath('/srv/data/book.xlsx'), '/srv/data/.book.xlsx.sheetrest-lock');
  assert.equal(new WorkbookLocked('/srv/b.xlsx', { pid: 7, started: 'x' }).pid, 7);
});

test(`a second server on the same workbook with another state folder refuses to start (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const file = dir.path('book.csv');
  await writeFile(file, 'Name,Age\nAnn,30\n');
  await spawnServer(t, [file, '--state-dir', dir.path('state-a')], 30_000);
  const second = await runCli([file, '--state-dir', dir.path('state-b'), '--port', '0'], 30_000);
  assert.equal(second.code, 1);
  assert.match(second.stderr, /the workbook .*book\.csv is served for writing by another sheetrest process \(pid \d+, started [^)]+\); a file is served by one instance only/);
  // Reading only cannot harm it.
  const reader = await spawnServer(t, [file, '--state-dir', dir.path('state-c'), '--read-only'], 30_000);
  const answer = await fetch(`${reader.url}/sheets/book`);
  assert.equal(answer.status, 200);
  await answer.arrayBuffer();
});
