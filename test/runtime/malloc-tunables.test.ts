// The Node entry (server/cli.js) starts itself again, once, in the same process, with glibc's
// malloc tunables set (docs/decisions.md, "glibc's malloc keeps answers out of its heap"), and
// leaves a GLIBC_TUNABLES of the user's alone. Node runs the CLI here (from node_modules/.bin,
// whichever runtime runs the test) with a hook that records, in each program image it starts,
// the process id and the GLIBC_TUNABLES it sees; `--help` prints and exits.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';
import { test } from 'node:test';
import { REPO_ROOT, RUNTIME, tempDir, type TestContext } from '../helpers/http.ts';

const NODE = RUNTIME === 'node' ? process.execPath : join(REPO_ROOT, 'node_modules', '.bin', 'node');

const HOOK = `
import { appendFileSync } from 'node:fs';
import process from 'node:process';
appendFileSync(process.env.SHEETREST_TEST_SEEN, process.pid + ' ' + JSON.stringify(process.env.GLIBC_TUNABLES ?? null) + '\\n');
`;

interface Start {
  readonly pid: number;
  readonly tunables: string | null;
}

/** Runs `node --import hook server/cli.js --help` with `env` added; each image's start, and what it printed. */
async function startsOf(t: TestContext, env: Record<string, string>): Promise<{ starts: Start[]; stdout: string }> {
  const dir = await tempDir(t);
  const hook = dir.path('hook.mjs');
  const seen = dir.path('seen.txt');
  await writeFile(hook, HOOK);
  await writeFile(seen, '');
  const inherited = { ...process.env };
  delete inherited.GLIBC_TUNABLES;
  delete inherited.SHEETREST_MALLOC_DEFAULTS;
  const child = spawn(NODE, ['--import', hook, 'server/cli.js', '--help'], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...inherited, SHEETREST_TEST_SEEN: seen, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const code = await new Promise<number | null>((resolve) => child.on('exit', (exit) => resolve(exit)));
  assert.equal(code, 0, stderr);
  const starts = (await readFile(seen, 'utf8')).trim().split('\n').map((line) => {
    const [pid, tunables] = line.split(' ');
    return { pid: Number(pid), tunables: JSON.parse(tunables) as string | null };
  });
  return { starts, stdout };
}

const linux = process.platform === 'linux';

test('the Node entry starts itself once more with glibc malloc tunables, in the same process', { skip: !linux && 'glibc tunables are set on Linux only' }, async (t) => {
  const { starts, stdout } = await startsOf(t, {});
  assert.equal(starts.length, 2);
  assert.equal(starts[0].tunables, null);
  assert.match(starts[1].tunables ?? '', /^glibc\.malloc\.mmap_threshold=\d+/);
  // execve: the same process, so a supervisor's pid, signals and stdio stay the server's.
  assert.equal(starts[1].pid, starts[0].pid);
  // The usage is printed once, by the second image only.
  assert.equal(stdout.match(/Usage:/g)?.length, 1);
});

test('a GLIBC_TUNABLES of the user, even empty, and SHEETREST_MALLOC_DEFAULTS=1 keep the Node entry from starting again', { skip: !linux && 'glibc tunables are set on Linux only' }, async (t) => {
  const cases: [Record<string, string>, string | null][] = [
    [{ GLIBC_TUNABLES: '' }, ''],
    [{ GLIBC_TUNABLES: 'glibc.malloc.arena_max=1' }, 'glibc.malloc.arena_max=1'],
    [{ SHEETREST_MALLOC_DEFAULTS: '1' }, null],
  ];
  for (const [env, tunables] of cases) {
    const { starts } = await startsOf(t, env);
    assert.deepEqual(starts.map((start) => start.tunables), [tunables], JSON.stringify(env));
  }
});
