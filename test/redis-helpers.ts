// A redis-server of the test's own, on a free loopback port, with nothing saved to disk:
// `const redis = await startRedis(t); if (typeof redis === 'string') return t.skip(redis);`.
// Without redis-server installed the tests that need it are skipped, naming the reason
// (`.ci/run` installs Debian's package when it is missing).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { defer, type TestContext } from './http-helpers.ts';

export const REDIS_SERVER = process.env.SHEETREST_REDIS_SERVER ?? 'redis-server';

export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGKILL: Redis "goes away"); idempotent. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: nothing was saved). */
  restart(): Promise<void>;
}

/** Why Redis tests cannot run here, or undefined when they can. */
export function redisMissing(): string | undefined {
  const probe = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) return `${REDIS_SERVER} is not installed (apt-get install redis-server); the Redis tests need one`;
  return undefined;
}

/** A running redis-server stopped after the test, or the reason none can run. */
export async function startRedis(t: TestContext): Promise<TestRedis | string> {
  const missing = redisMissing();
  if (missing !== undefined) return missing;
  const port = await freePort();
  let child: ChildProcess | null = null;
  const launch = async () => {
    child = await launchRedis(port);
  };
  const stop = async () => {
    const running = child;
    child = null;
    if (running === null || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGKILL');
    await exited;
  };
  await launch();
  defer(t, stop);
  return { url: `redis://127.0.0.1:${port}/0`, port, stop, restart: launch };
}

async function launchRedis(port: number): Promise<ChildProcess> {
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s: ${output}`)), 10_000);
    child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      output += text;
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}) before it was ready: ${output}`));
    });
  });
  // Keep reading, so a full pipe never blocks it.
  child.stdout?.resume();
  child.stderr?.resume();
  return child;
}

/** A port free now on 127.0.0.1 (another process could take it before Redis does; unlikely on loopback). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
