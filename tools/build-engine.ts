// `npm run build:engine` (and `npm pack`/`npm publish`, through prepack): the engine as plain
// JavaScript with .d.ts declarations, lib/*.ts -> dist/engine/, for the package's `sheetrest/engine`
// entry. Node strips TypeScript types only outside node_modules, so an installed package cannot
// serve lib/*.ts to Node; the repository itself keeps running the .ts files with no build step,
// and dist/ is generated here, never committed (.gitignore).
// The pinned TypeScript compiler (tsc 7) emits both, rewriting `./x.ts` specifiers to `./x.js` in
// the JavaScript (tsconfig.build.json; this script does the same in the declarations); it also
// type-checks lib/ against Web APIs alone, without Node's types.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../', import.meta.url));
const outDir = fileURLToPath(new URL('../dist/engine/', import.meta.url));
const tsc = fileURLToPath(new URL('../node_modules/.bin/tsc', import.meta.url));

// A file removed from lib/ must not linger in the package.
rmSync(outDir, { recursive: true, force: true });
const built = spawnSync(tsc, ['-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });
if (built.error !== undefined) throw built.error;
if (built.status !== 0) {
  console.error(`tsc -p tsconfig.build.json failed (exit ${built.status}); dist/engine/ is incomplete.`);
  process.exit(built.status ?? 1);
}
// tsc rewrites `./x.ts` to `./x.js` in the JavaScript but leaves the .d.ts files naming `./x.ts`,
// a file the package does not ship. tsc and Deno still find x.d.ts inside node_modules, but not
// every checker does (Deno reading dist/ from outside node_modules does not), so the declarations
// name the .js files, as a hand-written package's would.
const files = readdirSync(outDir, { recursive: true, encoding: 'utf8' });
for (const file of files.filter((name) => name.endsWith('.d.ts'))) {
  const path = `${outDir}${file}`;
  const declarations = readFileSync(path, 'utf8');
  writeFileSync(path, declarations.replace(/(\bfrom\s*|\bimport\(\s*)(['"])(\.\.?\/[^'"]+)\.ts\2/g, '$1$2$3.js$2'));
}
console.log(`dist/engine/: ${files.filter((name) => name.endsWith('.js')).length} modules with declarations (entry mod.js)`);
