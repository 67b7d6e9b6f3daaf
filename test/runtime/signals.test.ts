// Stopping a server whose stop signal arrives twice: `npm start` (and systemd, container runtimes,
// `kill -TERM -PGID`) signals the whole process group, and npm forwards the signal to its child
// as well. The repeat is ignored, the server finishes its work and exits 0, and nothing is lost:
// the quota counts are in quota.json, the journaled writes in the workbook file, no temp file or
// lock is left. Run through the real `npm start` (which runs Node: `node server/main.ts`) and, on
// every runtime, with the runtime's own CLI signalled as npm would. Only a signal after the 3 s
// window forces the exit, which, like an uncaught exception, still saves the counts and frees
// the state folder.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import process from 'node:process';
import { test } from 'node:test';
import { RUNTIME, REPO_ROOT, cliCommand, defer, getRows, postJson, readBook, tempDir, within, writeXlsx, type TestContext } from '../helpers/http.ts';

const PLAN_LIMIT = 5;

/** A config with one connection on a small plan, its state folder beside it. */
async function configured(t: TestContext) {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Id', 'Name'], ['seed-1', 'Ann']]);
  const config = {
    stateDir: 'state',
    log: { level: 'warn' },
    connections: [{ id: 'book', source: { type: 'file', path: 'book.xlsx' }, plan: { name: 'small', monthlyRequests: PLAN_LIMIT } }],
  };
  await writeFile(dir.path('sheetrest.json'), JSON.stringify(config));
  return { dir, args: ['--config', dir.path('sheetrest.json'), '--host', '127.0.0.1', '--port', '0'] };
}

interface Group {
  readonly url: string;
  /** The process group's leader (npm, or the server itself). */
  readonly pid: number;
  /** Resolves once every process holding the output pipes (npm and the server) has exited. */
  readonly closed: Promise<void>;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  stderr(): string;
}

/** Spawns `command` as the leader of a new process group and waits for the server's URL. */
async function spawnGroup(t: TestContext, command: string, argv: readonly string[]): Promise<Group> {
  const child = spawn(command, argv, { cwd: REPO_ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  const pid = child.pid;
  assert.ok(pid !== undefined, `${command} did not start`);
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const closed = Promise.all([new Promise((resolve) => child.stdout.on('close', resolve)), new Promise((resolve) => child.stderr.on('close', resolve))]).then(() => undefined);
  defer(t, async () => {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
    await closed;
  });
  const url = await within(20_000, `the server's "listening" line (stderr: ${stderr})`, new Promise<string>((resolve) => {
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      const found = /listening on (http:\/\/\S+)/.exec(stdout);
      if (found !== null) resolve(found[1]);
    });
  }));
  return { url, pid, closed, exited, stderr: () => stderr };
}

/** Uses up the plan: writes and reads until the first 402. Answers the ids written. */
async function useThePlan(url: string): Promise<string[]> {
  const sheet = `${url}/sheets/book`;
  const written: string[] = [];
  for (let i = 0; i < PLAN_LIMIT - 1; i++) {
    const response = await postJson(sheet, { Id: `w${i}`, Name: `row ${i}` });
    assert.equal(response.status, 201, await response.text());
    written.push(`w${i}`);
  }
  assert.equal((await getRows(sheet)).length, 1 + written.length);
  const over = await fetch(sheet);
  assert.equal(over.status, 402, 'the plan is used up');
  await over.body?.cancel();
  return written;
}

async function assertNothingLost(dir: { path(name: string): string }, written: readonly string[]): Promise<void> {
  const quota = JSON.parse(await readFile(dir.path('state/quota.json'), 'utf8')) as { counts: Record<string, number> };
  assert.equal(quota.counts.book, PLAN_LIMIT, 'every counted request is in quota.json');
  const state = await readdir(dir.path('state'));
  assert.deepEqual(state.filter((name) => name.endsWith('.tmp') || name === 'lock' || name.startsWith('lock.')), [], `no temp file or lock left: ${state.join(', ')}`);
  const rows = (await readBook(dir.path('book.xlsx'))).People.slice(1).map((row) => row[0]);
  assert.deepEqual(rows, ['seed-1', ...written], 'the journaled writes are in the workbook file');
}

test(`SIGTERM to the process group of \`npm start\` loses no quota count and no write (${RUNTIME})`, async (t) => {
  // npm forwards the signal to the shell running the script. bash runs a lone command in its
  // place, so the server gets the signal twice, as under macOS's sh or in many images; Debian's
  // dash keeps itself in between and dies of the signal instead, so nothing is forwarded.
  if (!existsSync('/bin/bash')) return t.skip('no /bin/bash for npm --script-shell, through which npm forwards its signal to the server');
  const { dir, args } = await configured(t);
  const group = await spawnGroup(t, 'npm', ['start', '--silent', '--script-shell=/bin/bash', '--', ...args]);
  const written = await useThePlan(group.url);
  // Right away, inside the 250 ms the counts may stay in memory: what systemd or docker stop does.
  process.kill(-group.pid, 'SIGTERM');
  // npm waits for its script and exits with its code.
  assert.deepEqual(await within(15_000, 'npm and the server exit', group.exited), { code: 0, signal: null }, group.stderr());
  await group.closed;
  assert.doesNotMatch(group.stderr(), /exiting without waiting/);
  assert.doesNotMatch(group.stderr(), /^\s+at .+/m, 'no stack trace');
  await assertNothingLost(dir, written);
});

/**
 * A POST held in flight on a raw socket, so that the server is still stopping when the echo of
 * the signal arrives: the head and all of the body but its last byte are sent (after a GET on the
 * same connection, so the connection is known to be up); `finish()` sends the last byte and
 * answers the status line.
 */
async function heldPost(url: string, row: Record<string, string>): Promise<{ finish(): Promise<string> }> {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  socket.setEncoding('latin1');
  let received = '';
  let waiting: (() => void) | undefined;
  socket.on('data', (text: string) => {
    received += text;
    waiting?.();
  });
  // Whether `count` whole answers (head and Content-Length bytes of body) have arrived.
  const complete = (count: number): boolean => {
    let at = 0;
    for (let i = 0; i < count; i++) {
      const end = received.indexOf('\r\n\r\n', at);
      if (end === -1) return false;
      const length = Number(/content-length: (\d+)/i.exec(received.slice(at, end))?.[1] ?? 0);
      at = end + 4 + length;
      if (received.length < at) return false;
    }
    return true;
  };
  const answered = async (count: number): Promise<void> => {
    while (!complete(count)) await new Promise<void>((resolve) => (waiting = resolve));
  };
  const body = JSON.stringify(row);
  socket.write(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
  await answered(1);
  socket.write(`POST /sheets/book HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, -1)}`);
  return {
    async finish() {
      socket.write(body.slice(-1));
      await answered(2);
      socket.destroy();
      return received.slice(received.lastIndexOf('HTTP/1.1'), received.lastIndexOf('HTTP/1.1') + 12);
    },
  };
}

test(`a repeated stop signal within 3 s is ignored; the server finishes and exits 0 (${RUNTIME})`, async (t) => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    await t.test(signal, async (t) => {
      const { dir, args } = await configured(t);
      const [command, argv] = cliCommand(args);
      const group = await spawnGroup(t, command, argv);
      const written: string[] = [];
      assert.equal((await getRows(`${group.url}/sheets/book`)).length, 1);
      for (const id of ['w0', 'w1', 'w2']) {
        const response = await postJson(`${group.url}/sheets/book`, { Id: id, Name: id });
        assert.equal(response.status, 201, await response.text());
        written.push(id);
      }
      const held = await heldPost(group.url, { Id: 'held', Name: 'in flight' });
      // Let the server read the head: the request is in flight, not a connection to drop.
      await new Promise((resolve) => setTimeout(resolve, 100));
      // The group's signal, then npm's echo of it, once the first is being handled.
      process.kill(-group.pid, signal);
      await within(5000, 'the first signal handled', waitFor(() => group.stderr().includes(`${signal}: finishing`)));
      process.kill(group.pid, signal);
      await within(5000, 'the echo ignored', waitFor(() => group.stderr().includes(`${signal} again within 3 s: ignored`)));
      assert.equal(await held.finish(), 'HTTP/1.1 201', 'the request in flight is finished');
      assert.deepEqual(await within(15_000, 'exit', group.exited), { code: 0, signal: null }, group.stderr());
      await assertNothingLost(dir, [...written, 'held']);
    });
  }
});

test(`a stop signal after the 3 s window forces the exit, still saving the counts and freeing the lock (${RUNTIME})`, async (t) => {
  const { dir, args } = await configured(t);
  const [command, argv] = cliCommand(args);
  const group = await spawnGroup(t, command, argv);
  assert.equal((await getRows(`${group.url}/sheets/book`)).length, 1);
  // Held until the end: the orderly stop cannot finish, so only the forced exit ends the process.
  await heldPost(group.url, { Id: 'held', Name: 'in flight' });
  await new Promise((resolve) => setTimeout(resolve, 100));
  process.kill(-group.pid, 'SIGTERM');
  await within(5000, 'the first signal handled', waitFor(() => group.stderr().includes('SIGTERM: finishing')));
  await new Promise((resolve) => setTimeout(resolve, 3200));
  process.kill(group.pid, 'SIGTERM');
  assert.deepEqual(await within(15_000, 'exit', group.exited), { code: 1, signal: null }, group.stderr());
  assert.match(group.stderr(), /SIGTERM again, exiting without waiting/);
  const quota = JSON.parse(await readFile(dir.path('state/quota.json'), 'utf8')) as { counts: Record<string, number> };
  assert.equal(quota.counts.book, 2, 'the GET and the held POST are counted');
  const state = await readdir(dir.path('state'));
  assert.deepEqual(state.filter((name) => name.endsWith('.tmp') || name === 'lock'), [], `no temp file or lock left: ${state.join(', ')}`);
});

// How each runtime loads a module before the CLI: here, one that turns SIGUSR2 into an uncaught exception.
const PRELOAD = { node: ['--import'], deno: ['run', '-A', '--preload'], bun: ['--preload'] } as const;

test(`an uncaught exception exits 1, still saving the counts and freeing the lock (${RUNTIME})`, async (t) => {
  const { dir, args } = await configured(t);
  await writeFile(dir.path('crash.mjs'), "import process from 'node:process';\nprocess.on('SIGUSR2', () => { throw new Error('injected by the test'); });\n");
  const group = await spawnGroup(t, process.execPath, [...PRELOAD[RUNTIME], dir.path('crash.mjs'), 'server/main.ts', ...args]);
  const sheet = `${group.url}/sheets/book`;
  assert.equal((await getRows(sheet)).length, 1);
  for (const id of ['w0', 'w1']) {
    const response = await postJson(sheet, { Id: id, Name: id });
    assert.equal(response.status, 201, await response.text());
  }
  // At once: the counts may still be only in memory.
  process.kill(group.pid, 'SIGUSR2');
  assert.deepEqual(await within(15_000, 'exit', group.exited), { code: 1, signal: null }, group.stderr());
  assert.match(group.stderr(), /unexpected error, exiting: Error: injected by the test/);
  const quota = JSON.parse(await readFile(dir.path('state/quota.json'), 'utf8')) as { counts: Record<string, number> };
  assert.equal(quota.counts.book, 3);
  const state = await readdir(dir.path('state'));
  assert.deepEqual(state.filter((name) => name.endsWith('.tmp') || name === 'lock'), [], `no temp file or lock left: ${state.join(', ')}`);
  // The acknowledged writes are in the journal: the next start serves them.
  const [command, argv] = cliCommand(args);
  const next = await spawnGroup(t, command, argv);
  assert.deepEqual((await getRows(`${next.url}/sheets/book`)).map((row) => row.Id), ['seed-1', 'w0', 'w1']);
});

async function waitFor(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}
