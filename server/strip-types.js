// Node strips TypeScript types only outside node_modules, and an installed package lives inside
// it: there, a load hook strips the types of sheetrest's own .ts files (node:module's
// registerHooks and stripTypeScriptTypes, Node 22.15+). Hooks belong to one thread, so the
// entry (cli.js) and each worker's entry (the fold's, server/sources/file/fold-worker.js) call
// this first. From a checkout, and on Deno and Bun, it does nothing.
import { readFileSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { fileURLToPath } from 'node:url';

const { registerHooks, stripTypeScriptTypes } = nodeModule;
const packageRoot = new URL('../', import.meta.url).href;
const isNode = !('Bun' in globalThis) && !('Deno' in globalThis);

export function stripOwnTypes() {
  if (!isNode || !packageRoot.includes('/node_modules/')) return;
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
