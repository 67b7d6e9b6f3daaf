// The CLI as a real process, on the runtime running the test (`node server/main.ts book.xlsx
// --port 0`, `deno run -A server/main.ts ...`, `bun server/main.ts ...`): killed with SIGKILL in
// the middle of a burst of POSTs it still has every acknowledged row after a restart, exactly
// once, in a readable file; stopped with SIGTERM or SIGINT it finishes the writes in flight,
// folds them into the workbook file and exits 0; a file it cannot open stops it with a message
// naming the file, never a stack trace.
import assert from 'node:assert/strict';
import { readdir, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { RUNTIME, burst, getRows, postJson, readBook, runCli, spawnServer, tally, tempDir, within, writeXlsx, type Child, type TestContext } from '../helpers/http.ts';

const SEED = [['Id', 'Name'], ['seed-1', 'Ann'], ['seed-2', 'Bob']];

async function workbook(t: TestContext) {
  const dir = await tempDir(t);
  const path = dir.path('book.xlsx');
  await writeXlsx(path, 'People', SEED);
  return { dir, path, args: [path, '--state-dir', dir.path('state'), '--log-level', 'warn'] };
}

interface Burst {
  /** Ids whose POST was answered 201: the server promised they are durable. */
  readonly acknowledged: string[];
  /** Ids whose POST got no answer (the connection broke or was refused): maybe written, at most once. */
  readonly unanswered: string[];
}

/**
 * POSTs rows `${prefix}${i}` for i < count, `concurrency` at a time. Once `acknowledged` reaches
 * `after`, calls `then` (which kills or stops the server) while the other workers are mid-request
 * and keep sending; with `quiesce`, stops sending first and calls `then` once all are answered.
 */
async function postBurst(
  sheet: string,
  options: { prefix: string; count: number; concurrency: number; after: number; quiesce?: boolean; then: () => Promise<void> | void },
): Promise<Burst> {
  const acknowledged: string[] = [];
  const unanswered: string[] = [];
  let reached = false;
  let fired: Promise<void> | undefined;
  await burst(
    options.count,
    options.concurrency,
    async (i) => {
      const id = `${options.prefix}${i}`;
      try {
        const response = await postJson(sheet, { Id: id, Name: `row ${i}` });
        const text = await response.text();
        if (response.status === 201) acknowledged.push(id);
        // Anything else must be a refusal that says so (403 while shutting down), never a 500.
        else assert.equal(response.status, 403, `POST ${id}: ${response.status} ${text}`);
      } catch (error) {
        if (error instanceof assert.AssertionError) throw error;
        unanswered.push(id);
      }
      if (acknowledged.length >= options.after) reached = true;
      if (reached && !options.quiesce) fired ??= Promise.resolve(options.then());
    },
    () => reached && options.quiesce === true,
  );
  fired ??= Promise.resolve(options.then());
  await fired;
  return { acknowledged, unanswered };
}

function assertEachOnce(ids: readonly string[], burst: Burst): void {
  const counts = tally(ids);
  for (const id of ['seed-1', 'seed-2', ...burst.acknowledged]) assert.equal(counts.get(id), 1, `${id} is there once`);
  for (const [id, count] of counts) assert.equal(count, 1, `${id} is not doubled`);
  const known = new Set(['seed-1', 'seed-2', ...burst.acknowledged, ...burst.unanswered]);
  for (const id of counts.keys()) assert.ok(known.has(id), `${id} was sent`);
}

/** Stops a child with `signal` and answers its exit, failing if it takes more than a few seconds. */
async function stop(child: Child, signal: 'SIGTERM' | 'SIGINT'): Promise<{ code: number | null; signal: string | null }> {
  child.signal(signal);
  return within(8000, `exit after ${signal}`, child.exited);
}

const stackTrace = /^\s+at .+/m;

test(`SIGKILL during a burst of writes loses nothing acknowledged (${RUNTIME})`, async (t) => {
  const moments: [string, { after: number; pauseMs: number }][] = [
    ['right after the first acknowledgement', { after: 1, pauseMs: 0 }],
    ['mid-burst, after 100 acknowledgements', { after: 100, pauseMs: 0 }],
    // Writes stop and go idle for just over the 200 ms after which the journal is folded into the file.
    ['as the idle journal is being folded into the file', { after: 60, pauseMs: 205 }],
  ];
  for (const [moment, { after, pauseMs }] of moments) {
    await t.test(moment, async (t) => {
      const { path, args, dir } = await workbook(t);
      const first = await spawnServer(t, args);
      const sent = await postBurst(`${first.url}/sheets/book`, {
        prefix: 'k',
        count: 300,
        concurrency: 20,
        after,
        quiesce: pauseMs > 0,
        then: async () => {
          if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
          first.signal('SIGKILL');
        },
      });
      assert.equal((await within(5000, 'SIGKILL', first.exited)).signal, 'SIGKILL');
      assert.ok(sent.acknowledged.length >= after);
      // Never torn: whatever moment the kill hit, the file is a whole workbook.
      assert.equal((await readBook(path)).People[0][0], 'Id');

      const second = await spawnServer(t, args);
      const rows = await getRows(`${second.url}/sheets/book`);
      assertEachOnce(rows.map((row) => row.Id), sent);

      assert.deepEqual(await stop(second, 'SIGTERM'), { code: 0, signal: null });
      assert.doesNotMatch(second.stderr(), stackTrace);
      const onDisk = (await readBook(path)).People.slice(1).map((row) => row[0]);
      assert.deepEqual(onDisk, rows.map((row) => row.Id), 'the file holds what the server served');
      assert.deepEqual((await readdir(dir.dir)).filter((name) => name.endsWith('.tmp')), [], 'no temp file left beside the workbook');
    });
  }
});

test(`SIGTERM and SIGINT finish the writes in flight, fold them into the file and exit 0 (${RUNTIME})`, async (t) => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    await t.test(signal, async (t) => {
      const { path, args } = await workbook(t);
      const child = await spawnServer(t, args);
      let exit: Promise<{ code: number | null; signal: string | null }> | undefined;
      const started = performance.now();
      const sent = await postBurst(`${child.url}/sheets/book`, {
        prefix: 's',
        count: 200,
        concurrency: 20,
        after: 40,
        then: () => void (exit = stop(child, signal)),
      });
      assert.deepEqual(await exit, { code: 0, signal: null });
      // Keep-alive connections must not hold up the exit (node:http waits them out otherwise).
      assert.ok(performance.now() - started < 4000, `stopped in ${Math.round(performance.now() - started)} ms`);
      assert.doesNotMatch(child.stderr(), stackTrace);
      // SheetJS reads the workbook alone, without the journal: the writes are in the file itself.
      const onDisk = (await readBook(path)).People.slice(1).map((row) => row[0]);
      assertEachOnce(onDisk, sent);
      // A write the server took in was answered: one that broke off never reached the server.
      assert.deepEqual(sent.unanswered.filter((id) => onDisk.includes(id)), [], 'no write landed without its answer');
    });
  }
});

test(`a file that cannot be served stops the CLI with a message naming it (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  await writeFile(dir.path('garbage.xlsx'), 'this is not a zip archive');
  await writeFile(dir.path('notes.txt'), 'plain text');
  const cases: [string, string, RegExp][] = [
    ['a missing file', dir.path('missing.xlsx'), /missing\.xlsx: file not found/],
    ['a garbage .xlsx', dir.path('garbage.xlsx'), /garbage\.xlsx: not a readable \.xlsx file/],
    ['an unsupported type', dir.path('notes.txt'), /notes\.txt: unsupported file type/],
    ['a folder', dir.dir, /unsupported file type|is a folder/],
  ];
  for (const [name, file, message] of cases) {
    await t.test(name, async () => {
      const run = await runCli([file, '--port', '0', '--state-dir', dir.path('state')]);
      assert.notEqual(run.code, 0);
      assert.match(run.stderr, message);
      assert.doesNotMatch(run.stderr, stackTrace);
      assert.doesNotMatch(run.stdout, /listening/);
    });
  }
});
