// The buffered logger with an injected sink: lines leave in order, in whole-line chunks, after
// the call that logged them (never on the request's own path); `flush()` waits for writes under
// way, `flushSync()` writes what is queued at once, a stopped server has written every line, and
// a process that exits abruptly still writes its queued lines.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import process from 'node:process';
import { test } from 'node:test';
import { setImmediate } from 'node:timers';
import { configForFile } from '../../server/config/config.ts';
import { createLogger, type Logger, type LogSink } from '../../server/log.ts';
import { start } from '../../server/start.ts';
import { REPO_ROOT, RUNTIME, runtimeListen, tempDir, writeXlsx, type TestContext } from '../helpers/http.ts';

/** A sink whose asynchronous writes complete only when `release()` is called. */
function slowSink() {
  const chunks: string[] = [];
  const synced: string[] = [];
  const waiting: Array<() => void> = [];
  const sink: LogSink = {
    write(chunk, done) {
      waiting.push(() => {
        chunks.push(chunk);
        done();
      });
    },
    writeSync(chunk) {
      synced.push(chunk);
    },
  };
  return {
    sink,
    chunks,
    synced,
    inFlight: () => waiting.length,
    release: () => {
      for (const complete of waiting.splice(0)) complete();
    },
  };
}

/** Until the logger's once-a-turn write (a setImmediate queued before this call) has run. */
async function turn(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, 1));
  await new Promise((resolve) => setImmediate(resolve));
}

function messages(chunks: readonly string[]): string[] {
  return chunks.join('').split('\n').filter((line) => line !== '').map((line) => JSON.parse(line).message);
}

test('lines are written after the call, in order, in whole-line chunks', async () => {
  const out = slowSink();
  const log = createLogger('info', out.sink);
  for (let i = 0; i < 2000; i++) log.info(`line ${i}`, { n: i });
  log.debug('below the level');
  assert.equal(out.inFlight(), 0, 'nothing is written on the caller path');
  await turn();
  assert.equal(out.inFlight(), 1, 'one write at a time');
  // More lines while a write is under way queue behind it.
  for (let i = 2000; i < 2100; i++) log.info(`line ${i}`);
  let flushed = false;
  void log.flush().then(() => (flushed = true));
  for (let rounds = 0; !flushed && rounds < 1000; rounds++) {
    assert.ok(out.inFlight() <= 1, 'one write at a time');
    out.release();
    await turn();
  }
  assert.ok(out.chunks.length > 1, 'a long backlog is split into chunks');
  for (const chunk of out.chunks) {
    assert.ok(chunk.endsWith('\n'), 'a chunk holds whole lines');
    assert.ok(new TextEncoder().encode(chunk).byteLength <= 64 * 1024, 'a chunk is at most 64 KiB');
  }
  assert.deepEqual(messages(out.chunks), Array.from({ length: 2100 }, (_, i) => `line ${i}`));
  assert.deepEqual(out.synced, []);
});

test('a few lines are written without a flush, a little later', async () => {
  const out = slowSink();
  const log = createLogger('info', out.sink);
  log.info('alone');
  for (let rounds = 0; out.inFlight() === 0 && rounds < 400; rounds++) await new Promise((resolve) => setTimeout(resolve, 5));
  out.release();
  assert.deepEqual(messages(out.chunks), ['alone']);
});

test('flush() resolves only once every line logged before it is written', async () => {
  const out = slowSink();
  const log = createLogger('warn', out.sink);
  await log.flush();
  log.warn('one');
  log.error('two');
  let flushed = false;
  const flushing = log.flush().then(() => (flushed = true));
  await turn();
  assert.equal(flushed, false, 'the write is still under way');
  out.release();
  await flushing;
  assert.deepEqual(messages(out.chunks), ['one', 'two']);
});

test('flushSync() writes the queued lines at once', () => {
  const out = slowSink();
  const log = createLogger('info', out.sink);
  log.info('a');
  log.warn('b', { detail: 'x' });
  log.flushSync();
  assert.deepEqual(messages(out.synced), ['a', 'b']);
  assert.equal(JSON.parse(out.synced[0].split('\n')[1]).detail, 'x');
  log.flushSync();
  assert.equal(out.synced.length, 1, 'nothing is written twice');
});

test('a plain line writer still gets each line as it is logged', () => {
  const lines: string[] = [];
  const log = createLogger('info', (line) => lines.push(line));
  log.info('now');
  assert.deepEqual(messages(lines.map((line) => line + '\n')), ['now']);
});

test(`a stopped server has written its request lines (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const path = dir.path('book.xlsx');
  await writeXlsx(path, 'People', [['Name'], ['Ann']]);
  const out = slowSink();
  // Writes complete a little later, as a pipe's do.
  const timer = setInterval(out.release, 5);
  t.after(() => clearInterval(timer));
  const log = createLogger('info', out.sink);
  let flushes = 0;
  const counted: Logger = { ...log, flush: () => (flushes++, log.flush()) };
  const running = await start({ ...configForFile(path, { stateDir: dir.path('state') }), host: '127.0.0.1', port: 0 }, { listen: await runtimeListen(), log: counted });
  for (let i = 0; i < 20; i++) await (await fetch(`${running.url}/sheets/book`)).arrayBuffer();
  await running.close();
  assert.equal(flushes, 1, 'close() waits for the log (whose flush() waits for its writes, as tested above)');
  assert.equal(out.inFlight(), 0);
  assert.equal(messages(out.chunks).filter((message) => message === 'request').length, 20);
});

/**
 * A script that logs through server/log.ts (`createLogger` imported, then `lines`), written to a
 * temp folder; the arguments that run it on the runtime running the test.
 */
async function loggingScript(t: TestContext, lines: readonly string[]): Promise<string[]> {
  const script = (await tempDir(t)).path('log.ts');
  const logModule = new URL('../../server/log.ts', import.meta.url).href;
  await writeFile(script, [`import { createLogger } from ${JSON.stringify(logModule)};`, ...lines, ''].join('\n'));
  return RUNTIME === 'deno' ? ['run', '-A', script] : [script];
}

test(`an abrupt exit still writes the queued lines to stderr (${RUNTIME})`, async (t) => {
  const args = await loggingScript(t, [
    `import process from 'node:process';`,
    `const log = createLogger('info');`,
    `for (let i = 0; i < 2000; i++) log.info('line ' + i);`,
    `process.exit(3);`,
  ]);
  const run = spawnSync(process.execPath, args, { cwd: REPO_ROOT, encoding: 'utf8' });
  assert.equal(run.status, 3, run.stderr);
  const lines = run.stderr.split('\n').filter((line) => line.startsWith('{'));
  assert.deepEqual(
    lines.map((line) => JSON.parse(line).message),
    Array.from({ length: 2000 }, (_, i) => `line ${i}`),
  );
});

test('a line is the JSON of {time, level, message, ...fields}, undefined fields left out', async (t) => {
  const cases: [string, Record<string, unknown> | undefined][] = [
    ['request', { method: 'GET', status: 200, connection: undefined, path: 'a"b\n' }],
    ['no fields', undefined],
    ['empty fields', {}],
    ['π "quoted"', { nested: { a: [1, null] } }],
  ];
  for (const [message, fields] of cases) {
    await t.test(message, () => {
      const lines: string[] = [];
      createLogger('info', (line) => lines.push(line)).warn(message, fields);
      assert.equal(lines.length, 1);
      const time = (JSON.parse(lines[0]) as { time: string }).time;
      assert.match(time, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      assert.equal(lines[0], JSON.stringify({ time, level: 'warn', message, ...fields }));
    });
  }
});

test('fields given as a function are built when the line is written, not on the caller path', async () => {
  const out = slowSink();
  const log = createLogger('info', out.sink);
  let built = 0;
  log.info('lazy', () => {
    built++;
    return { path: '/sheets/demo/…', status: 200 };
  });
  log.debug('below the level', () => {
    built += 100;
    return {};
  });
  assert.equal(built, 0, 'nothing is built when the line is logged');
  const flushing = log.flush();
  await turn();
  out.release();
  await flushing;
  assert.equal(built, 1, 'built once, when its chunk was made; never for a level below the threshold');
  const line = JSON.parse(out.chunks.join('').trim()) as Record<string, unknown>;
  assert.deepEqual({ message: line.message, path: line.path, status: line.status }, { message: 'lazy', path: '/sheets/demo/…', status: 200 });
});

test(`stderr that a reader drains late still gets every line whole and in order, any text (${RUNTIME})`, async (t) => {
  // 2 MB of lines with text of one to four UTF-8 bytes a character, written as text (the runtime
  // encodes it) while the pipe is full and the writes wait for the reader.
  const args = await loggingScript(t, [
    `const log = createLogger('info');`,
    `for (let i = 0; i < 20000; i++) log.info('Zürich 名前 🦕 ' + i, { i });`,
    `await log.flush();`,
  ]);
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  const chunks: Buffer[] = [];
  // Nothing is read for the first 300 ms: the pipe (64 KiB) fills and the writer must wait.
  child.stderr.pause();
  child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
  setTimeout(() => child.stderr.resume(), 300);
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const text = Buffer.concat(chunks).toString('utf8');
  assert.equal(status, 0, text.slice(-500));
  const lines = text.split('\n').filter((line) => line.startsWith('{'));
  assert.equal(lines.length, 20000);
  lines.forEach((line, i) => assert.equal(JSON.parse(line).message, `Zürich 名前 🦕 ${i}`));
});
