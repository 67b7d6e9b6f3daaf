// lib/ stays what the package's `sheetrest/engine` entry promises (docs/embedding.md): every
// module imports only other lib/ modules (no node:*, no npm package, no server/ code), nothing
// uses WebAssembly, and no code reaches for I/O or a runtime's globals. Read as text, so the
// check is the same on Node, Deno and Bun; test/engine/embedding.test.ts checks the packed output.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { test } from 'node:test';

const LIB = new URL('../../lib/', import.meta.url);
const ROOT = new URL('../../', import.meta.url);

/** What an embedded engine must not touch: I/O, timers, a runtime's own objects, global state. */
const FORBIDDEN = ['fetch', 'Deno', 'Bun', 'process', 'require', 'XMLHttpRequest', 'WebSocket', 'localStorage', 'indexedDB', 'setTimeout', 'setInterval', 'console', 'globalThis', 'WebAssembly', 'eval'];

async function libModules(): Promise<string[]> {
  const files = await readdir(LIB, { recursive: true, encoding: 'utf8' });
  return files.filter((file) => file.endsWith('.ts')).map((file) => file.split('\\').join('/')).sort();
}

/** The source without comments, so a comment may mention what the code must not use. */
function codeOf(source: string): string {
  return source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

test('every lib/ module imports only lib/ modules, by relative .ts paths', async () => {
  const modules = await libModules();
  assert.ok(modules.includes('mod.ts'));
  for (const file of modules) {
    const source = await readFile(new URL(file, LIB), 'utf8');
    for (const match of source.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)(['"])([^'"]+)\1/g)) {
      const specifier = match[2];
      assert.match(specifier, /^\.\.?\/.*\.ts$/, `lib/${file} imports ${specifier}`);
      const target = new URL(specifier, new URL(file, LIB)).href;
      assert.ok(target.startsWith(LIB.href), `lib/${file} imports ${specifier}, outside lib/`);
      assert.ok(modules.includes(target.slice(LIB.href.length)), `lib/${file} imports ${specifier}, which does not exist`);
    }
  }
});

test('no lib/ code uses I/O, timers, WebAssembly or a runtime global', async (t) => {
  for (const file of await libModules()) {
    await t.test(`lib/${file}`, async () => {
      const code = codeOf(await readFile(new URL(file, LIB), 'utf8'));
      for (const name of FORBIDDEN) assert.doesNotMatch(code, new RegExp(`(?<![.\\w$'"])${name}\\b`), `lib/${file} uses ${name}`);
    });
  }
  const files = await readdir(LIB, { recursive: true, encoding: 'utf8' });
  assert.deepEqual(files.filter((file) => !file.endsWith('.ts') && file.includes('.')), [], 'lib/ holds only .ts modules (no .wasm)');
});

test('package.json and jsr.json name the engine: sheetrest/engine (built) and @sheetrest/engine (source)', async () => {
  const manifest = JSON.parse(await readFile(new URL('package.json', ROOT), 'utf8'));
  const engine = { types: './dist/engine/mod.d.ts', default: './dist/engine/mod.js' };
  assert.deepEqual(manifest.exports['./engine'], engine);
  assert.deepEqual(manifest.exports['.'], engine);
  assert.equal(manifest.sideEffects, false);
  assert.ok(manifest.files.includes('dist/engine/'));
  assert.equal(manifest.scripts.prepack, 'node tools/build-engine.ts');
  const jsr = JSON.parse(await readFile(new URL('jsr.json', ROOT), 'utf8'));
  assert.equal(jsr.name, '@sheetrest/engine');
  assert.equal(jsr.version, manifest.version, 'jsr.json and package.json publish the same version');
  assert.equal(jsr.exports, './lib/mod.ts');
});
