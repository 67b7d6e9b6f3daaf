#!/usr/bin/env node
// `npx sheetrest book.xlsx` and `npm start`: the entry. Node strips TypeScript types only
// outside node_modules, and an installed package lives inside it, so there this plain-JavaScript
// shim strips the types of sheetrest's own .ts files itself (node:module's registerHooks and
// stripTypeScriptTypes, Node 22.15+); from a checkout Node strips them, with its compile cache
// on. On Linux it first starts itself again with glibc's malloc tunables (below). Then it runs
// server/main.ts.
import * as nodeModule from 'node:module';
import { stripOwnTypes } from './strip-types.js';

const { enableCompileCache, registerHooks, stripTypeScriptTypes } = nodeModule;
const isNode = !('Bun' in globalThis) && !('Deno' in globalThis);

// Node keeps compiled modules, and the text of the .ts files it strips itself, in a cache on disk
// (NODE_COMPILE_CACHE or the temp folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off). From the
// second start on, no type stripping runs, and the stripper's WebAssembly memory (about 30 MB,
// never given back) is not resident: see docs/benchmarks.md, "Memory".
// 22.18 is where Node strips types by default (a checkout's `npm start`), as package.json's engines says.
const [major, minor] = process.versions.node.split('.').map(Number);
const oldNode = major < 22 || (major === 22 && minor < 18);
if (isNode && (oldNode || typeof registerHooks !== 'function' || typeof stripTypeScriptTypes !== 'function')) {
  console.error(`sheetrest needs Node 22.18 or later; this is Node ${process.versions.node}.`);
  process.exit(1);
}

// glibc's malloc, left to itself, keeps what a busy Node server freed: the bytes of each answer
// are a malloc'd buffer freed only when V8 collects it, tens of MB at a time under load, and
// after the first big one is freed glibc raises its mmap threshold so the rest land in its
// heap too, which then stays resident around the long-lived allocations among them (2.2x the
// resident set of a fresh start after minutes of mixed load; docs/benchmarks.md, "Memory under
// mixed load"). glibc reads its tunables only when a process starts, so on Linux the server
// starts itself again, once, with them set: buffers of 16 KiB and more are mapped and unmapped
// on their own, and two malloc arenas serve all threads. A GLIBC_TUNABLES set by the user
// (even empty) wins; SHEETREST_MALLOC_DEFAULTS=1 skips this too. Other C libraries ignore it.
const MALLOC_TUNABLES = 'glibc.malloc.mmap_threshold=16384:glibc.malloc.arena_max=2';
if (
  isNode &&
  process.platform === 'linux' &&
  typeof process.execve === 'function' &&
  process.env.GLIBC_TUNABLES === undefined &&
  process.env.SHEETREST_MALLOC_DEFAULTS !== '1'
) {
  try {
    process.execve(process.execPath, [process.execPath, ...process.execArgv, ...process.argv.slice(1)], { ...process.env, GLIBC_TUNABLES: MALLOC_TUNABLES });
  } catch {
    // Not restartable here (a sandbox refusing execve): serve on glibc's defaults.
  }
}

if (isNode && typeof enableCompileCache === 'function') enableCompileCache();

// From a checkout (`npm start`) Node strips the types itself; inside node_modules it refuses to.
stripOwnTypes();

await import('./main.ts');
