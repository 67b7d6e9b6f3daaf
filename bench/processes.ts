// What the HTTP and memory benchmarks share: a free loopback port, each runtime's pinned binary,
// starting a server as a child process and waiting until it answers, and reading its memory.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));

export type Runtime = 'node' | 'deno' | 'bun';

/** How each runtime runs a .ts file: the pinned binaries from node_modules/.bin. */
export const COMMANDS: Record<Runtime, { readonly bin: string; readonly args: readonly string[] }> = {
  node: { bin: process.execPath, args: [] },
  deno: { bin: join(ROOT, 'node_modules/.bin/deno'), args: ['run', '-A'] },
  bun: { bin: join(ROOT, 'node_modules/.bin/bun'), args: [] },
};

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address !== null ? address.port : 0));
    });
  });
}

export interface Target {
  readonly name: string;
  readonly url: string;
  readonly process: ChildProcess;
}

export interface StartOptions {
  readonly name: string;
  readonly runtime: Runtime;
  readonly args: readonly string[];
  readonly port: number;
  /** A path that answers 200 once the server is ready. */
  readonly probe: string;
  /** The status `probe` answers once the process serves (default: any 2xx). */
  readonly probeStatus?: number;
  /** Where the child's stderr goes (appended). */
  readonly log: string;
  readonly env?: Record<string, string>;
  /** A CPU to pin the process to (with taskset, where it exists): paired runs share one core. */
  readonly cpu?: number;
}

/** Whether `taskset` can pin processes here (a second core is needed to keep loaders apart). */
export const CAN_PIN = spawnSync('taskset', ['-c', '0', 'true']).status === 0 && availableParallelism() >= 2;

/** Starts `runtime script args` and waits (two minutes at most) until `probe` answers 200 (or `probeStatus`). */
export async function startProcess({ name, runtime, args, port, probe, probeStatus, log, env = {}, cpu }: StartOptions): Promise<Target> {
  const fd = openSync(log, 'a');
  const command = [COMMANDS[runtime].bin, ...COMMANDS[runtime].args, ...args];
  const pinned = cpu !== undefined && CAN_PIN ? ['taskset', '-c', String(cpu), ...command] : command;
  const child = spawn(pinned[0], pinned.slice(1), { cwd: ROOT, stdio: ['ignore', 'ignore', fd], env: { ...process.env, ...env } });
  closeSync(fd);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited: ${readFileSync(log, 'utf8')}`);
    try {
      const response = await fetch(url + probe);
      await response.arrayBuffer();
      if (probeStatus === undefined ? response.ok : response.status === probeStatus) return { name, url, process: child };
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${name} did not start: ${readFileSync(log, 'utf8')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Sends SIGTERM and waits for the exit. */
export async function stopProcess(target: Target): Promise<void> {
  if (target.process.exitCode !== null) return;
  const exited = new Promise((resolve) => target.process.once('exit', resolve));
  target.process.kill('SIGTERM');
  await exited;
}

/**
 * A child's memory in MB from /proc: VmRSS is the resident set now, VmHWM its high-water mark,
 * kept by the kernel for the process's life. NaN where /proc is missing.
 */
export function memoryMb(child: ChildProcess, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return match === null ? NaN : Number(match[1]) / 1024;
  } catch {
    return NaN;
  }
}

/**
 * Requests per second `wrk -t1 -c32` gets from `url` in `seconds`, wrk on CPU 1 where it can be
 * pinned (the servers are on CPU 0): the loader of every paired bench (`script`: a wrk Lua script, for a POST). Any non-2xx/3xx answer
 * rejects, so a figure is never of error answers.
 */
export function wrk(url: string, seconds: number, headers: Readonly<Record<string, string>> = {}, script?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const args = ['-t1', '-c32', `-d${seconds}s`, ...Object.entries(headers).flatMap(([key, value]) => ['-H', `${key}: ${value}`]), ...(script === undefined ? [] : ['-s', script]), url];
    const command = CAN_PIN ? ['taskset', '-c', '1', 'wrk', ...args] : ['wrk', ...args];
    const child = spawn(command[0], command.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
    child.on('error', reject);
    child.on('exit', () => {
      const errors = /Non-2xx or 3xx responses: (\d+)/.exec(output);
      if (errors !== null) reject(new Error(`${url}: ${errors[1]} error answers`));
      else resolve(Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? NaN));
    });
  });
}

/** A redis-server of this run's own on CPU 1 (the loaders'), nothing saved. */
export async function startRedisServer(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const command = ['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const pinned = CAN_PIN ? ['taskset', '-c', '1', ...command] : command;
  const child = spawn(pinned[0], pinned.slice(1), { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      output += text;
      if (output.includes('Ready to accept connections')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited (${code}): ${output}`)));
  });
  child.stdout?.resume();
  return { url: `redis://127.0.0.1:${port}/0`, child };
}
