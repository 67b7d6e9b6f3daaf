#!/usr/bin/env node
// `npx sheetrest book.xlsx` and `npm start`: the entry. Node strips TypeScript types only
// outside node_modules, and an installed package lives inside it, so there this plain-JavaScript
// shim strips the types of sheetrest's own .ts files itself (node:module's registerHooks and
// stripTypeScriptTypes, Node 22.15+); from a checkout Node strips them, with its compile cache
// on. Then it runs server/main.ts.
import * as nodeModule from 'node:module';
import { stripOwnTypes } from './strip-types.js';

const { enableCompileCache, registerHooks, stripTypeScriptTypes } = nodeModule;
const isNode = !('Bun' in globalThis) && !('Deno' in globalThis);

// Node keeps compiled modules, and the text of the .ts files it strips itself, in a cache on disk
// (NODE_COMPILE_CACHE or the temp folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off). From the
// second start on, no type stripping runs, and the stripper's WebAssembly memory (about 30 MB,
// never given back) is not resident: see docs/benchmarks.md, "Memory".
if (isNode && (typeof registerHooks !== 'function' || typeof stripTypeScriptTypes !== 'function')) {
  console.error(`sheetrest needs Node 22.18 or later; this is Node ${process.versions.node}.`);
  process.exit(1);
}
if (isNode && typeof enableCompileCache === 'function') enableCompileCache();

// From a checkout (`npm start`) Node strips the types itself; inside node_modules it refuses to.
stripOwnTypes();

await import('./main.ts');
