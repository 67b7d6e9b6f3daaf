// `bun run start` and `deno task start` serve on Bun and Deno themselves (bunfig.toml's
// `[run] bun = true`; deno.json's task), and nothing they print says `node`: Bun's echo of the
// script (`$ node server/cli.js`) is off (`silent`), and the server's first line names the
// runtime. Also the README's Node 20 paragraph: the packages whose `engines` leave Node 20 out
// (each an `npm warn EBADENGINE` on `npm install`) are the ones it names, counted from
// package-lock.json. Run on Node only: it starts the other runtimes itself.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';
import { test } from 'node:test';
import { defer, REPO_ROOT, RUNTIME, tempDir, writeXlsx } from '../helpers/http.ts';

const skip = RUNTIME === 'node' ? false : 'run on Node only: it starts Bun and Deno itself';

for (const [runtime, argv] of [['bun', ['run', 'start']], ['deno', ['task', 'start']]] as const) {
  test(`${runtime} ${argv.join(' ')} serves on ${runtime}`, { skip }, async (t) => {
    const dir = await tempDir(t);
    await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
    const child = spawn(join(REPO_ROOT, 'node_modules/.bin', runtime), [...argv, dir.path('book.xlsx'), '--port', '0'], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' }, detached: true });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    defer(t, async () => {
      // The task runner starts the server as its own child: the whole group this test started goes.
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
      await exited;
      child.stdout.destroy();
      child.stderr.destroy();
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (output += text));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line within 30 s: ${output}`)), 30_000);
      child.stdout.on('data', () => {
        const found = /sheetrest listening on (http:\/\/\S+) \((\w+)/.exec(output);
        if (found === null) return;
        clearTimeout(timer);
        assert.equal(found[2], runtime, output);
        resolve(found[1]);
      });
    });
    assert.doesNotMatch(output, /\$ node /, 'no echo that reads as if Node ran it');
    assert.equal((await fetch(`${url}/sheets/book`)).status, 200);
  });
}

/** Node 20 as the README's paragraph means it (the 20 this machine has). */
const NODE_20 = [20, 20, 2];

/**
 * Whether a package's `engines.node` range admits Node 20: npm's grammar for the forms lock files
 * hold (`>=22.18`, `^22 || ^24 || >=26`, `>= 12.*`, `>=0.6.11 <=0.7.0`, `18 || 20`); another form fails the test.
 */
function admitsNode20(range: string): boolean {
  return range.split('||').some((part) => {
    const comparators = part.trim().replace(/(>=|<=|<|>|=|\^|~)\s+/g, '$1').split(/\s+/).filter((each) => each !== '' && each !== '*');
    return comparators.every((comparator) => {
      const parsed = /^(>=|<=|<|>|=|\^|~)?v?(\d+)(?:\.(\d+|[*x]))?(?:\.(\d+|[*x]))?$/.exec(comparator);
      if (parsed === null) throw new Error(`an engines range this test cannot read: ${range}`);
      const [, op = '', ...rest] = parsed;
      const given = rest.filter((each) => each !== undefined && /^\d+$/.test(each)).map(Number);
      const low = [given[0], given[1] ?? 0, given[2] ?? 0];
      const cmp = compare(NODE_20, low);
      if (op === '>=') return cmp >= 0;
      if (op === '>') return cmp > 0;
      if (op === '<=') return cmp <= 0;
      if (op === '<') return cmp < 0;
      // A bare or `=` version, `^` and `~`: from it to the next major (a bare major or `^`), or the next minor (`~` with a minor, or a bare major.minor).
      const nextMinor = (op === '~' && given.length >= 2) || ((op === '' || op === '=') && given.length === 2);
      if ((op === '' || op === '=') && given.length === 3) return cmp === 0;
      const high = nextMinor ? [low[0], low[1] + 1, 0] : [low[0] + 1, 0, 0];
      return cmp >= 0 && compare(NODE_20, high) < 0;
    });
  });
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}

test("README: the packages npm warns about on Node 20", { skip }, async () => {
  const lock = JSON.parse(await readFile(join(REPO_ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, { engines?: { node?: string } }> };
  const warned = Object.entries(lock.packages)
    .filter(([, entry]) => typeof entry.engines?.node === 'string' && !admitsNode20(entry.engines.node))
    .map(([path]) => (path === '' ? 'sheetrest' : path.replace(/^.*node_modules\//, '')));
  const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');
  const paragraph = readme.slice(readme.indexOf('On Node 20,'), readme.indexOf('\n\n', readme.indexOf('On Node 20,')));
  assert.ok(paragraph.length > 0, 'README.md has its Node 20 paragraph');
  assert.match(paragraph, new RegExp(`for the ${warned.length} packages`));
  for (const name of warned) assert.ok(paragraph.includes(`\`${name}\``), `README's Node 20 paragraph names ${name}`);
});
