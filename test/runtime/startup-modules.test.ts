// What a Node server loads: started with only file connections it never loads Google's client
// (`@googleapis/sheets`, google-auth-library, gaxios, undici), the Redis client (node-redis and
// its modules: loaded only with a `store`), SheetJS (for .xlsx and .ods files only) nor Node's
// bundled undici (which an ES import of
// node:http pulls in through its lazy WebSocket export), each MBs of resident memory; with a Google connection configured it loads the client. Node runs the CLI here (from
// node_modules/.bin, whichever runtime runs the test) with a hook that records every module it
// loads and, at exit, the built-in modules it loaded.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';
import { test } from 'node:test';
import { REPO_ROOT, RUNTIME, tempDir, type TestContext } from '../helpers/http.ts';

const NODE = RUNTIME === 'node' ? process.execPath : join(REPO_ROOT, 'node_modules', '.bin', 'node');

const HOOK = `
import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
import process from 'node:process';
const out = process.env.SHEETREST_TEST_LOADED;
registerHooks({ load(url, context, nextLoad) { appendFileSync(out, url + '\\n'); return nextLoad(url, context); } });
process.on('exit', () => appendFileSync(out, process.moduleLoadList.join('\\n') + '\\n'));
`;

/** Starts the CLI on Node with `args`, waits for it to listen, reads one URL, stops it; the modules it loaded. */
async function loadedBy(t: TestContext, args: string[], path: string): Promise<string> {
  const dir = await tempDir(t);
  const hook = dir.path('hook.mjs');
  const loaded = dir.path('loaded.txt');
  await writeFile(hook, HOOK);
  await writeFile(loaded, '');
  const child = spawn(NODE, ['--import', hook, 'server/main.ts', ...args, '--host', '127.0.0.1', '--port', '0', '--state-dir', dir.path('state'), '--log-level', 'warn'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, SHEETREST_TEST_LOADED: loaded, NODE_DISABLE_COMPILE_CACHE: '1' },
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const url = await new Promise<string>((resolve, reject) => {
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      const found = /listening on (http:\/\/\S+)/.exec(stdout);
      if (found !== null) resolve(found[1]);
    });
    void exited.then((code) => reject(new Error(`the server exited (${code}) before listening: ${stderr}`)));
  });
  const response = await fetch(url + path);
  await response.arrayBuffer();
  // process.kill, not child.kill: Deno's records the signal as the exit, hiding the exit code.
  process.kill(child.pid as number, 'SIGTERM');
  assert.equal(await exited, 0, stderr);
  return readFile(loaded, 'utf8');
}

const GOOGLE = /@googleapis\/|google-auth-library|\/gaxios\/|node_modules\/undici\//;
const REDIS = /node_modules\/(redis|@redis\/[a-z-]+)\//;
const SHEETJS = /node_modules\/@e965\/xlsx\//;

test(`a server of CSV files loads neither Google's client, the Redis client, SheetJS nor Node's bundled undici (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const book = dir.path('book.csv');
  await writeFile(book, 'Name,Age\nAnn,30\n');
  const loaded = await loadedBy(t, [book], '/sheets/book');
  assert.match(loaded, /server\/start\.ts/, 'the hook saw the server load');
  assert.match(loaded, /NativeModule http\b/, 'the hook saw the built-ins');
  assert.doesNotMatch(loaded, GOOGLE);
  assert.doesNotMatch(loaded, REDIS);
  assert.doesNotMatch(loaded, SHEETJS);
  assert.doesNotMatch(loaded, /internal\/deps\/undici\/undici/);
});

test(`a Google connection loads Google's client (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const config = dir.path('sheetrest.json');
  // Opening a Google source sends nothing: the server starts with Google's side unreachable.
  const google = { type: 'google', spreadsheetId: 'sheet-1', apiKey: 'not-a-real-key', rootUrl: 'http://127.0.0.1:9/' };
  await writeFile(config, JSON.stringify({ connections: [{ id: 'g', source: google }] }));
  const loaded = await loadedBy(t, ['--config', config], '/healthz');
  assert.match(loaded, /@googleapis\/sheets/);
});

test(`a server of an .xlsx file loads SheetJS (${RUNTIME})`, async (t) => {
  const loaded = await loadedBy(t, [join(REPO_ROOT, 'fixtures', 'demo.xlsx'), '--read-only'], '/sheets/demo');
  assert.match(loaded, SHEETJS);
});
