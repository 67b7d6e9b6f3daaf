// A redis-server of the test's own, on a free loopback port, with nothing saved to disk (or, with
// `{ aof: true }`, an append-only file fsynced on every write, kept across restarts):
// `const redis = await startRedis(t); if (typeof redis === 'string') return t.skip(redis);`.
// `pause()` stops it with SIGSTOP, which is what a network partition looks like to a client:
// the connection stays up, the kernel takes the bytes, nothing answers; `resume()` goes on.
// Without redis-server installed the tests that need it are skipped, naming the reason
// (`.ci/run` installs Debian's package when it is missing).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { defer, tempDir, type TestContext } from './http.ts';

export const REDIS_SERVER = process.env.SHEETREST_REDIS_SERVER ?? 'redis-server';

export interface TestRedis {
  readonly url: string;
  readonly port: number;
  /** Stops the server (SIGKILL: Redis "goes away"); idempotent. */
  stop(): Promise<void>;
  /** Starts it again on the same port (empty: nothing was saved; with `aof`, from its append-only file). */
  restart(): Promise<void>;
  /** SIGSTOP: it hangs, its connections stay open (idempotent). */
  pause(): void;
  /** SIGCONT: it goes on, answering what its sockets hold (idempotent). */
  resume(): void;
}

export interface RedisSettings {
  /** `appendonly yes`, `appendfsync always`, in a folder of the test's own. */
  readonly aof?: boolean;
}

/** Why Redis tests cannot run here, or undefined when they can. */
export function redisMissing(): string | undefined {
  const probe = spawnSync(REDIS_SERVER, ['--version'], { encoding: 'utf8' });
  if (probe.error !== undefined || probe.status !== 0) return `${REDIS_SERVER} is not installed (apt-get install redis-server); the Redis tests need one`;
  return undefined;
}

/** A running redis-server stopped after the test, or the reason none can run. */
export async function startRedis(t: TestContext, settings: RedisSettings = {}): Promise<TestRedis | string> {
  const missing = redisMissing();
  if (missing !== undefined) return missing;
  const port = await freePort();
  const persistence = settings.aof === true ? ['--appendonly', 'yes', '--appendfsync', 'always', '--dir', (await tempDir(t)).dir] : ['--appendonly', 'no'];
  let child: ChildProcess | null = null;
  const launch = async () => {
    child = await launchRedis(port, persistence);
  };
  // process.kill, not child.kill: Deno's child.kill sends nothing once the child was signalled.
  const signal = (name: NodeJS.Signals) => {
    const running = child as ChildProcess | null;
    if (running?.pid !== undefined && running.exitCode === null && running.signalCode === null) process.kill(running.pid, name);
  };
  const stop = async () => {
    const running = child;
    child = null;
    if (running === null || running.exitCode !== null || running.signalCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    if (running.pid !== undefined) process.kill(running.pid, 'SIGKILL');
    await exited;
  };
  await launch();
  defer(t, stop);
  return { url: `redis://127.0.0.1:${port}/0`, port, stop, restart: launch, pause: () => signal('SIGSTOP'), resume: () => signal('SIGCONT') };
}

async function launchRedis(port: number, persistence: readonly string[]): Promise<ChildProcess> {
  const child = spawn(REDIS_SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence], { stdio: ['ignore', 'pipe', 'pipe'] });
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

/** A running redis-server for the test, or null once the test is skipped naming why none can run. */
export async function redisOrSkip(t: TestContext & { skip(message?: string): void }, settings: RedisSettings = {}): Promise<TestRedis | null> {
  const redis = await startRedis(t, settings);
  if (typeof redis === 'string') {
    t.skip(redis);
    return null;
  }
  return redis;
}
