// One JSON line per request (method, path, status, duration, connection) and for server events.
// Never a key, a body or a query string: the path is logged without its parameters.
// Lines are collected and written to stderr in whole-line chunks, when a chunk is full or every
// 25 ms, without blocking the event loop (a write to fd 2 runs off the loop; one at a time, so lines keep their
// order). `flush()` waits for everything logged so far; the process's exit writes what is still
// pending synchronously, so a crash or `process.exit()` loses nothing but, at worst, the one
// chunk whose write was already under way.
import { Buffer } from 'node:buffer';
import { write as writeFd, writeSync as writeFdSync } from 'node:fs';
import process from 'node:process';
import { setImmediate } from 'node:timers';

export const LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const;
export type Level = (typeof LEVELS)[number];

export interface Logger {
  /** Whether lines at this level are written, so a caller can skip building them. */
  enabled(level: Exclude<Level, 'silent'>): boolean;
  debug(message: string, fields?: Record<string, unknown>): void;
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** Resolves once every line logged before the call is written (or its write has failed). */
  flush(): Promise<void>;
  /** Writes every pending line now, blocking: for exit paths that cannot wait. */
  flushSync(): void;
}

/** Where the buffered logger's chunks go: whole lines, each chunk ending in a newline. */
export interface LogSink {
  /** Writes without blocking the event loop; `done` when all of it is written or it failed. */
  write(chunk: string, done: (error?: unknown) => void): void;
  /** Writes before returning. */
  writeSync(chunk: string): void;
}

/**
 * A chunk is whole lines, at most 16 KiB unless one line is longer (as pino's sonic-boom writes):
 * at 4 KiB, Deno spent 7% of a small answer's CPU on the writes. Our lines never interleave (one
 * write at a time); another writer's line (the CLI's start and stop messages) could land inside
 * a chunk only on a pipe too full to take the chunk whole (more than PIPE_BUF, 4 KiB, is not
 * atomic).
 */
const CHUNK_BYTES = 16 * 1024;
/**
 * Lines are written at least this often (and at once when a chunk is full): one write for every
 * few requests would cost more than building the lines.
 */
const FLUSH_INTERVAL_MS = 25;
/** Lines waiting while stderr does not drain are capped; past this they are counted and dropped. */
const MAX_PENDING_CHARS = 8 * 1024 * 1024;

/**
 * `write` is a plain line writer (each line written as it is logged, as tests use it) or a sink
 * that takes buffered chunks; the default is fd 2 through a buffered sink.
 */
export function createLogger(level: Level, write: ((line: string) => void) | LogSink = stderrSink): Logger {
  const threshold = LEVELS.indexOf(level);
  const out = typeof write === 'function' ? direct(write) : buffered(write);
  const at = (name: Exclude<Level, 'silent'>) => {
    const rank = LEVELS.indexOf(name);
    const level = `","level":"${name}","message":`;
    return (message: string, fields?: Record<string, unknown>) => {
      if (rank < threshold) return;
      // The same line JSON.stringify({time, level, message, ...fields}) gives, without copying the
      // fields into a new object: this runs once per request at the default level.
      const rest = fields === undefined ? '{}' : JSON.stringify(fields);
      out.line(`{"time":"${isoNow()}${level}${JSON.stringify(message)}${rest.length === 2 ? '}' : `,${rest.slice(1)}`}`);
    };
  };
  return {
    enabled: (name) => LEVELS.indexOf(name) >= threshold,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    flush: out.flush,
    flushSync: out.flushSync,
  };
}

interface Output {
  line(text: string): void;
  flush(): Promise<void>;
  flushSync(): void;
}

function direct(write: (line: string) => void): Output {
  return { line: write, flush: async () => undefined, flushSync: () => undefined };
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** The stderr of this process, written by fd on every runtime (node:fs's write runs off the loop). */
export const stderrSink: LogSink = {
  write(chunk, done) {
    writeAll(Buffer.from(chunk), done);
  },
  writeSync(chunk) {
    const bytes = Buffer.from(chunk);
    let offset = 0;
    // EAGAIN: stderr is a non-blocking pipe that is full. Wait for its reader a millisecond at a
    // time, for a second at most: an exit must not hang on a reader that is gone or stuck.
    for (let waits = 0; offset < bytes.byteLength && waits < 1000; ) {
      try {
        offset += writeFdSync(2, bytes, offset);
      } catch (error) {
        if ((error as { code?: string }).code !== 'EAGAIN') return;
        Atomics.wait(pause, 0, 0, 1);
        waits++;
      }
    }
  },
};

function writeAll(bytes: Buffer, done: (error?: unknown) => void, offset = 0): void {
  writeFd(2, bytes, offset, bytes.byteLength - offset, null, (error, written) => {
    // A full non-blocking pipe answers EAGAIN: try again shortly rather than lose the lines.
    if (error !== null && (error as { code?: string }).code === 'EAGAIN') return void setTimeout(() => writeAll(bytes, done, offset), 5);
    if (error !== null) return done(error);
    if (offset + written < bytes.byteLength) return writeAll(bytes, done, offset + written);
    done();
  });
}

/** Every buffered logger with lines pending, written synchronously when the process exits. */
const live = new Set<Output>();
let exitHook = false;

function buffered(sink: LogSink): Output {
  let pending: string[] = [];
  let head = 0;
  let pendingChars = 0;
  let dropped = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let immediate = false;
  let writing = false;
  let waiters: Array<() => void> = [];

  /** Whole lines from the front of the queue, up to a chunk's size (or one longer line). */
  const takeChunk = (): string => {
    let chunk = pending[head++] + '\n';
    while (head < pending.length && chunk.length + pending[head].length + 1 <= CHUNK_BYTES) chunk += pending[head++] + '\n';
    if (head === pending.length) {
      pending = [];
      head = 0;
    } else if (head > 4096 && head * 2 > pending.length) {
      // A long backlog: drop the lines already written rather than keep them referenced.
      pending = pending.slice(head);
      head = 0;
    }
    pendingChars -= chunk.length;
    return chunk;
  };

  const reportDropped = () => {
    if (dropped === 0) return;
    const line = JSON.stringify({ time: new Date().toISOString(), level: 'warn', message: 'log lines dropped: stderr did not drain', dropped });
    pending.push(line);
    pendingChars += line.length + 1;
    dropped = 0;
  };

  const settle = () => {
    live.delete(output);
    const done = waiters;
    waiters = [];
    for (const resolve of done) resolve();
  };

  /** Writes chunk after chunk while a chunk is full or someone waits; a short tail waits for the timer. */
  const pump = () => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    immediate = false;
    if (writing) return;
    reportDropped();
    if (head === pending.length) return settle();
    writing = true;
    sink.write(takeChunk(), () => {
      // A failed write is not retried: stderr that refuses lines has nowhere else to put them.
      writing = false;
      if (head === pending.length && dropped === 0) settle();
      else if (pendingChars >= CHUNK_BYTES || waiters.length > 0) pump();
      else schedule(false);
    });
  };

  /** A full chunk goes out on the next turn; fewer lines wait up to FLUSH_INTERVAL_MS for company. */
  const schedule = (now: boolean) => {
    if (now) {
      if (!immediate) setImmediate(pump);
      immediate = true;
    } else if (timer === undefined && !immediate) {
      timer = setTimeout(pump, FLUSH_INTERVAL_MS);
    }
  };

  const output: Output = {
    line(text) {
      if (pendingChars + text.length > MAX_PENDING_CHARS) {
        dropped++;
        return;
      }
      pending.push(text);
      pendingChars += text.length + 1;
      if (!live.has(output)) watchExit(output);
      schedule(pendingChars >= CHUNK_BYTES);
    },
    flush() {
      if (head === pending.length && !writing && dropped === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        waiters.push(resolve);
        schedule(true);
      });
    },
    flushSync() {
      // A chunk already handed to the sink is on its way; what is still queued is written now.
      reportDropped();
      if (head === pending.length) return;
      const chunk = pending.slice(head).join('\n') + '\n';
      pending = [];
      head = 0;
      pendingChars = 0;
      try {
        sink.writeSync(chunk);
      } catch {
        // Nothing left to tell: this is the last resort.
      }
    },
  };
  return output;
}

function watchExit(output: Output): void {
  live.add(output);
  if (exitHook) return;
  exitHook = true;
  process.on('exit', () => {
    for (const each of live) each.flushSync();
  });
}

export const silentLogger: Logger = createLogger('silent');

let lastMs = -1;
let lastIso = '';

/** `new Date().toISOString()`, built once per millisecond: a busy server logs many lines in one. */
function isoNow(): string {
  const now = Date.now();
  if (now !== lastMs) {
    lastMs = now;
    lastIso = new Date(now).toISOString();
  }
  return lastIso;
}
