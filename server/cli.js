#!/usr/bin/env node
// `npx sheetrest book.xlsx` and `npm start`: the entry. Node strips TypeScript types only
// outside node_modules, and an installed package lives inside it, so there this plain-JavaScript
// shim strips the types of sheetrest's own .ts files itself (node:module's registerHooks and
// stripTypeScriptTypes, Node 22.15+); from a checkout Node strips them, with its compile cache
// on. Then it runs server/main.ts.
import { readFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

const { enableCompileCache, registerHooks, stripTypeScriptTypes } = nodeModule;
const packageRoot = new URL('../', import.meta.url).href;
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
if (isNode && packageRoot.includes('/node_modules/')) {
  // The stripping API is marked experimental; users of the command need not hear about it.
  const emitWarning = process.emitWarning;
  process.emitWarning = (warning, ...rest) => {
    if (!String(warning).includes('stripTypeScriptTypes')) emitWarning.call(process, warning, ...rest);
  };

  registerHooks({
    load(url, context, nextLoad) {
      if (url.startsWith(packageRoot) && url.endsWith('.ts') && !url.slice(packageRoot.length).includes('node_modules/')) {
        const source = stripTypeScriptTypes(readFileSync(fileURLToPath(url), 'utf8'));
        return { format: 'module', source, shortCircuit: true };
      }
      return nextLoad(url, context);
    },
  });
}

await import('./main.ts');
