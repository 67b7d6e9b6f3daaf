// A full disk at start does not stop the server: it says which file it could not write, leaves
// no half-written file behind, and serves reads. When the journal cannot be started afresh,
// the rows (its writes included) are served and a write answers 507 until space is freed, then
// goes through; when not even the state folder's lock can be written, every connection is served
// read-only. Faults are injected through the journal's file seam; where this process may mount a
// small tmpfs (root on Linux), a real full disk is tried as well.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmdirSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { test } from 'node:test';
import type { App } from '../../server/http/request.ts';
import { configForFile } from '../../server/config/config.ts';
import { createLogger } from '../../server/log.ts';
import { FoldHistory } from '../../server/sources/file/fold-history.ts';
import type { FileSource } from '../../server/sources/file/file-source.ts';
import type { JournalFiles, JournalHandle } from '../../server/sources/file/journal.ts';
import { openFileSource } from '../../server/sources/file/mod.ts';
import { writeFileAtomicSync } from '../../server/durable/disk.ts';
import { diskWriter } from '../../server/durable/state.ts';
import { recordingLog, stateFiles, tempFolder, writeFixture } from '../helpers/file-source.ts';
import { startServer, type TestContext } from '../helpers/http.ts';
import { CONTRACT_FIXTURE } from '../helpers/source-contract.ts';
import { appOf } from '../helpers/app.ts';

/** The real disk, but full for new journals (`wx`) while `full` is set: the first write to one fails with ENOSPC. */
class FullDisk implements JournalFiles {
  full = true;
  async open(path: string, flags: 'wx' | 'a', mode?: number): Promise<JournalHandle> {
    const handle = await open(path, flags, mode);
    if (flags !== 'wx' || !this.full) return handle;
    return {
      write: () => Promise.reject(Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })),
      datasync: () => handle.datasync(),
      sync: () => handle.sync(),
      truncate: (length) => handle.truncate(length),
      close: () => handle.close(),
    };
  }
}

async function post(app: App, name: string): Promise<{ status: number; body: { error?: string; message?: string } }> {
  const response = await app.fetch(new Request('http://x/sheets/book', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ Name: name, Age: 1, City: 'x' }) }));
  return { status: response.status, body: (await response.json()) as { error?: string; message?: string } };
}

async function names(source: FileSource): Promise<string[]> {
  return (await source.read()).tabs[0].rows.slice(1).map((row) => String(row.text[0]));
}

test('a full disk at start names the journal, serves reads, answers writes 507, and takes them once space is freed', async () => {
  const folder = await tempFolder();
  try {
    const path = await writeFixture(folder.dir, CONTRACT_FIXTURE, 'xlsx');
    const stateDir = join(folder.dir, 'state');
    // Two acknowledged writes left in the journal by a crash.
    const crashed = await openFileSource({ path, stateDir, foldAfterMs: Infinity, log: recordingLog().log });
    for (const name of ['Dee', 'Eve']) assert.equal((await post(appOf(crashed), name)).status, 201);
    await crashed.abandon();
    const journal = (await stateFiles(stateDir)).find((name) => name.endsWith('.journal')) ?? '';
    const before = await readFile(join(stateDir, journal), 'utf8');

    const disk = new FullDisk();
    const log = recordingLog();
    const source = await openFileSource({ path, stateDir, foldAfterMs: Infinity, journalFiles: disk, log: log.log });
    const journalPath = join(stateDir, journal).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    assert.match(log.messages.join('\n'), new RegExp(`cannot write ${journalPath}: no space left on device \\(ENOSPC\\); serving .* for reads, writes answer 507 until space is freed \\(2 journaled write\\(s\\) stay in`));
    assert.deepEqual(await names(source), ['Ann', 'Bob', 'Cy', 'Dee', 'Eve'], 'reads serve the journaled writes too');
    assert.deepEqual(await stateFiles(stateDir), [journal], 'no half-written temp file is left');
    assert.equal(await readFile(join(stateDir, journal), 'utf8'), before, 'the journal on disk is untouched');

    const app = appOf(source);
    assert.deepEqual(await post(app, 'Fay'), { status: 507, body: { error: 'insufficient_storage', message: "The server's disk is full; nothing was written. Try again once space is freed." } });
    assert.deepEqual(await names(source), ['Ann', 'Bob', 'Cy', 'Dee', 'Eve']);

    disk.full = false;
    assert.equal((await post(app, 'Fay')).status, 201);
    await source.close();
    const again = await openFileSource({ path, stateDir, log: recordingLog().log });
    assert.deepEqual(await names(again), ['Ann', 'Bob', 'Cy', 'Dee', 'Eve', 'Fay'], 'every acknowledged write, once');
    await again.close();
  } finally {
    await folder.cleanup();
  }
});

test('a fold history ending in a torn line is rewritten whole by the next add', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'book.compacted');
    const fold = (n: number) => ({ base: `b${n}`, produced: `p${n}`, entries: [] });
    const history = await FoldHistory.load(path);
    await history.add(fold(1));
    const intact = await readFile(path, 'utf8');
    // What an append cut short by a full disk left (older versions did not cut it back).
    await writeFile(path, intact + intact.slice(0, 20));
    const reloaded = await FoldHistory.load(path);
    await reloaded.add(fold(2));
    assert.deepEqual((await FoldHistory.load(path)).folds.map((c) => c.base), ['b1', 'b2'], 'the next line did not run into the torn one');
    assert.ok((await readFile(path, 'utf8')).endsWith('\n'));
  } finally {
    await folder.cleanup();
  }
});

test('a fold history read back from disk and rewritten keeps every record', async () => {
  const folder = await tempFolder();
  try {
    const path = join(folder.dir, 'book.compacted');
    const written = await FoldHistory.load(path);
    for (const n of [1, 2, 3]) await written.add({ base: `b${n}`, produced: `p${n}`, entries: [] });
    // A torn last line makes the next add rewrite the file from the records as loaded: each must keep its line's end.
    await writeFile(path, (await readFile(path, 'utf8')) + '{"base":');
    const reloaded = await FoldHistory.load(path);
    await reloaded.add({ base: 'b4', produced: 'p4', entries: [] });
    assert.deepEqual((await FoldHistory.load(path)).folds.map((c) => c.base), ['b1', 'b2', 'b3', 'b4']);
    assert.equal((await readFile(path, 'utf8')).split('\n').length, 5, 'four lines, each ending in a newline');
  } finally {
    await folder.cleanup();
  }
});

/** Mounts a tmpfs of `size` at a fresh folder; a reason instead when this process cannot. */
function mountTmpfs(t: TestContext, size: string): string | { dir: string; fill(leaveKiB: number): void } {
  if (process.platform !== 'linux') return `tmpfs needs Linux (this is ${process.platform})`;
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root';
  const dir = join(tmpdir(), `sheetrest-full-${process.pid}-${Date.now()}`);
  try {
    execFileSync('mkdir', ['-p', dir]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (error) {
    return `mount -t tmpfs failed here (${String(error).split('\n')[0]})`;
  }
  t.after(() => {
    // Lazily: a source a failed assertion left open must not keep the mount behind.
    execFileSync('umount', ['-l', dir]);
    rmdirSync(dir);
  });
  return {
    dir,
    // Fills the disk with a file of zeros, then gives back `leaveKiB`.
    fill(leaveKiB) {
      try {
        execFileSync('dd', ['if=/dev/zero', `of=${join(dir, 'filler')}`, 'bs=4k'], { stdio: 'ignore' });
      } catch {
        // dd stops at the full disk with an error: that is the point
      }
      if (leaveKiB > 0) execFileSync('truncate', ['-s', `-${leaveKiB}k`, join(dir, 'filler')]);
    },
  };
}

test('on a real full disk, writing the history, the state files or the lock names the file and leaves nothing half-written', async (t) => {
  const mounted = mountTmpfs(t, '256k');
  if (typeof mounted === 'string') return t.skip(mounted);
  mounted.fill(0);
  const at = (name: string) => join(mounted.dir, name);
  const named = (name: string) => new RegExp(`cannot write ${at(name).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: no space left on device \\(ENOSPC\\)`);
  const history = await FoldHistory.load(at('book.compacted'));
  await assert.rejects(history.add({ base: 'b', produced: 'p', entries: [] }), named('book.compacted'));
  await assert.rejects(diskWriter.prepare(at('quota.json'), '{"counts":{}}'), named('quota.json'));
  assert.throws(() => writeFileAtomicSync(at('admin.json'), '{}'), named('admin.json'));
  const { lockStateDir } = await import('../../server/durable/lock.ts');
  assert.throws(() => lockStateDir(mounted.dir), named('lock'));
  assert.deepEqual(await readdir(mounted.dir), ['filler'], 'no partial .compacted, temp or lock file is left');
});

test('on a real full disk, the server starts and serves reads; writes are refused', async (t) => {
  const mounted = mountTmpfs(t, '512k');
  if (typeof mounted === 'string') return t.skip(mounted);
  for (const [name, leaveKiB, expected, logged] of [
    // Room for the lock (one page), not for the journal of 40 KB of writes left by a crash.
    ['the lock fits, the journal does not', 16, 507, /cannot write \S+\/state\/People\.csv\.[0-9a-f]{8}\.journal: no space left on device \(ENOSPC\); serving/],
    ['not even the lock fits', 0, 403, /serving every connection read-only.*cannot write \S+\/state\/lock: no space left on device \(ENOSPC\)/],
  ] as const) {
    await t.test(name, async (t) => {
      const dir = join(mounted.dir, String(leaveKiB));
      await mkdir(dir);
      const path = await writeFixture(dir, CONTRACT_FIXTURE, 'csv');
      const stateDir = join(dir, 'state');
      await mkdir(stateDir);
      const crashed = await openFileSource({ path, stateDir, foldAfterMs: Infinity, log: recordingLog().log });
      for (const name of ['Dee', 'Eve']) assert.equal((await post(appOf(crashed), name.padEnd(20_000, '.'))).status, 201);
      await crashed.abandon();
      mounted.fill(leaveKiB);
      const lines: string[] = [];
      const config = configForFile(path, { stateDir, log: { level: 'info' } }, { env: {} });
      const { url, close } = await startServer(t, config, createLogger('info', (line) => lines.push(line)));
      const read = await fetch(`${url}/sheets/People`);
      assert.equal(read.status, 200);
      assert.deepEqual(((await read.json()) as { Name: string }[]).map((row) => row.Name.slice(0, 3)), ['Ann', 'Bob', 'Cy', 'Dee', 'Eve']);
      const write = await fetch(`${url}/sheets/People`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ Name: 'Fay' }) });
      await write.body?.cancel();
      assert.equal(write.status, expected);
      assert.match(lines.join('\n'), logged);
      assert.deepEqual((await readdir(stateDir)).filter((name) => name.endsWith('.tmp')), [], 'no half-written temp file is left');
      // Space freed: the server stops cleanly (its quota counts saved) and the next start serves every row once.
      await rm(join(mounted.dir, 'filler'));
      await close();
      const again = await openFileSource({ path, stateDir, log: recordingLog().log });
      assert.deepEqual((await names(again)).map((name) => name.slice(0, 3)), ['Ann', 'Bob', 'Cy', 'Dee', 'Eve']);
      await again.close();
    });
  }
});
