// The engine where users embed it, from the package `npm pack` makes (which runs prepack, so
// dist/engine/ is built as it would be published): the tarball is installed into an empty
// folder, then each runtime answers the same three requests (test/embedding/three-requests.js:
// a filtered read, an aggregate-free /query and a POST whose plan and next workbook are checked)
// from a workbook built in code, and the answers must equal EXPECTED:
//   Node 24 and Node 22.18 (the `node22` devDependency) import `sheetrest/engine` as ESM;
//   tsc --noEmit checks a TypeScript consumer against the published .d.ts, then Node 24, Node
//   22.18, Deno and Bun run it;
//   Deno and Bun import the same installed package;
//   headless Chromium loads a static page (an import map, no bundler) from a loopback server;
//   workerd serves a Worker that imports the engine, on a free loopback port.
// It also checks that the packed engine imports nothing outside dist/engine/ and creates no
// globals when imported.
//
// Node only: it packs once and starts Deno, Bun and the rest itself, so running it again under
// `deno test` and `bun test` (as CI does with the whole suite) would only repeat the same work;
// there it is skipped with that reason. Each consumer is skipped by name when its runtime is
// missing. Installing works offline from npm's cache after `npm ci` (--prefer-offline).
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { extname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const RUNTIME = 'Deno' in globalThis ? 'deno' : 'Bun' in globalThis ? 'bun' : 'node';
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CONSUMER_FILES = fileURLToPath(new URL('../embedding/', import.meta.url));
const BIN = join(ROOT, 'node_modules', '.bin');
const NODE24 = join(ROOT, 'node_modules', 'node', 'bin', 'node');
const NODE22 = join(ROOT, 'node_modules', 'node22', 'bin', 'node');
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

const run = promisify(execFile);

/** What every runtime must answer (three-requests.js). */
const EXPECTED = {
  read: {
    status: 200,
    total: '2',
    rows: [
      { Name: 'Ann', Age: '30', City: 'Oslo', Joined: '2024-03-01' },
      { Name: 'Cy', Age: '25', City: 'Oslo', Joined: '' },
    ],
  },
  query: {
    status: 200,
    total: '2',
    rows: [
      { Name: 'Bob', Age: '41', City: 'Rome', Joined: '' },
      { Name: 'Ann', Age: '30', City: 'Oslo', Joined: '2024-03-01' },
    ],
  },
  post: {
    status: 201,
    body: { Name: 'Dee', Age: '52', City: 'Oslo', Joined: '2025-01-31' },
    // data row 3, appended after the three there were; the date typed as a date
    plan: {
      tab: 'People',
      replaced: [],
      removed: [],
      appended: { start: 3, rows: [{ text: ['Dee', '52', 'Oslo', '2025-01-31'], value: ['Dee', 52, 'Oslo', { iso: '2025-01-31' }] }] },
    },
    nextRows: [
      { Name: 'Ann', Age: 30, City: 'Oslo', Joined: '2024-03-01' },
      { Name: 'Cy', Age: 25, City: 'Oslo', Joined: null },
      { Name: 'Dee', Age: 52, City: 'Oslo', Joined: '2025-01-31' },
    ],
    // the workbook passed in still has its three rows
    unchangedRows: 3,
  },
};

const skip = RUNTIME !== 'node' ? `runs on Node only: it packs once and starts Deno and Bun itself (this is ${RUNTIME})` : false;
const missing = (path: string, install: string) => (existsSync(path) ? false : `${path} is missing (${install})`);

test('the packed package, embedded in each runtime', { skip }, async (t) => {
  const work = await mkdtemp(join(tmpdir(), 'sheetrest-embedding-'));
  t.after(() => rm(work, { recursive: true, force: true }));
  const consumer = join(work, 'consumer');
  const started = performance.now();

  // npm pack runs prepack (tools/build-engine.ts); npm writes its notices to stderr.
  await run('npm', ['pack', '--pack-destination', work], { cwd: ROOT, timeout: 120_000 });
  const tarball = (await readdir(work)).find((name) => name.endsWith('.tgz'));
  assert.ok(tarball !== undefined, 'npm pack made no tarball');
  await run('mkdir', [consumer]);
  await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'embedding-consumer', private: true, type: 'module' }));
  // --ignore-scripts: nothing in the tree needs an install script to be imported.
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--ignore-scripts', '--no-package-lock', join(work, tarball)], { cwd: consumer, timeout: 120_000 });
  for (const file of await readdir(CONSUMER_FILES)) await copyFile(join(CONSUMER_FILES, file), join(consumer, file));
  t.diagnostic(`packed and installed in ${Math.round(performance.now() - started)} ms: ${consumer}`);
  const engineDir = join(consumer, 'node_modules', 'sheetrest', 'dist', 'engine');

  await t.test('the packed engine imports nothing outside dist/engine/: no node: modules, no server code, no WebAssembly', async () => {
    const files = (await readdir(engineDir, { recursive: true, encoding: 'utf8' })).filter((file) => file.endsWith('.js') || file.endsWith('.d.ts'));
    assert.ok(files.includes('mod.js'));
    for (const file of files) {
      const source = await readFile(join(engineDir, file), 'utf8');
      if (file.endsWith('.js')) assert.ok(existsSync(join(engineDir, file.replace(/\.js$/, '.d.ts'))), `${file} has no declarations`);
      assert.doesNotMatch(source, /WebAssembly|\.wasm\b/, `${file} mentions WebAssembly`);
      for (const specifier of importSpecifiers(source)) {
        assert.ok(specifier.startsWith('./') || specifier.startsWith('../'), `${file} imports ${specifier}: only relative modules may be imported`);
        const target = resolve(engineDir, file, '..', specifier);
        assert.ok(target.startsWith(engineDir + sep), `${file} imports ${specifier}, outside dist/engine/`);
        assert.ok(existsSync(target) && target.endsWith('.js'), `${file} imports ${specifier}, which is not a module of the package`);
      }
    }
    const manifest = JSON.parse(await readFile(join(consumer, 'node_modules', 'sheetrest', 'package.json'), 'utf8'));
    assert.deepEqual(manifest.exports['./engine'], { types: './dist/engine/mod.d.ts', default: './dist/engine/mod.js' });
    assert.equal(manifest.sideEffects, false);
  });

  const asEsm = async (runtime: string, command: string, args: string[]) => {
    const { stdout } = await run(command, args, { cwd: consumer, timeout: 60_000 });
    const printed = JSON.parse(stdout);
    assert.deepEqual(printed.newGlobals, [], `importing sheetrest/engine on ${runtime} created globals`);
    assert.equal(printed.sameAsRoot, true, `import('sheetrest') on ${runtime} is not the engine`);
    assert.deepEqual(printed.answers, EXPECTED);
  };
  await t.test('Node 24 imports sheetrest/engine as ESM', { skip: missing(NODE24, 'npm ci installs the node devDependency') }, () => asEsm('Node 24', NODE24, ['run.js']));
  await t.test('Node 22.18 imports sheetrest/engine as ESM', { skip: missing(NODE22, 'npm ci installs the node22 devDependency') }, async () => {
    const { stdout } = await run(NODE22, ['--version']);
    assert.equal(stdout.trim(), 'v22.18.0');
    await asEsm('Node 22.18', NODE22, ['run.js']);
  });
  await t.test('Deno imports the installed package', { skip: missing(join(BIN, 'deno'), 'npm ci installs deno') }, () => asEsm('Deno', join(BIN, 'deno'), ['run', '--no-prompt', '--no-lock', 'run.js']));
  await t.test('Bun imports the installed package', { skip: missing(join(BIN, 'bun'), 'npm ci installs bun') }, () => asEsm('Bun', join(BIN, 'bun'), ['run.js']));

  await t.test('a TypeScript consumer: tsc --noEmit against the .d.ts, then run by each runtime', { skip: missing(join(BIN, 'tsc'), 'npm ci installs typescript') }, async (t) => {
    // skipLibCheck off, so the published declarations are checked too; no Node types, as a browser project would have.
    const compilerOptions = { module: 'nodenext', target: 'es2023', lib: ['es2023', 'dom'], types: [], strict: true, noEmit: true, skipLibCheck: false, verbatimModuleSyntax: true };
    await writeFile(join(consumer, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }));
    await run(join(BIN, 'tsc'), ['-p', 'tsconfig.json'], { cwd: consumer, timeout: 60_000 }).catch((error) => assert.fail(`tsc --noEmit: ${error.stdout}${error.stderr}`));
    // Deno's checker reads the same declarations, its own way.
    if (existsSync(join(BIN, 'deno'))) {
      await run(join(BIN, 'deno'), ['check', '--no-lock', 'consumer.ts'], { cwd: consumer, timeout: 60_000 }).catch((error) => assert.fail(`deno check: ${error.stdout}${error.stderr}`));
    }
    // Node 22.18 and 24 strip the types of a file outside node_modules; Deno and Bun run TypeScript.
    const runners = [['Node 24', NODE24], ['Node 22.18', NODE22], ['Deno', join(BIN, 'deno'), 'run', '--no-prompt', '--no-lock'], ['Bun', join(BIN, 'bun')]];
    for (const [runtime, command, ...args] of runners) {
      await t.test(runtime, { skip: missing(command, 'npm ci installs it') }, async () => {
        const { stdout } = await run(command, [...args, 'consumer.ts'], { cwd: consumer, timeout: 60_000 });
        assert.deepEqual(JSON.parse(stdout), {
          read: { status: 200, rows: EXPECTED.read.rows },
          query: { status: 200, rows: EXPECTED.query.rows },
          post: { status: 201, appended: 1, nextRows: EXPECTED.post.nextRows },
          malformed: 'invalid_parameter',
          refused: { status: 400, code: 'invalid_operator' },
        });
      });
    }
  });

  await t.test('headless Chromium: a static page imports the engine through an import map', { skip: missing(CHROMIUM, 'apt-get install chromium') }, async (t) => {
    const server = serveStatic(consumer);
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    t.after(() => new Promise((done) => server.close(done)));
    const { chromium } = await import('playwright-core');
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
    t.after(() => browser.close());
    const page = await browser.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    // The condition is text run in the page, so that Deno's checker (no DOM types) reads this file too.
    page.on('console', (message) => message.type() === 'error' && problems.push(message.text()));
    await page.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/page.html`);
    await page.waitForFunction("document.getElementById('answers').textContent !== ''", undefined, { timeout: 30_000 }).catch(() => assert.fail(`the page answered nothing: ${problems.join('; ')}`));
    assert.deepEqual(problems, []);
    assert.deepEqual(JSON.parse((await page.textContent('#answers')) ?? ''), EXPECTED);
  });

  await t.test('workerd: a Worker that imports the engine answers over HTTP on loopback', { skip: missing(join(BIN, 'workerd'), 'npm ci installs workerd') }, async (t) => {
    await writeFile(join(consumer, 'config.capnp'), await workerConfig(consumer, engineDir));
    // Port 0 and --control-fd: workerd picks a free port and says which on descriptor 3.
    const workerd = spawn(join(BIN, 'workerd'), ['serve', 'config.capnp', '--socket-addr', 'http=127.0.0.1:0', '--control-fd', '3'], { cwd: consumer, stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
    t.after(() => workerd.kill());
    let output = '';
    workerd.stdout?.on('data', (chunk) => (output += chunk));
    workerd.stderr?.on('data', (chunk) => (output += chunk));
    const port = await new Promise<number>((done, fail) => {
      let control = '';
      (workerd.stdio[3] as NodeJS.ReadableStream).on('data', (chunk) => {
        control += chunk;
        for (const line of control.split('\n')) {
          const message = line.trim() === '' ? null : JSON.parse(line);
          if (message?.event === 'listen' && message.socket === 'http') done(message.port);
        }
      });
      workerd.on('exit', (code) => fail(new Error(`workerd exited (${code}) before listening: ${output}`)));
      setTimeout(() => fail(new Error(`workerd did not listen within 30 s: ${output}`)), 30_000).unref();
    });
    const response = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(response.status, 200, output);
    assert.deepEqual(await response.json(), EXPECTED);
  });
});

/** The specifiers of a module's static imports, re-exports and dynamic imports. */
function importSpecifiers(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])([^'"]+)\1/g)) found.push(match[2]);
  return found;
}

const CONTENT_TYPES: Record<string, string> = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.json': 'application/json' };

/** Serves the consumer folder's files as they are: the page, three-requests.js and node_modules. */
function serveStatic(folder: string) {
  return createServer(async (request, response) => {
    const path = resolve(folder, '.' + decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname));
    const type = CONTENT_TYPES[extname(path)];
    if (!path.startsWith(folder + sep) || type === undefined || !existsSync(path)) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'Content-Type': type }).end(await readFile(path));
  });
}

/**
 * workerd's config: the Worker's modules are worker.js, three-requests.js and every file of the
 * installed dist/engine/ under its path, plus `sheetrest/engine`, re-exporting mod.js, which is
 * what a bundler resolving the package's exports map would give the Worker.
 */
async function workerConfig(consumer: string, engineDir: string): Promise<string> {
  const engineFiles = (await readdir(engineDir, { recursive: true, encoding: 'utf8' })).filter((file) => file.endsWith('.js'));
  const modules = [
    '(name = "worker.js", esModule = embed "worker.js")',
    '(name = "three-requests.js", esModule = embed "three-requests.js")',
    // A module's relative imports resolve against its name: `sheetrest/engine` sits one folder down.
    '(name = "sheetrest/engine", esModule = "export * from \\"../node_modules/sheetrest/dist/engine/mod.js\\";")',
    ...engineFiles.map((file) => {
      const path = relative(consumer, join(engineDir, file)).split(sep).join('/');
      return `(name = "${path}", esModule = embed "${path}")`;
    }),
  ];
  return `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  compatibilityDate = "2025-01-01",
  modules = [
    ${modules.join(',\n    ')}
  ],
);
`;
}
