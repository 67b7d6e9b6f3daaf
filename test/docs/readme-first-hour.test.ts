// The README's first hour with the admin API, run as written so the docs cannot rot: the block
// after the `first-hour` marker starts the server (`npm start -- --admin`, run here as the CLI on
// this runtime, in an empty folder, on a free port), and the next block (export the token from
// the file the server made, copy a workbook in, create a connection, make a key, read it with
// the admin token) runs in bash exactly as it stands, but for the port. Checks: every curl
// answers 2xx, the token file is 0600, and the server printed its path, never the token.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, stat, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import process from 'node:process';
import { test } from 'node:test';
import { cliCommand, defer, REPO_ROOT, RUNTIME, tempDir } from '../helpers/http.ts';

const readme = await readFile(join(REPO_ROOT, 'README.md'), 'utf8');

/** The fenced `sh` blocks after the marker, the first two of them. */
function firstHourBlocks(): [string, string] {
  const start = readme.indexOf('<!-- first-hour');
  assert.notEqual(start, -1, 'README.md has the first-hour marker');
  const blocks = [...readme.slice(start).matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]);
  return [blocks[0], blocks[1]];
}

test(`README: npm start -- --admin, then the curls, as written (${RUNTIME})`, async (t) => {
  const [serverBlock, clientBlock] = firstHourBlocks();
  assert.equal(serverBlock.trim(), 'npm start -- --admin');
  const dir = await tempDir(t);
  // The README runs in a checkout: its fixtures/ are there.
  await symlink(join(REPO_ROOT, 'fixtures'), dir.path('fixtures'));
  const { SHEETREST_ADMIN_TOKEN: _unset, ...env } = process.env;
  const [command, relative] = cliCommand(['--admin', '--port', '0']);
  // Run from the empty folder, as a user's checkout would be the working directory.
  const argv = relative.map((arg) => (arg === 'server/main.ts' ? join(REPO_ROOT, arg) : arg));
  const server = spawn(command, argv, { cwd: dir.path('.'), stdio: ['ignore', 'pipe', 'pipe'], env: { ...env, NO_COLOR: '1' } });
  const exited = new Promise((resolve) => server.on('exit', resolve));
  defer(t, async () => {
    if (server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
    await exited;
  });
  let stdout = '';
  let stderr = '';
  server.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no admin token line within 20 s; stdout: ${stdout}; stderr: ${stderr}`)), 20_000);
    server.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      if (/Admin token: in .*\n/.test(stdout)) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const port = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(stdout)?.[1];
  assert.ok(port !== undefined, stdout);
  const tokenPath = dir.path('.sheetrest/admin-token');
  assert.match(stdout, new RegExp(`Admin token: in ${tokenPath.replaceAll('.', '\\.')} \\(made now; mode 0600\\)`));
  const token = (await readFile(tokenPath, 'utf8')).trim();
  assert.match(token, /^[0-9a-f]{64}$/);
  assert.equal((await stat(tokenPath)).mode & 0o777, 0o600);
  assert.ok(!stdout.includes(token) && !stderr.includes(token), 'the token itself is never printed');

  // Every curl prints its status on a line of its own after the answer.
  const script = `set -e\ncurl() { command curl -sS -w '\\nstatus=%{http_code}\\n' "$@"; }\n${clientBlock.replaceAll('127.0.0.1:8080', `127.0.0.1:${port}`)}`;
  const run = spawn('bash', ['-c', script], { cwd: dir.path('.'), stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  run.stdout.setEncoding('utf8').on('data', (text: string) => (out += text));
  run.stderr.setEncoding('utf8').on('data', (text: string) => (err += text));
  const code = await new Promise((resolve) => run.on('exit', resolve));
  assert.equal(code, 0, `${out}\n${err}`);
  const statuses = [...out.matchAll(/^status=(\d+)$/gm)].map((match) => Number(match[1]));
  assert.deepEqual(statuses, [201, 201, 200], out);
  assert.match(out, /"id":"crm"/);
  assert.match(out, /"key":"sr_/);
  assert.match(out, /"name":"People"/);
});
