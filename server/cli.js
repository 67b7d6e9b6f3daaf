#!/usr/bin/env node
// `npx sheetrest book.xlsx`: the published package's entry. Node strips TypeScript types only
// outside node_modules, and an installed package lives inside it, so this plain-JavaScript
// shim strips the types of sheetrest's own .ts files itself (node:module's registerHooks and
// stripTypeScriptTypes, Node 22.15+) and then runs the same server/main.ts as `npm start`.
import { readFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

const { registerHooks, stripTypeScriptTypes } = nodeModule;
if (typeof registerHooks !== 'function' || typeof stripTypeScriptTypes !== 'function') {
  console.error(`sheetrest needs Node 22.18 or later; this is Node ${process.versions.node}.`);
  process.exit(1);
}

// The stripping API is marked experimental; users of the command need not hear about it.
const emitWarning = process.emitWarning;
process.emitWarning = (warning, ...rest) => {
  if (!String(warning).includes('stripTypeScriptTypes')) emitWarning.call(process, warning, ...rest);
};

const packageRoot = new URL('../', import.meta.url).href;

registerHooks({
  load(url, context, nextLoad) {
    if (url.startsWith(packageRoot) && url.endsWith('.ts') && !url.slice(packageRoot.length).includes('node_modules/')) {
      const source = stripTypeScriptTypes(readFileSync(fileURLToPath(url), 'utf8'));
      return { format: 'module', source, shortCircuit: true };
    }
    return nextLoad(url, context);
  },
});

await import('./main.ts');
