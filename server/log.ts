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

/**
 * A line's fields, or a function called only when the line is written that gives them, or gives
 * their JSON text (`{"a":1}`) for a line on every request's path, built without an object.
 */
export type Fields = Record<string, unknown> | (() => Record<string, unknown> | string);

export interface Logger {
  /** Whether lines at this level are written, so a caller can skip building them. */
  enabled(level: Exclude<Level, 'silent'>): boolean;
  debug(message: string, fields?: Fields): void;
  info(message: string, fields?: Fields): void;
  warn(message: string, fields?: Fields): void;
  error(message: string, fields?: Fields): void;
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
 * A chunk is whole lines, about 64 KiB, one line over at most: at 4 KiB, Deno spent 7% of a small
 * answer's CPU on the writes; against 16 KiB (what pino's sonic-boom writes), 64 KiB served a kept
 * one-row answer at the info level 1.00-1.08x on Deno, 1.02-1.04x on Bun and 1.00-1.03x on Node
 * (paired, docs/benchmarks.md). Lines still go out within FLUSH_INTERVAL_MS. Our lines never
 * interleave (one write at a time); another writer's line (the CLI's start and stop messages)
 * could land inside a chunk only on a pipe too full to take the chunk whole (more than PIPE_BUF,
 * 4 KiB, is not atomic).
 */
const CHUNK_BYTES = 64 * 1024;
/** Entries that make a chunk worth writing at once: a request's line is about 110-180 bytes. */
const CHUNK_ENTRIES = 384;
/**
 * Lines are written at least this often (and on the next turn once a chunk's worth is queued):
 * one write for every few requests would cost more than building the lines.
 */
const FLUSH_INTERVAL_MS = 25;
/** Entries waiting while stderr does not drain are capped; past this they are counted and dropped. */
const MAX_PENDING_ENTRIES = 50_000;

/**
 * `write` is a plain line writer (each line built and written as it is logged, as tests use it)
 * or a sink that takes buffered chunks; the default is fd 2 through a buffered sink.
 */
export function createLogger(level: Level, write: ((line: string) => void) | LogSink = stderrSink): Logger {
  const threshold = LEVELS.indexOf(level);
  const out = typeof write === 'function' ? direct(write) : buffered(write);
  const at = (name: Exclude<Level, 'silent'>) => {
    const rank = LEVELS.indexOf(name);
    return (message: string, fields?: Fields) => {
      if (rank >= threshold) out.entry(Date.now(), name, message, fields);
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

/**
 * The same line JSON.stringify({time, level, message, ...fields}) gives, without copying the
 * fields into a new object.
 */
function formatLine(time: number, level: string, message: string, fields: Fields | undefined): string {
  const values = typeof fields === 'function' ? fields() : fields;
  const rest = values === undefined ? '{}' : typeof values === 'string' ? values : JSON.stringify(values);
  return `{"time":"${isoAt(time)}","level":"${level}","message":${messageJson(message)}${rest.length === 2 ? '}' : `,${rest.slice(1)}`}`;
}

let lastMessage = '';
let lastMessageJson = '""';

/** `JSON.stringify(message)`, made once while the same message repeats (`request`, line after line). */
function messageJson(message: string): string {
  if (message !== lastMessage) {
    lastMessage = message;
    lastMessageJson = JSON.stringify(message);
  }
  return lastMessageJson;
}

interface Output {
  entry(time: number, level: string, message: string, fields: Fields | undefined): void;
  flush(): Promise<void>;
  flushSync(): void;
}

function direct(write: (line: string) => void): Output {
  return { entry: (time, level, message, fields) => write(formatLine(time, level, message, fields)), flush: async () => undefined, flushSync: () => undefined };
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** The stderr of this process, written by fd on every runtime (node:fs's write runs off the loop). */
export const stderrSink: LogSink = {
  write(chunk, done) {
    // The text as it is: the runtime encodes it on its way to the fd, with no Buffer made here
    // (on Bun, making one was a third of what the logger cost). Only a short write, where the
    // rest must go from a byte offset, turns it into bytes.
    writeFd(2, chunk, null, 'utf8', (error, written) => {
      if (error !== null && (error as { code?: string }).code === 'EAGAIN') return void setTimeout(() => stderrSink.write(chunk, done), 5);
      if (error !== null) return done(error);
      if (written < chunk.length || written < Buffer.byteLength(chunk)) return writeAll(Buffer.from(chunk), done, written);
      done();
    });
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
  // Entries wait unformatted, four slots each (time, level, message, fields): a request pays for
  // storing them, and their lines are built in one pass per chunk, off the request's path.
  let queue: unknown[] = [];
  let head = 0;
  /** A line built but left out of the last chunk, which it would have taken past CHUNK_BYTES. */
  let carry = '';
  let dropped = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let immediate = false;
  let writing = false;
  let waiters: Array<() => void> = [];

  const queued = () => (queue.length - head) / 4;
  const empty = () => head === queue.length && carry === '';

  /** Whole lines from the front of the queue, up to a chunk's size (or one longer line). */
  const takeChunk = (): string => {
    let chunk = carry;
    carry = '';
    while (head < queue.length) {
      const line = formatLine(queue[head] as number, queue[head + 1] as string, queue[head + 2] as string, queue[head + 3] as Fields | undefined) + '\n';
      head += 4;
      if (chunk !== '' && chunk.length + line.length > CHUNK_BYTES) {
        carry = line;
        break;
      }
      chunk += line;
    }
    if (head === queue.length) {
      queue = [];
      head = 0;
    } else if (head > 4096 && head * 2 > queue.length) {
      // A long backlog: drop the entries already written rather than keep them referenced.
      queue = queue.slice(head);
      head = 0;
    }
    return chunk;
  };

  const reportDropped = () => {
    if (dropped === 0) return;
    queue.push(Date.now(), 'warn', 'log lines dropped: stderr did not drain', { dropped });
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
    if (empty()) return settle();
    writing = true;
    sink.write(takeChunk(), () => {
      // A failed write is not retried: stderr that refuses lines has nowhere else to put them.
      writing = false;
      if (empty() && dropped === 0) settle();
      else if (queued() >= CHUNK_ENTRIES || waiters.length > 0) pump();
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
    entry(time, level, message, fields) {
      if (queued() >= MAX_PENDING_ENTRIES) {
        dropped++;
        return;
      }
      queue.push(time, level, message, fields);
      if (!live.has(output)) watchExit(output);
      // While a write is under way its callback picks up the backlog: nothing to schedule.
      if (!writing) schedule(queued() >= CHUNK_ENTRIES);
    },
    flush() {
      if (empty() && !writing && dropped === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        waiters.push(resolve);
        schedule(true);
      });
    },
    flushSync() {
      // A chunk already handed to the sink is on its way; what is still queued is written now.
      reportDropped();
      let chunk = '';
      while (!empty()) chunk += takeChunk();
      if (chunk === '') return;
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

/** `new Date(ms).toISOString()`, built once per millisecond: a busy server logs many lines in one. */
function isoAt(ms: number): string {
  if (ms !== lastMs) {
    lastMs = ms;
    lastIso = new Date(ms).toISOString();
  }
  return lastIso;
}
