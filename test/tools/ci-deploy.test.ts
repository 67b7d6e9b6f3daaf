// .ci/deploy's own behaviour, without containers: `SHEETREST_DEPLOY_PACKAGE=0 bash .ci/deploy`
// with no podman on PATH says why it skips the container checks and exits 0; with a stand-in
// podman that records its arguments, a SIGTERM in the middle of a `podman build` still removes
// what the run made (its containers, volumes, network and temporary folder) and exits 143.
// Runs under Node, Deno and Bun.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('../../.ci/deploy', import.meta.url));
const BASH = ['/bin/bash', '/usr/bin/bash'].find((path) => existsSync(path));
const skip = BASH === undefined || !existsSync('/usr/bin/mktemp') ? 'needs bash and coreutils' : false;

interface Context {
  after(fn: () => unknown): void;
}

interface Run {
  code: number | null;
  signal: string | null;
  output: string;
}

function folder(t: Context): string {
  const dir = mkdtempSync(join(tmpdir(), 'sheetrest-ci-deploy-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs .ci/deploy with the environment given; `during.then(pid)` is called once `during.ready()` says so. */
function runDeploy(env: Record<string, string>, during?: { ready: () => boolean; then: (pid: number) => void }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(BASH!, [SCRIPT], { env: { SHEETREST_DEPLOY_PACKAGE: '0', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    let poll: ReturnType<typeof setInterval> | undefined;
    if (during) {
      poll = setInterval(() => {
        if (!during.ready()) return;
        clearInterval(poll);
        during.then(child.pid!);
      }, 50);
    }
    const limit = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(limit);
      clearInterval(poll);
      resolve({ code, signal, output });
    });
  });
}

/** A folder of links to the few programs .ci/deploy needs before its container checks: no podman. */
function pathWithout(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  for (const name of ['dirname', 'mktemp', 'rm', 'tail', 'id', 'cat']) {
    const found = ['/usr/bin', '/bin'].map((at) => join(at, name)).find((path) => existsSync(path));
    if (found) symlinkSync(found, join(bin, name));
  }
  return bin;
}

test('.ci/deploy skips its container checks, saying why, when podman is not installed', { skip }, async (t) => {
  const dir = folder(t);
  const run = await runDeploy({ PATH: pathWithout(dir), TMPDIR: dir });
  assert.equal(run.code, 0, run.output);
  assert.match(run.output, /SKIPPED the container checks: podman is not installed/);
  assert.match(run.output, /skipped: the package checks \(SHEETREST_DEPLOY_PACKAGE=0\)/);
});

test('.ci/deploy, stopped by SIGTERM during a podman build, removes what it made and exits 143', { skip }, async (t) => {
  const dir = folder(t);
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const log = join(dir, 'podman.log');
  const building = join(dir, 'building');
  // A podman that runs everything, has every image, lists one container and one volume of the
  // run, and takes 2 s to build.
  const stub = `#!/bin/sh
echo "$*" >>'${log}'
case "$1 $2" in
  'build '*) touch '${building}'; sleep 2 ;;
  'ps -aq') echo made-container ;;
  'volume ls') echo made-volume ;;
esac
exit 0
`;
  writeFileSync(join(bin, 'podman'), stub, { mode: 0o755 });
  writeFileSync(join(bin, 'podman-compose'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  let work = '';
  const run = await runDeploy(
    { PATH: `${bin}:${process.env.PATH}`, TMPDIR: dir },
    {
      ready: () => existsSync(building),
      then: (pid) => {
        const made = readdirSync(dir).find((name) => name.startsWith('sheetrest-deploy-'));
        work = made ? join(dir, made) : '';
        process.kill(pid, 'SIGTERM');
      },
    },
  );
  assert.equal(run.code, 143, run.output);
  const calls = readFileSync(log, 'utf8');
  assert.match(calls, /^rm -f -v -t 5 made-container/m);
  assert.match(calls, /^volume rm -f made-volume/m);
  assert.match(calls, /^network rm -f sheetrest-ci-\d+_default$/m);
  assert.notEqual(work, '');
  assert.equal(existsSync(work), false, `${work} is left behind`);
});
