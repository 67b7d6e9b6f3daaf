// One server per state folder: `lockStateDir` takes `<stateDir>/lock` or names the live process
// holding it, takes over stale locks (a dead pid, our own pid left by a crash, a damaged file),
// and a second start on a running server's state folder, in-process or as a CLI child, refuses
// with a message naming the folder and the pid, touches nothing there, and leaves the first one
// serving every acknowledged write exactly once. Also: leftover temp files are removed at start,
// and the port is bound before any journal is recovered. A lock whose process is a zombie (killed,
// not yet reaped) or whose pid now belongs to a process started at another time is stale.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';
import { test } from 'node:test';
import { configForFile } from '../../server/config/config.ts';
import { isAlive, lockStateDir, parseProcStat, processStat, StateDirLocked } from '../../server/durable/lock.ts';
import type { Listen } from '../../server/runtime/listener.ts';
import { createLogger } from '../../server/log.ts';
import { start } from '../../server/start.ts';
import { removeLeftoverTempFiles } from '../../server/durable/state.ts';
import { removeStaleTempFiles } from '../../server/durable/disk.ts';
import { RUNTIME, burst, getRows, postJson, readBook, runCli, runtimeListen, spawnServer, startServer, tally, tempDir, within, writeXlsx, type TestContext } from '../helpers/http.ts';

const SEED = [['Id', 'Name'], ['seed-1', 'Ann'], ['seed-2', 'Bob']];

/** A pid that no process has: one that just exited (pids are reused only after wrapping). */
function deadPid(): number {
  const pid = spawnSync('true').pid;
  assert.ok(pid !== undefined && pid > 0);
  return pid;
}

test('lockStateDir takes a free or stale lock and refuses a live one', async (t) => {
  const dir = await tempDir(t);
  const cases: [string, string | null, 'taken' | 'refused'][] = [
    ['no lock file', null, 'taken'],
    ['a lock of a process that is gone', JSON.stringify({ pid: deadPid(), started: '2026-01-01T00:00:00.000Z' }), 'taken'],
    ['a lock naming this pid that this process does not hold (pid 1 in a container)', JSON.stringify({ pid: process.pid, started: 'earlier' }), 'taken'],
    ['a damaged lock file', '{"pid":', 'taken'],
    ['an empty lock file', '', 'taken'],
    // pid 1 (init) is alive; kill(1, 0) answers EPERM to a non-root user, which still means alive.
    ['a lock of a live process', JSON.stringify({ pid: 1, started: '2026-01-01T00:00:00.000Z' }), 'refused'],
  ];
  for (const [name, content, expected] of cases) {
    await t.test(name, async () => {
      const stateDir = join(dir.dir, name.replace(/\W+/g, '-'));
      await mkdir(stateDir);
      if (content !== null) await writeFile(join(stateDir, 'lock'), content);
      if (expected === 'refused') {
        assert.throws(() => lockStateDir(stateDir), (error: unknown) => {
          assert.ok(error instanceof StateDirLocked);
          assert.match(error.message, new RegExp(`state folder ${stateDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another sheetrest process \\(pid 1,`));
          return true;
        });
        assert.equal(await readFile(join(stateDir, 'lock'), 'utf8'), content, 'a live lock is left alone');
        assert.deepEqual(await readdir(stateDir), ['lock'], 'nothing else was created');
        return;
      }
      const lock = lockStateDir(stateDir);
      const held = JSON.parse(await readFile(join(stateDir, 'lock'), 'utf8')) as { pid: number; started: string };
      assert.equal(held.pid, process.pid);
      assert.ok(!Number.isNaN(Date.parse(held.started)), 'the start time is recorded');
      assert.equal(((await stat(join(stateDir, 'lock'))).mode & 0o777).toString(8), '600');
      // Held by this process now: a second take in the same process is refused too.
      assert.throws(() => lockStateDir(stateDir), StateDirLocked);
      lock.release();
      lock.release();
      assert.deepEqual(await readdir(stateDir), [], 'release removes the lock and leaves nothing behind');
    });
  }
});

test('parseProcStat reads the state and start time after the last parenthesis of the command name', async (t) => {
  // Real lines from /proc/<pid>/stat, fields 1-22 and more; the name is whatever the process set.
  const tail = '1 4121 4121 0 -1 4194560 1092 0 0 0 3 1 0 0 20 0 11 0';
  const cases: [string, string, { state: string; startTicks: number } | undefined][] = [
    ['a plain name', `4121 (node) S ${tail} 8812345 1263239168 13790 18446744073709551615`, { state: 'S', startTicks: 8812345 }],
    ['a zombie', `4122 (sleep) Z ${tail} 8812400 0 0 18446744073709551615`, { state: 'Z', startTicks: 8812400 }],
    ['a name with spaces and parentheses', `4123 (a) Z (b c)) R ${tail} 99 0 0`, { state: 'R', startTicks: 99 }],
    ['a name that looks like fields', `4124 (x) Z 1 2 3) X ${tail} 7 0`, { state: 'X', startTicks: 7 }],
    ['a line cut short', `4125 (node) S 1 4121`, undefined],
    ['no parentheses', `4126 node S ${tail} 5`, undefined],
    ['a start time that is not a number', `4127 (node) S ${tail} soon 0`, undefined],
  ];
  for (const [name, line, expected] of cases) {
    await t.test(name, () => assert.deepEqual(parseProcStat(line), expected));
  }
});

/** Starts `sh -c 'sleep 0 & echo $!; exec sleep 30'`: the exec'd sleep never reaps its child, a zombie. Answers both pids. */
async function zombie(t: TestContext): Promise<{ parent: number; zombie: number } | string> {
  if (processStat(process.pid) === undefined) return 'no /proc here to tell a zombie by';
  const child = spawn('sh', ['-c', 'sleep 0 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
  t.after(() => void child.kill('SIGKILL'));
  const pid = await new Promise<number>((resolve, reject) => {
    child.stdout.once('data', (data: Uint8Array) => resolve(Number(new TextDecoder().decode(data).trim())));
    child.once('error', reject);
  });
  for (let waited = 0; processStat(pid)?.state !== 'Z'; waited += 20) {
    if (waited > 5000) return `process ${pid} did not become a zombie (${processStat(pid)?.state ?? 'gone'})`;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(child.pid !== undefined);
  return { parent: child.pid, zombie: pid };
}

test('a lock held by a zombie, or by a pid reused since, is stale and taken over', async (t) => {
  const dir = await tempDir(t);
  const found = await zombie(t);
  if (typeof found === 'string') return t.skip(found);
  // The zombie's parent is a live process (the exec'd sleep), with a known start time.
  const since = processStat(found.parent)?.startTicks;
  assert.ok(since !== undefined);
  const cases: [string, object, 'taken' | 'refused'][] = [
    ['a zombie (killed, not yet reaped by its parent)', { pid: found.zombie, started: '2026-01-01T00:00:00.000Z' }, 'taken'],
    ['a zombie, with its start time', { pid: found.zombie, started: 'x', since: processStat(found.zombie)?.startTicks }, 'taken'],
    ['a live pid that started at another time than the lock says (reused)', { pid: found.parent, started: 'x', since: since + 1 }, 'taken'],
    ['a live pid that started when the lock says', { pid: found.parent, started: 'x', since }, 'refused'],
    ['a live pid, in a lock of an older version (no start time)', { pid: found.parent, started: 'x' }, 'refused'],
  ];
  for (const [name, holder, expected] of cases) {
    await t.test(name, async () => {
      const stateDir = join(dir.dir, name.replace(/\W+/g, '-'));
      await mkdir(stateDir);
      await writeFile(join(stateDir, 'lock'), JSON.stringify(holder));
      if (expected === 'refused') {
        assert.throws(() => lockStateDir(stateDir), StateDirLocked);
        return;
      }
      const lock = lockStateDir(stateDir);
      const written = JSON.parse(await readFile(join(stateDir, 'lock'), 'utf8')) as { pid: number; since?: number };
      assert.equal(written.pid, process.pid);
      assert.equal(written.since, processStat(process.pid)?.startTicks, 'the new lock records its own start time');
      lock.release();
    });
  }
});

test('isAlive tells this process from a pid whose start time differs', (t) => {
  const own = processStat(process.pid);
  if (own === undefined) return t.skip('no /proc here: kill(pid, 0) alone decides');
  assert.equal(own.state === 'Z', false);
  assert.equal(isAlive(process.pid, own.startTicks), true);
  assert.equal(isAlive(process.pid), true);
  assert.equal(isAlive(process.pid, own.startTicks + 1), false);
  assert.equal(isAlive(deadPid()), false);
});

test('a stale takeover guard left by a crashed start is cleared', async (t) => {
  const dir = await tempDir(t);
  await writeFile(dir.path('lock'), JSON.stringify({ pid: deadPid(), started: 'x' }));
  await writeFile(dir.path('lock.takeover'), JSON.stringify({ pid: deadPid(), started: 'x' }));
  const lock = lockStateDir(dir.dir);
  assert.deepEqual(await readdir(dir.dir), ['lock']);
  lock.release();
});

test('release leaves a lock that is no longer ours alone', async (t) => {
  const dir = await tempDir(t);
  const lock = lockStateDir(dir.dir);
  const other = JSON.stringify({ pid: 1, started: 'someone else' });
  await writeFile(dir.path('lock'), other);
  lock.release();
  assert.equal(await readFile(dir.path('lock'), 'utf8'), other);
});

test('leftover temp files are removed from the state folder, and nothing else', async (t) => {
  const dir = await tempDir(t);
  const leftovers = [
    '.quota.json.4121.7.tmp', '.book.xlsx.1a2b3c4d.journal.sheetrest-0a1b2c3d4e5f.tmp', 'lock.4121.tmp',
    '.book.xlsx.1a2b3c4d.journal.sheetrest-4121-0a1b2c3d4e5f.tmp', '.book.xlsx.1a2b3c4d.compacted.sheetrest-4121-0a1b2c3d4e5f.tmp',
    '.quota.json.sheetrest-4121-0a1b2c3d4e5f.tmp', '.admin.json.sheetrest-4121-0a1b2c3d4e5f.tmp',
  ];
  const kept = ['quota.json', 'book.xlsx.1a2b3c4d.journal', 'book.xlsx.conflict-2026-01-01T00-00-00-000Z.jsonl', 'lock', 'notes.tmp'];
  for (const name of [...leftovers, ...kept]) await writeFile(dir.path(name), 'x');
  assert.deepEqual((await removeLeftoverTempFiles(dir.dir)).sort(), leftovers.slice().sort());
  assert.deepEqual((await readdir(dir.dir)).sort(), kept.slice().sort());
});

test(`start() removes the temp files a crash left in the state folder, once it holds the lock (${RUNTIME})`, async (t) => {
  const { path, stateDir } = await book(t);
  await mkdir(stateDir);
  const leftovers = ['.quota.json.4121.3.tmp', '.book.xlsx.0badc0de.journal.sheetrest-00112233aabb.tmp'];
  for (const name of leftovers) await writeFile(join(stateDir, name), 'left by a crash');
  const served = await startServer(t, configForFile(path, { stateDir }));
  assert.deepEqual((await readdir(stateDir)).filter((name) => name.endsWith('.tmp')), []);
  await served.close();
});

/**
 * A snapshot once the first server has finished its own after-fold steps (the journal
 * replaced, the fold history appended): the same twice, 300 ms apart.
 */
async function settledSnapshot(...folders: string[]): Promise<Record<string, string>> {
  let last = await snapshot(...folders);
  for (let tries = 0; tries < 30; tries++) {
    await new Promise((resolve) => setTimeout(resolve, 300));
    const next = await snapshot(...folders);
    if (JSON.stringify(next) === JSON.stringify(last)) return next;
    last = next;
  }
  throw new Error('the state folder kept changing for 9 s after the first server went idle');
}

/** name -> inode, size, mtime and content hash of every file in the folders: any change shows. */
async function snapshot(...folders: string[]): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const folder of folders) {
    for (const name of (await readdir(folder)).sort()) {
      const path = join(folder, name);
      try {
        const info = await stat(path);
        if (!info.isFile()) continue;
        result[path] = `${info.ino}:${info.size}:${info.mtimeMs}:${createHash('sha256').update(await readFile(path)).digest('hex')}`;
      } catch (error) {
        // Renamed away between the listing and the read (a temp file the server just committed):
        // recorded as such, so the folder is not yet settled.
        if ((error as { code?: string }).code !== 'ENOENT') throw error;
        result[path] = 'gone';
      }
    }
  }
  return result;
}

async function book(t: TestContext) {
  const dir = await tempDir(t);
  const path = dir.path('book.xlsx');
  await writeXlsx(path, 'People', SEED);
  return { dir, path, stateDir: dir.path('state') };
}

/** POSTs rows `${prefix}${i}`; answers the ids acknowledged with 201 (anything else fails the test). */
async function postRows(sheet: string, prefix: string, count: number, concurrency: number, during?: () => Promise<void>): Promise<string[]> {
  const acknowledged: string[] = [];
  let fired: Promise<void> | undefined;
  await burst(count, concurrency, async (i) => {
    const response = await postJson(sheet, { Id: `${prefix}${i}`, Name: `row ${i}` });
    const text = await response.text();
    assert.equal(response.status, 201, `POST ${prefix}${i}: ${text}`);
    acknowledged.push(`${prefix}${i}`);
    // Mid-burst: the first server is appending to its journal while the second one starts.
    if (acknowledged.length === Math.floor(count / 4)) fired ??= during?.();
  });
  await fired;
  return acknowledged;
}

function assertEachOnce(ids: readonly string[], acknowledged: readonly string[]): void {
  const counts = tally(ids);
  for (const id of ['seed-1', 'seed-2', ...acknowledged]) assert.equal(counts.get(id), 1, `${id} is in the file once`);
  assert.equal(ids.length, 2 + acknowledged.length, 'nothing else is in the file');
}

test(`a second start() on a running server's state folder refuses and touches nothing (${RUNTIME})`, async (t) => {
  const { dir, path, stateDir } = await book(t);
  const config = configForFile(path, { stateDir });
  const first = await startServer(t, config);
  const sheet = `${first.url}/sheets/book`;
  const listen = await runtimeListen();
  const secondStart = () => start({ ...config, host: '127.0.0.1', port: 0 }, { listen, log: createLogger('silent') });

  // While the first server appends acknowledged writes to its journal.
  let refusal: unknown;
  const acknowledged = await postRows(sheet, 'w', 200, 16, async () => {
    refusal = await secondStart().then(
      async (second) => {
        await second.close();
        return new Error('the second start succeeded');
      },
      (error: unknown) => error,
    );
  });
  assert.ok(refusal instanceof StateDirLocked, String(refusal));
  assert.match(refusal.message, new RegExp(`${stateDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another sheetrest process \\(pid ${process.pid},`));

  // Once the first is idle (its journal folded into the file): the second changes no byte.
  await within(10_000, 'the journal folded into the file', waitFor(async () => (await readBook(path)).People.length === 2 + acknowledged.length + 1));
  const before = await settledSnapshot(stateDir, dir.dir);
  await assert.rejects(secondStart(), StateDirLocked);
  assert.deepEqual(await snapshot(stateDir, dir.dir), before, 'the state folder and the workbook are untouched');

  // The first keeps serving, writes included.
  const more = await postRows(sheet, 'x', 20, 4);
  assertEachOnce((await getRows(sheet)).map((row) => row.Id), [...acknowledged, ...more]);
  await first.close();
  assertEachOnce((await readBook(path)).People.slice(1).map((row) => row[0]), [...acknowledged, ...more]);
  assert.deepEqual(await readdir(stateDir).then((names) => names.filter((name) => name === 'lock' || name.endsWith('.tmp'))), [], 'the lock is released on close');

  // And the folder is free again.
  const third = await secondStart();
  await third.close();
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
}

test(`a second CLI on a running server's state folder exits non-zero naming the folder and the pid (${RUNTIME})`, async (t) => {
  const { dir, path, stateDir } = await book(t);
  const args = [path, '--state-dir', stateDir, '--log-level', 'warn'];
  const first = await spawnServer(t, args);
  const sheet = `${first.url}/sheets/book`;
  let run: Awaited<ReturnType<typeof runCli>> | undefined;
  const acknowledged = await postRows(sheet, 'c', 300, 16, async () => {
    run = await runCli([...args, '--port', '0']);
  });
  assert.ok(run !== undefined);
  assert.notEqual(run.code, 0, run.stderr);
  assert.match(run.stderr, new RegExp(`${stateDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is in use by another sheetrest process \\(pid ${first.process.pid},`));
  assert.doesNotMatch(run.stdout, /listening/);
  assert.doesNotMatch(run.stderr, /^\s+at .+/m, 'no stack trace');

  // Idle, then a second refusal must leave every byte as it was.
  await within(10_000, 'the journal folded into the file', waitFor(async () => (await readBook(path)).People.length === 2 + acknowledged.length + 1));
  const before = await settledSnapshot(stateDir, dir.dir);
  assert.notEqual((await runCli([...args, '--port', '0'])).code, 0);
  assert.deepEqual(await snapshot(stateDir, dir.dir), before, 'the state folder and the workbook are untouched');

  assertEachOnce((await getRows(sheet)).map((row) => row.Id), acknowledged);
  first.signal('SIGTERM');
  assert.deepEqual(await within(8000, 'exit after SIGTERM', first.exited), { code: 0, signal: null });
  assertEachOnce((await readBook(path)).People.slice(1).map((row) => row[0]), acknowledged);
  assert.ok(!(await readdir(stateDir)).includes('lock'), 'the lock is released on exit');
});

test(`the port is bound before any journal is recovered; requests meanwhile get 503 (${RUNTIME})`, async (t) => {
  const { path, stateDir } = await book(t);
  const config = configForFile(path, { stateDir });
  // A listener that records what the state folder held when it was asked to bind, and answers
  // one request through the handler it was given, before the sources are open.
  const realListen = await runtimeListen();
  let seen: { files: string[]; status: number; retryAfter: string | null; body: unknown } | undefined;
  const listen: Listen = async (app, options) => {
    const response = await app.fetch(new Request('http://127.0.0.1/sheets/book'));
    seen = { files: await readdir(stateDir), status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() };
    return realListen(app, options);
  };
  const running = await start({ ...config, host: '127.0.0.1', port: 0 }, { listen, log: createLogger('silent') });
  try {
    assert.deepEqual(seen?.files, ['lock'], 'no journal yet: the port is bound first');
    assert.equal(seen?.status, 503);
    assert.equal(seen?.retryAfter, '1');
    assert.equal((seen?.body as { error: string }).error, 'upstream_unavailable');
    assert.equal((await getRows(`${running.url}/sheets/book`)).length, 2, 'then it serves');
  } finally {
    await running.close();
  }
});

test(`a port already in use stops the start before the journal is touched, and frees the lock (${RUNTIME})`, async (t) => {
  const { path, stateDir } = await book(t);
  const config = configForFile(path, { stateDir });
  const failing: Listen = async () => {
    throw Object.assign(new Error('listen EADDRINUSE: address already in use 127.0.0.1:8080'), { code: 'EADDRINUSE' });
  };
  await assert.rejects(start(config, { listen: failing, log: createLogger('silent') }), /EADDRINUSE/);
  assert.deepEqual(await readdir(stateDir), [], 'no journal, no quota file, no lock');
});

test('temp files beside a workbook are removed at open unless their process is alive', async (t) => {
  const dir = await tempDir(t);
  // No pid can exceed Linux's 2^22 limit, so this one is always gone; the parent is always alive.
  const gone = 4_194_305;
  const removed = ['.book.xlsx.sheetrest-0a1b2c3d4e5f.tmp', `.book.xlsx.sheetrest-${gone}-0a1b2c3d4e5f.tmp`, `.book.xlsx.sheetrest-${process.pid}-0a1b2c3d4e5f.tmp`];
  const kept = [`.book.xlsx.sheetrest-${process.ppid}-0a1b2c3d4e5f.tmp`, 'book.xlsx', '.other.xlsx.sheetrest-0a1b2c3d4e5f.tmp'];
  for (const name of [...removed, ...kept]) await writeFile(dir.path(name), 'x');
  assert.equal(await removeStaleTempFiles(dir.path('book.xlsx')), removed.length);
  assert.deepEqual((await readdir(dir.dir)).sort(), kept.slice().sort());
});
