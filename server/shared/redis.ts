// The one Redis connection an instance keeps when `"store": {"type": "redis", ...}` is set
// (docs/scaling.md): `openRedis({ url: "redis://127.0.0.1:6379/0" })` -> commands with a
// deadline, and whether Redis is reachable right now. Commands are never queued while the
// connection is down (node-redis would hold them until it is back): a request must learn at
// once that Redis is away, to answer 503 or serve from cache, not hang.
import { createClient } from 'redis';
import { redactedUrl } from '../config.ts';
import type { Logger } from '../log.ts';

/** One command's deadline: Redis on the same network answers in well under a millisecond. */
const COMMAND_TIMEOUT_MS = 1_000;
/** Reconnection waits grow to this, then stay. */
const MAX_RECONNECT_DELAY_MS = 1_000;

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
}

/** Connects; throws (naming the URL without its password) when Redis cannot be reached at start. */
export async function openRedis(options: RedisOptions): Promise<Redis> {
  const shown = redactedUrl(options.url);
  const client = createClient({
    url: options.url,
    disableOfflineQueue: true,
    socket: { connectTimeout: options.connectTimeoutMs ?? 5_000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, MAX_RECONNECT_DELAY_MS) },
  });
  // One line when the connection goes and one when it is back, not one per retry.
  let down = false;
  client.on('error', (error: unknown) => {
    if (down) return;
    down = true;
    options.log.error('redis is unreachable; writes and limited requests answer 503 until it is back', { redis: shown, error: errorText(error, options.url) });
  });
  client.on('ready', () => {
    if (!down) return;
    down = false;
    options.log.warn('redis is reachable again', { redis: shown });
  });
  try {
    await client.connect();
  } catch (error) {
    await client.destroy();
    throw new Error(`cannot reach Redis at ${shown}: ${errorText(error, options.url)}`);
  }
  return {
    client: client.withCommandOptions({ timeout: COMMAND_TIMEOUT_MS }) as unknown as RedisClient,
    shown,
    ready: () => client.isReady,
    async close() {
      try {
        await client.close();
      } catch {
        client.destroy();
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
