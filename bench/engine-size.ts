// The engine as embedders get it (`sheetrest/engine`, dist/engine/ built by tools/build-engine.ts):
// its size as published, bundled and minified by esbuild (a devDependency, used only here), and
// gzipped (level 9); then the time to import it in a fresh process, median of BENCH_RUNS
// (default 15) processes per runtime, from `import()` called to resolved (the process's own
// start-up not counted). `npm run bench:embed`; BENCH_RUNTIMES (node,node22,deno,bun) chooses.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const ENGINE = fileURLToPath(new URL('../dist/engine/', import.meta.url));
const BIN = `${ROOT}node_modules/.bin/`;
const RUNS = Number(process.env.BENCH_RUNS ?? 15);
/** Each runtime's binary and how it evaluates a module given as text (no probe file to parse). */
const RUNTIMES: Record<string, { command: string; evaluate: (code: string) => string[] }> = {
  node: { command: `${ROOT}node_modules/node/bin/node`, evaluate: (code) => ['--input-type=module', '--eval', code] },
  node22: { command: `${ROOT}node_modules/node22/bin/node`, evaluate: (code) => ['--input-type=module', '--eval', code] },
  deno: { command: `${BIN}deno`, evaluate: (code) => ['eval', code] },
  bun: { command: `${BIN}bun`, evaluate: (code) => ['--eval', code] },
};
const chosen = (process.env.BENCH_RUNTIMES ?? 'node,node22,deno,bun').split(',');

execFileSync(process.execPath, [`${ROOT}tools/build-engine.ts`], { stdio: 'ignore' });

const files = readdirSync(ENGINE, { recursive: true, encoding: 'utf8' });
const sum = (suffix: string) => files.filter((file) => file.endsWith(suffix)).reduce((total, file) => total + readFileSync(`${ENGINE}${file}`).length, 0);
const modules = files.filter((file) => file.endsWith('.js')).length;
const minified = execFileSync(`${BIN}esbuild`, [`${ENGINE}mod.js`, '--bundle', '--minify', '--format=esm', '--log-level=warning'], { maxBuffer: 16 << 20 });
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

console.log(`esbuild ${execFileSync(`${BIN}esbuild`, ['--version']).toString().trim()}, ${modules} modules`);
console.log('| form | bytes | KiB |\n|---|---:|---:|');
for (const [form, bytes] of [
  ['dist/engine/*.js as published', sum('.js')],
  ['dist/engine/*.d.ts (declarations)', sum('.d.ts')],
  ['all .js gzipped (-9), concatenated', gzipSync(Buffer.concat(files.filter((file) => file.endsWith('.js')).map((file) => readFileSync(`${ENGINE}${file}`))), { level: 9 }).length],
  ['bundled + minified (esbuild)', minified.length],
  ['bundled + minified + gzip -9', gzipSync(minified, { level: 9 }).length],
] as const) {
  console.log(`| ${form} | ${bytes.toLocaleString('en')} | ${kib(bytes)} |`);
}

// Each process imports the 29 modules from disk once, as an embedder's first request would.
const probe = `const started = performance.now(); await import(${JSON.stringify(new URL('mod.js', `file://${ENGINE}`).href)}); console.log(performance.now() - started);`;
console.log(`\n| runtime | import, median of ${RUNS} (ms) | fastest | slowest |\n|---|---:|---:|---:|`);
for (const name of chosen) {
  const { command, evaluate } = RUNTIMES[name];
  if (!existsSync(command)) {
    console.log(`| ${name} | (missing: ${command}) | | |`);
    continue;
  }
  const version = spawnSync(command, ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0].trim();
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const out = execFileSync(command, evaluate(probe), { encoding: 'utf8', cwd: ROOT });
    times.push(Number(out.trim()));
  }
  times.sort((a, b) => a - b);
  console.log(`| ${name} (${version}) | ${times[Math.floor(times.length / 2)].toFixed(1)} | ${times[0].toFixed(1)} | ${times[times.length - 1].toFixed(1)} |`);
}
