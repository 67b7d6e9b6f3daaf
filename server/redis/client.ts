// The one Redis connection an instance keeps when `"store": {"type": "redis", ...}` is set
// (docs/scaling.md): `openRedis({ url: "redis://127.0.0.1:6379/0" })` -> commands that answer or
// fail within about a second, and whether Redis is reachable right now. A request must learn at
// once that Redis is away, to answer 503 or serve from cache, never hang.
//
// node-redis's per-command `timeout` option only covers a command's wait before it is written
// (commands-queue.js drops the timer once the command is sent), and a socket's idle timeout
// (`socket.socketTimeout`) is pushed back by every write, so under steady traffic a hung Redis
// (SIGSTOP, a network partition: the kernel still takes the bytes) is never noticed. So:
// - every command has a deadline here (COMMAND_TIMEOUT_MS); the first one missed means the
//   connection is hung: it is destroyed at once (node-redis rejects every command waiting on it)
//   and a new one is opened, which keeps trying (reconnectStrategy) until Redis answers;
// - while no connection is ready, commands are refused at once (`disableOfflineQueue`), never
//   queued: a command is sent at most once, on the connection it was given to;
// - an idle connection sends PING every PING_INTERVAL_MS, and gives up after SOCKET_TIMEOUT_MS
//   without a byte (`socketTimeout`), so a hang is noticed with no traffic too (later: nobody
//   waits then; a tight one would drop healthy connections whenever the event loop stalls).
// A deadline is not judged by a check that ran late: after the event loop stalled (a busy
// machine, a start loading modules), answers may be waiting unread in the socket, so the next
// check, after they were read, judges instead.
// A command that failed (timed out, or its connection dropped) may still have been applied, or
// be applied late (a paused Redis runs what its socket buffer holds once it goes on): callers
// treat a failure as "unknown", never as "not done" (docs/scaling.md, "What happens when
// something fails"); nothing here resends it.
import { ClientClosedError, ClientOfflineError, createClient } from 'redis';
import type { Logger } from '../log.ts';

/** How long a command may wait for its answer: Redis on the same network answers in well under a millisecond. */
export const COMMAND_TIMEOUT_MS = 1_000;
/** How long a connection may go without a byte from Redis (PINGs keep a healthy idle one busy). */
const SOCKET_TIMEOUT_MS = 5_000;
const PING_INTERVAL_MS = 1_000;
/** Reconnection waits grow to this, then stay. */
const MAX_RECONNECT_DELAY_MS = 1_000;
/** How often the deadlines are looked at: a command fails between COMMAND_TIMEOUT_MS and this much later. */
const SWEEP_MS = 100;

export type RedisClient = ReturnType<typeof createClient>;

export interface Redis {
  /** Commands with a deadline; they reject at once while the connection is down. */
  readonly client: RedisClient;
  /** The URL without its password, for messages. */
  readonly shown: string;
  /** Whether the connection is up now. */
  ready(): boolean;
  close(): Promise<void>;
}

export interface RedisOptions {
  readonly url: string;
  readonly log: Logger;
  /** How long start-up waits for a first connection (default 5 s). */
  readonly connectTimeoutMs?: number;
  /** A command's deadline (default COMMAND_TIMEOUT_MS); tests shorten it. */
  readonly commandTimeoutMs?: number;
}

/** Connects; throws (naming the URL without its password) when Redis cannot be reached at start. */
export async function openRedis(options: RedisOptions): Promise<Redis> {
  const shown = redactedUrl(options.url);
  const commandTimeoutMs = options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
  // One line when the connection goes and one when it is back, not one per retry.
  let down = false;
  const wentDown = (why: string) => {
    if (down) return;
    down = true;
    options.log.error('redis is unreachable; writes and limited requests answer 503 until it is back', { redis: shown, error: why });
  };
  const make = (): RedisClient => {
    const made = createClient({
      url: options.url,
      disableOfflineQueue: true,
      pingInterval: PING_INTERVAL_MS,
      socket: {
        connectTimeout: options.connectTimeoutMs ?? 5_000,
        socketTimeout: Math.max(SOCKET_TIMEOUT_MS, commandTimeoutMs),
        // Always a number: node-redis's own strategy stops for good after a socket timeout.
        reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, MAX_RECONNECT_DELAY_MS),
      },
    }) as unknown as RedisClient;
    made.on('error', (error: unknown) => wentDown(errorText(error, options.url)));
    made.on('ready', () => {
      if (!down) return;
      down = false;
      options.log.warn('redis is reachable again', { redis: shown });
    });
    return made;
  };

  let current = make();
  try {
    await current.connect();
  } catch (error) {
    current.destroy();
    throw new Error(`cannot reach Redis at ${shown}: ${errorText(error, options.url)}`);
  }

  // Commands waiting for their answer, oldest first, each with the time it was sent.
  const waiting = new Set<{ readonly at: number; readonly fail: (error: Error) => void }>();
  /** Gives up on the connection: every command on it fails now, and a new one is tried until Redis answers. */
  const hung = () => {
    wentDown(`no answer within ${commandTimeoutMs} ms`);
    const old = current;
    current = make();
    for (const command of waiting) command.fail(new Error(`Redis did not answer within ${commandTimeoutMs} ms`));
    waiting.clear();
    old.destroy();
    current.connect().catch(() => undefined);
  };
  let lastSweep = performance.now();
  let skipped = false;
  const sweep = setInterval(() => {
    const at = performance.now();
    const stalled = at - lastSweep > 2 * SWEEP_MS;
    lastSweep = at;
    // One check skipped per stall: the socket was read before the next one, whatever the load.
    if (stalled && !skipped) {
      skipped = true;
      return;
    }
    skipped = false;
    const oldest = waiting.values().next();
    if (!oldest.done && at - oldest.value.at >= commandTimeoutMs) hung();
  }, SWEEP_MS);
  sweep.unref?.();

  const bounded = <T>(sent: Promise<T>): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const command = { at: performance.now(), fail: reject };
      waiting.add(command);
      sent.then(
        (value) => {
          waiting.delete(command);
          resolve(value);
        },
        (error: unknown) => {
          waiting.delete(command);
          reject(error);
        },
      );
    });

  // The same client object for the life of the instance (modules keep it), each call going to the
  // connection of the moment; a call that returns a promise (a command) gets the deadline.
  const client = new Proxy({} as RedisClient, {
    get(_target, property) {
      const now = current;
      const value = Reflect.get(now, property, now) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const result: unknown = (value as (...a: unknown[]) => unknown).apply(now, args);
        return result instanceof Promise ? bounded(result) : result;
      };
    },
  });

  return {
    client,
    shown,
    ready: () => current.isReady,
    async close() {
      clearInterval(sweep);
      try {
        await current.close();
      } catch {
        current.destroy();
      }
    },
  };
}

/** An error's text with the URL's password, should it appear, taken out. */
function errorText(error: unknown, url: string): string {
  const text = error instanceof Error ? error.message : String(error);
  const password = URL.canParse(url) ? decodeURIComponent(new URL(url).password) : '';
  return password === '' ? text : text.split(password).join('***');
}

/**
 * Whether a failed command was refused before it was written (no connection ready), so it
 * cannot have been applied: any other failure (no answer in time, the connection dropped) may
 * have been, now or late.
 */
export function neverSent(error: unknown): boolean {
  return error instanceof ClientOfflineError || error instanceof ClientClosedError;
}

/** `redis://user:pw@host:6379/0` -> `redis://user:***@host:6379/0`: for logs and messages. */
export function redactedUrl(url: string): string {
  if (!URL.canParse(url)) return '(a URL that cannot be parsed)';
  const parsed = new URL(url);
  if (parsed.password !== '') parsed.password = '***';
  return parsed.toString();
}
