// A workbook served through a symlink (`served/book.xlsx -> ../data/book.xlsx`, as deployments
// point a stable name at a dated file) is written where the link points: a fold replaces the
// target, in the target's folder, and the link stays a link to the new content. Its journal is
// the real file's, so a restart through either path replays it, and a journal an older version
// kept under the link's name is taken over.
import assert from 'node:assert/strict';
import { lstat, mkdir, readdir, readlink, rename, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { createHash } from 'node:crypto';
import { basename } from 'node:path';
import type { FileSource } from '../../../server/sources/file/file-source.ts';
import { openFileSource, type FileFormat } from '../../../server/sources/file/mod.ts';
import { recordingLog, shownText, stateFiles, tempFolder, writeFixture } from '../../helpers/file-source.ts';
import { CONTRACT_FIXTURE } from '../../helpers/source-contract.ts';
import { appOf } from '../../helpers/app.ts';

async function post(source: FileSource, row: Record<string, unknown>): Promise<number> {
  const response = await appOf(source).fetch(new Request('http://x/sheets/book', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(row) }));
  await response.body?.cancel();
  return response.status;
}

async function names(source: FileSource): Promise<string[]> {
  return (await source.read()).tabs[0].rows.slice(1).map((row) => String(row.text[0]));
}

/** `data/<book>` and `served/<book>`, a symlink to it through a relative path. */
async function linked(dir: string, format: FileFormat): Promise<{ real: string; link: string; target: string }> {
  await mkdir(join(dir, 'data'));
  await mkdir(join(dir, 'served'));
  const real = await writeFixture(join(dir, 'data'), CONTRACT_FIXTURE, format);
  const link = join(dir, 'served', basename(real));
  const target = join('..', 'data', basename(real));
  await symlink(target, link);
  return { real, link, target };
}

test('a write through a symlinked workbook is folded into its target, and the link stays a link', async (t) => {
  for (const format of ['csv', 'xlsx', 'ods'] as const) {
    await t.test(format, async () => {
      const folder = await tempFolder();
      try {
        const { real, link, target } = await linked(folder.dir, format);
        const stateDir = join(folder.dir, 'state');
        const source = await openFileSource({ path: link, stateDir, foldAfterMs: Infinity, log: recordingLog().log });
        assert.equal(source.writable, true);
        assert.equal(await post(source, { Name: 'Zed', Age: 9, City: 'Kyiv' }), 201);
        await source.close();
        const info = await lstat(link);
        assert.equal(info.isSymbolicLink(), true, 'the link is still a link');
        assert.equal(await readlink(link), target, 'pointing where it pointed');
        assert.deepEqual(Object.values(await shownText(real))[0].map((row) => row[0]), ['Name', 'Ann', 'Bob', 'Cy', 'Zed'], 'the target has the row');
        assert.deepEqual(await readdir(join(folder.dir, 'served')), [basename(link)], 'nothing else beside the link');
        assert.deepEqual((await readdir(join(folder.dir, 'data'))).filter((name) => name.endsWith('.tmp')), [], 'no temp file left beside the target');
        // The journal is the real file's: a restart through either path finds the rows, once.
        for (const path of [real, link]) {
          const again = await openFileSource({ path, stateDir, log: recordingLog().log });
          assert.deepEqual(await names(again), ['Ann', 'Bob', 'Cy', 'Zed']);
          await again.close();
        }
        assert.deepEqual((await stateFiles(stateDir)).filter((name) => name.endsWith('.journal')), [journalName(real)]);
      } finally {
        await folder.cleanup();
      }
    });
  }
});

test("a journal kept under a symlink's name by an older version is replayed through the link", async () => {
  const folder = await tempFolder();
  try {
    const { real, link } = await linked(folder.dir, 'csv');
    const stateDir = join(folder.dir, 'state');
    // A write acknowledged and not folded (a crash), its journal named after the link as before.
    const crashed = await openFileSource({ path: real, stateDir, foldAfterMs: Infinity, log: recordingLog().log });
    assert.equal(await post(crashed, { Name: 'Zed', Age: 9, City: 'Kyiv' }), 201);
    await crashed.abandon();
    await rename(join(stateDir, journalName(real)), join(stateDir, journalName(link)));
    const log = recordingLog();
    const source = await openFileSource({ path: link, stateDir, log: log.log });
    assert.deepEqual(await names(source), ['Ann', 'Bob', 'Cy', 'Zed']);
    assert.match(log.messages.join('\n'), /recovered 1 journaled write/);
    await source.close();
    assert.equal((await lstat(link)).isSymbolicLink(), true);
    assert.deepEqual(Object.values(await shownText(real))[0].map((row) => row[0]), ['Name', 'Ann', 'Bob', 'Cy', 'Zed']);
    assert.deepEqual((await stateFiles(stateDir)).filter((name) => name.endsWith('.journal')), [journalName(real)]);
  } finally {
    await folder.cleanup();
  }
});

/** The journal's name for a workbook path (mod.ts). */
function journalName(path: string): string {
  return `${basename(path)}.${createHash('sha256').update(path).digest('hex').slice(0, 8)}.journal`;
}
