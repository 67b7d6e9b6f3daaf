// Real servers for the integration tests, on whichever runtime runs the test: `startServer(t,
// config)` serves in-process on 127.0.0.1:0 with this runtime's listener, `spawnServer(t, [book])`
// runs the CLI (`server/main.ts`) as a child process and reads its URL from stdout. Both are
// stopped after the test. Also temp workbooks, bounded-concurrency bursts, a raw-socket upload, raw
// requests (what fetch() would not send) and a trickling client.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import * as XLSX from '@e965/xlsx';
import type { CellObject } from '@e965/xlsx';
import type { Config } from '../../server/config/config.ts';
import type { Listen } from '../../server/runtime/listener.ts';
import { createLogger, type Logger } from '../../server/log.ts';
import { start, type Running } from '../../server/start.ts';
import { bookBytes, bookOf } from './file-source.ts';

/** What `t` offers in all three runtimes' node:test. */
export interface TestContext {
  after(fn: () => unknown): void;
}

export const RUNTIME: 'node' | 'deno' | 'bun' = 'Bun' in globalThis ? 'bun' : 'Deno' in globalThis ? 'deno' : 'node';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

// The one place the runtimes differ: which listener serves in-process, and how to run the CLI.
const RUNTIMES = {
  node: { listener: () => import('../../server/runtime/node.ts'), cli: ['server/main.ts'] },
  deno: { listener: () => import('../../server/runtime/deno.ts'), cli: ['run', '-A', 'server/main.ts'] },
  bun: { listener: () => import('../../server/runtime/bun.ts'), cli: ['server/main.ts'] },
} as const;

export async function runtimeListen(): Promise<Listen> {
  return (await RUNTIMES[RUNTIME].listener()).listen;
}

/**
 * Runs `fn` after the test, in reverse order of deferral (a server is stopped before its temp
 * folder is removed), whatever order each runtime gives `t.after` hooks.
 */
export function defer(t: TestContext, fn: () => unknown): void {
  let stack = deferred.get(t);
  if (stack === undefined) {
    const created: (() => unknown)[] = [];
    stack = created;
    deferred.set(t, created);
    t.after(async () => {
      const errors: unknown[] = [];
      for (let next = created.pop(); next !== undefined; next = created.pop()) {
        try {
          await next();
        } catch (error) {
          errors.push(error);
        }
      }
      if (errors.length > 0) throw errors[0];
    });
  }
  stack.push(fn);
}

const deferred = new WeakMap<TestContext, (() => unknown)[]>();

// ---- temp workbooks ------------------------------------------------------------------------

export type Cell = string | number | boolean | null;

export interface TempDir {
  readonly dir: string;
  /** `dir/name`. */
  path(name: string): string;
}

/** A fresh folder under the system temp folder, removed after the test. */
export async function tempDir(t: TestContext): Promise<TempDir> {
  const dir = await mkdtemp(join(tmpdir(), 'sheetrest-http-'));
  defer(t, () => rm(dir, { recursive: true, force: true }));
  return { dir, path: (name) => join(dir, name) };
}

function cellOf(value: Cell): CellObject | undefined {
  if (value === null || value === '') return undefined;
  if (typeof value === 'number') return { t: 'n', v: value };
  if (typeof value === 'boolean') return { t: 'b', v: value };
  return { t: 's', v: value };
}

/** Writes an .xlsx with one tab: `rows[0]` is the header row. Replaces the file in place. */
export async function writeXlsx(path: string, tab: string, rows: readonly (readonly Cell[])[]): Promise<void> {
  await writeFile(path, bookBytes(bookOf([{ name: tab, cells: rows.map((cells) => cells.map(cellOf)) }]), 'xlsx'));
}

/** What a spreadsheet program finds in the file, read with SheetJS and no help from sheetrest: tab -> rows of displayed text. */
export async function readBook(path: string): Promise<Record<string, string[][]>> {
  const book = XLSX.read(await readFile(path), { type: 'buffer', dense: true, raw: path.endsWith('.csv') });
  return Object.fromEntries(
    book.SheetNames.map((name) => [name, XLSX.utils.sheet_to_json<string[]>(book.Sheets[name], { header: 1, raw: false, defval: '' })]),
  );
}

// ---- in-process server ---------------------------------------------------------------------

export interface Served {
  readonly url: string;
  readonly running: Running;
  /** Idempotent; also run after the test. */
  close(): Promise<void>;
}

/** Starts sheetrest in this process on 127.0.0.1:0, with this runtime's listener and no log output (or `log`). */
export async function startServer(t: TestContext, config: Config, log: Logger = createLogger('silent')): Promise<Served> {
  const running = await start({ ...config, host: '127.0.0.1', port: 0 }, { listen: await runtimeListen(), log });
  let closing: Promise<void> | undefined;
  const close = () => (closing ??= running.close());
  defer(t, close);
  return { url: running.url, running, close };
}

// ---- the CLI as a child process -------------------------------------------------------------

export interface Child {
  readonly url: string;
  readonly process: ChildProcess;
  /** Resolves with the exit code (null when killed by a signal) and the signal. */
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  /** Everything written to stderr so far. */
  stderr(): string;
  /**
   * Sends a signal. Through `process.kill(pid)` rather than `ChildProcess.kill()`: Deno's
   * `kill()` records the signal it sent as the exit signal, hiding a graceful exit 0.
   */
  signal(name: 'SIGKILL' | 'SIGTERM' | 'SIGINT'): void;
}

/** argv that runs the CLI on this runtime (`node server/main.ts ...`, `deno run -A server/main.ts ...`). */
export function cliCommand(args: readonly string[]): [string, string[]] {
  return [process.execPath, [...RUNTIMES[RUNTIME].cli, ...args]];
}

export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI to its end (for start-up errors); kills it after `timeoutMs`. */
export function runCli(args: readonly string[], timeoutMs = 15_000): Promise<CliRun> {
  const [command, argv] = cliCommand(args);
  const child = spawn(command, argv, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  return new Promise((resolveRun, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the CLI did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
  });
}

/**
 * Spawns the CLI on 127.0.0.1:0 (with `env` added to this process's environment) and waits for
 * its `sheetrest listening on URL` line. The child is SIGKILLed after the test if it is still running.
 */
export async function spawnServer(t: TestContext, args: readonly string[], timeoutMs = 15_000, env: Record<string, string> = {}): Promise<Child> {
  const [command, argv] = cliCommand([...args, '--host', '127.0.0.1', '--port', '0']);
  const child = spawn(command, argv, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', ...env } });
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
  const exited = new Promise<{ code: number | null; signal: string | null }>((resolveExit) => {
    child.on('exit', (code, signal) => resolveExit({ code, signal }));
  });
  defer(t, async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const url = await new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(() => reject(new Error(`no "listening" line within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      stdout += text;
      const found = /listening on (http:\/\/\S+)/.exec(stdout);
      if (found !== null) {
        clearTimeout(timer);
        resolveUrl(found[1]);
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`the server exited (${code ?? signal}) before listening; stderr: ${stderr}`));
    });
  });
  const pid = child.pid;
  return {
    url,
    process: child,
    exited,
    stderr: () => stderr,
    signal: (name) => {
      if (pid !== undefined && child.exitCode === null && child.signalCode === null) process.kill(pid, name);
    },
  };
}

/** Waits for `promise`, failing after `ms` with `what` in the message. */
export async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// ---- requests --------------------------------------------------------------------------------

/** POSTs `body` as JSON. */
export function postJson(url: string, body: unknown, init: RequestInit = {}): Promise<Response> {
  return fetch(url, { ...init, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

/** PATCHes `body` as JSON. */
export function patchJson(url: string, body: unknown): Promise<Response> {
  return fetch(url, { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
}

/** GETs JSON rows, failing on any status but 200. */
export async function getRows(url: string): Promise<Record<string, string>[]> {
  const response = await fetch(url, { headers: { 'Cache-Control': 'no-cache' } });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status} ${text}`);
  return JSON.parse(text) as Record<string, string>[];
}

/**
 * Runs `task(i)` for i in 0..count-1 with at most `concurrency` in flight, in order of i. A
 * worker stops taking new items once `stop()` is true. Answers how many were started.
 */
export async function burst(count: number, concurrency: number, task: (i: number) => Promise<void>, stop: () => boolean = () => false): Promise<number> {
  let next = 0;
  const worker = async () => {
    while (next < count && !stop()) await task(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return next;
}

/** How many times each value occurs. */
export function tally(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}

// ---- a raw upload -----------------------------------------------------------------------------

export interface UploadResult {
  /** The status line's code, or null when the connection ended without an answer. */
  readonly status: number | null;
  /** The answer as received (head and whatever body arrived). */
  readonly response: string;
  /** Body bytes written before the answer started to arrive. */
  readonly writtenBeforeAnswer: number;
  readonly ms: number;
}

/**
 * Streams a body far larger than any cap over a raw TCP socket: the head (`headers`, e.g. a 2 GiB
 * Content-Length or chunked encoding), then 64 KiB chunks with backpressure until an answer
 * arrives, the server hangs up, `maxBytes` are written or `timeoutMs` passes. Never holds more
 * than one chunk. Answers what came back and how much was written before it.
 */
export function rawUpload(url: string, path: string, headers: Record<string, string>, options: { maxBytes: number; timeoutMs: number }): Promise<UploadResult> {
  const { hostname, port } = new URL(url);
  const chunked = /chunked/i.test(headers['Transfer-Encoding'] ?? '');
  const payload = new Uint8Array(64 * 1024).fill(0x20); // spaces: JSON whitespace, never a parse error before the cap
  const frame = chunked ? Buffer.concat([Buffer.from(`${payload.byteLength.toString(16)}\r\n`), payload, Buffer.from('\r\n')]) : Buffer.from(payload);
  const head = [`POST ${path} HTTP/1.1`, `Host: ${hostname}:${port}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), '', ''].join('\r\n');
  const started = performance.now();
  return new Promise((resolveUpload) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let response = '';
    let written = 0;
    let writtenBeforeAnswer: number | null = null;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(response);
      resolveUpload({ status: status === null ? null : Number(status[1]), response, writtenBeforeAnswer: writtenBeforeAnswer ?? written, ms: performance.now() - started });
    };
    const timer = setTimeout(finish, options.timeoutMs);
    socket.setEncoding('latin1');
    socket.on('data', (text: string) => {
      writtenBeforeAnswer ??= written;
      response += text;
      // The head and a small JSON error body are all we wait for.
      const end = response.indexOf('\r\n\r\n');
      if (end >= 0 && response.length > end + 4 && response.includes('}')) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
    const pump = () => {
      while (!done && writtenBeforeAnswer === null && written < options.maxBytes) {
        written += payload.byteLength;
        if (!socket.write(frame)) {
          socket.once('drain', pump);
          return;
        }
      }
    };
    socket.on('connect', () => {
      socket.write(head);
      pump();
    });
  });
}

// ---- a raw exchange ---------------------------------------------------------------------------

export interface RawAnswer {
  /** The status line's code, or null when the connection ended without an answer. */
  readonly status: number | null;
  /** Header names lower-cased. */
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Sends `head` (and `body`) over a fresh TCP socket exactly as given, so a test can send what
 * fetch() would refuse or repair (a hostile Host, bad percent-encoding, a 20 KB path), and
 * reads one answer: until the server closes, `Content-Length` bytes of body arrive, or `timeoutMs`.
 */
export function rawRequest(url: string, head: string, body = '', timeoutMs = 10_000): Promise<RawAnswer> {
  const { hostname, port } = new URL(url);
  return new Promise((resolveAnswer) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let received = Buffer.alloc(0);
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolveAnswer(parseRawAnswer(received));
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const parsed = parseRawAnswer(received);
      const length = Number(parsed.headers['content-length'] ?? NaN);
      if (parsed.status !== null && Buffer.byteLength(parsed.body) >= length) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
    socket.on('connect', () => socket.write(head + body));
  });
}

function parseRawAnswer(received: Buffer): RawAnswer {
  const text = received.toString('utf8');
  const end = text.indexOf('\r\n\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  if (end === -1 || status === null) return { status: status === null ? null : Number(status[1]), headers: {}, body: '' };
  const headers: Record<string, string> = {};
  for (const line of text.slice(0, end).split('\r\n').slice(1)) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(status[1]), headers, body: text.slice(end + 4) };
}

/**
 * A client that sends `head` and then one byte of body every `everyMs` until stopped: a slow
 * upload. Given `body`, it sends that instead, in `pieces` pieces, one every `everyMs`, and
 * then waits. `answer` settles with whatever the server sends back, or null when it hangs up silent.
 */
export function trickle(url: string, head: string, everyMs: number, body?: string, pieceCount = 10): { answer: Promise<RawAnswer>; stop(): void } {
  const { hostname, port } = new URL(url);
  const socket = connect({ host: hostname, port: Number(port) });
  let received = Buffer.alloc(0);
  let interval: ReturnType<typeof setInterval> | undefined;
  const answer = new Promise<RawAnswer>((resolveAnswer) => {
    const finish = () => {
      clearInterval(interval);
      socket.destroy();
      resolveAnswer(parseRawAnswer(received));
    };
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const parsed = parseRawAnswer(received);
      if (parsed.status !== null && Buffer.byteLength(parsed.body) >= Number(parsed.headers['content-length'] ?? NaN)) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
  });
  socket.on('connect', () => {
    socket.write(head);
    const pieces = body === undefined ? [] : Array.from({ length: pieceCount }, (_, i) => body.slice(Math.floor((i * body.length) / pieceCount), Math.floor(((i + 1) * body.length) / pieceCount)));
    interval = setInterval(() => {
      if (!socket.writable) return;
      if (body === undefined) socket.write('a');
      else if (pieces.length > 0) socket.write(pieces.shift()!);
    }, everyMs);
  });
  return {
    answer,
    stop: () => {
      clearInterval(interval);
      socket.destroy();
    },
  };
}
