// The change feed's log with several instances: a Redis stream per connection
// (`sheetrest:feed:crm`), so every instance numbers and reads the same events. `XADD ... MAXLEN ~
// 10000 * e <event JSON>` gives the id (`<ms>-<seq>`, monotonic per stream); entries older than
// 24 h are trimmed by `XTRIM MINID ~`. Live events come from one dedicated connection per
// instance (`XREAD BLOCK` over the streams someone here listens to), so a write on one instance
// reaches a stream held by another. Redis unreachable: writes are still answered and their
// events are lost (one warning per outage); a resume then meets `reset` if it falls in the gap.
import type { Logger } from '../log.ts';
import type { Redis, RedisClient } from '../redis/client.ts';
import { DEFAULT_RETENTION, parseEventId, type EventLog, type Replay, type Retention, type Unsubscribe } from './event-log.ts';
import type { DraftEvent, FeedEvent } from './event.ts';

const PREFIX = 'sheetrest:feed:';
/** How long one XREAD waits: a stream first listened to joins the next wait (its cursor is fixed before, so nothing is missed). */
const BLOCK_MS = 1_000;
/** How often, at most, the age trim runs per stream (it runs on an append). */
const TRIM_EVERY_MS = 60_000;
/** After a failed XREAD (Redis away), the wait before the next. */
const RETRY_MS = 500;

interface Watched {
  /** The id of the last entry read (the XREAD cursor). */
  cursor: string;
  readonly listeners: Set<(event: FeedEvent) => void>;
}

export class RedisEventLog implements EventLog {
  readonly #redis: Redis;
  readonly #log: Logger;
  readonly #retention: Retention;
  readonly #now: () => number;
  readonly #watched = new Map<string, Watched>();
  readonly #trimmedAt = new Map<string, number>();
  #reader: RedisClient | null = null;
  #reading: Promise<void> | null = null;
  #closed = false;
  /** Whether the last append failed: one warning per outage. */
  #failing = false;

  constructor(redis: Redis, log: Logger, retention: Retention = DEFAULT_RETENTION, now: () => number = Date.now) {
    this.#redis = redis;
    this.#log = log;
    this.#retention = retention;
    this.#now = now;
  }

  append(connection: string, drafts: readonly DraftEvent[]): void {
    const key = PREFIX + connection;
    const client = this.#redis.client;
    for (const draft of drafts) {
      // Sent in the order the writes were acknowledged, on one connection: Redis numbers them in that order.
      client.sendCommand(['XADD', key, 'MAXLEN', '~', String(this.#retention.maxEvents), '*', 'e', JSON.stringify(draft)]).then(
        () => this.#recovered(),
        (error: unknown) => this.#failed(error),
      );
    }
    const now = this.#now();
    if (now - (this.#trimmedAt.get(key) ?? 0) >= TRIM_EVERY_MS) {
      this.#trimmedAt.set(key, now);
      client.sendCommand(['XTRIM', key, 'MINID', '~', `${now - this.#retention.maxAgeMs}-0`]).catch(() => undefined);
    }
  }

  async after(connection: string, id: string): Promise<Replay> {
    const key = PREFIX + connection;
    const parsed = parseEventId(id);
    // Older than the age retention (whether or not trimmed yet), malformed, or no longer (or never) in the stream: reset.
    const kept = parsed !== null && parsed[0] >= this.#now() - this.#retention.maxAgeMs && (await this.#range(key, id, id)).length === 1;
    if (!kept) return { reset: true, latest: await this.latest(connection) };
    return { events: await this.#range(key, `(${id}`, '+') };
  }

  async latest(connection: string): Promise<string | null> {
    const entries = (await this.#redis.client.sendCommand(['XREVRANGE', PREFIX + connection, '+', '-', 'COUNT', '1'])) as RawEntry[];
    return entries.length === 0 ? null : entries[0][0];
  }

  async subscribe(connection: string, listener: (event: FeedEvent) => void): Promise<Unsubscribe> {
    let watched = this.#watched.get(connection);
    if (watched === undefined) {
      // The cursor is fixed before anyone relies on the subscription: events appended after it are read, whenever the loop gets to them.
      const latest = await this.latest(connection).catch(() => null);
      watched = this.#watched.get(connection) ?? { cursor: latest ?? '0-0', listeners: new Set() };
      this.#watched.set(connection, watched);
    }
    const listeners = watched.listeners;
    listeners.add(listener);
    this.#startReading();
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.#watched.get(connection)?.listeners === listeners) this.#watched.delete(connection);
    };
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#watched.clear();
    const reader = this.#reader;
    this.#reader = null;
    // A blocked XREAD holds its connection: destroy, not quit.
    reader?.destroy();
    await this.#reading?.catch(() => undefined);
  }

  async #range(key: string, start: string, end: string): Promise<FeedEvent[]> {
    const entries = (await this.#redis.client.sendCommand(['XRANGE', key, start, end])) as RawEntry[];
    return entries.flatMap((entry) => eventOf(entry) ?? []);
  }

  #startReading(): void {
    if (this.#reading !== null || this.#closed) return;
    this.#reading = this.#read().finally(() => {
      this.#reading = null;
      if (this.#watched.size > 0 && !this.#closed) this.#startReading();
    });
  }

  /** The loop: while anyone here listens, one XREAD over every stream listened to, each from its cursor. */
  async #read(): Promise<void> {
    while (this.#watched.size > 0 && !this.#closed) {
      const reader = await this.#readerClient();
      if (reader === null) return;
      const watched = [...this.#watched];
      let answer: RawStreams | null;
      try {
        const command = ['XREAD', 'COUNT', '1000', 'BLOCK', String(BLOCK_MS), 'STREAMS', ...watched.map(([connection]) => PREFIX + connection), ...watched.map(([, entry]) => entry.cursor)];
        answer = (await reader.sendCommand(command)) as RawStreams | null;
      } catch {
        if (this.#closed) return;
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        continue;
      }
      for (const [key, entries] of streamsOf(answer)) {
        const entry = this.#watched.get(String(key).slice(PREFIX.length));
        if (entry === undefined) continue;
        for (const raw of entries) {
          entry.cursor = raw[0];
          const event = eventOf(raw);
          if (event !== null) for (const listener of entry.listeners) listener(event);
        }
      }
    }
  }

  /** The dedicated connection a blocked XREAD may hold (the shared one answers every command within a second). */
  async #readerClient(): Promise<RedisClient | null> {
    if (this.#reader !== null) return this.#reader;
    try {
      const reader = this.#redis.client.duplicate({ name: 'sheetrest-feed' }) as RedisClient;
      reader.on('error', () => undefined);
      await reader.connect();
      if (this.#closed) {
        reader.destroy();
        return null;
      }
      this.#reader = reader;
      return reader;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      return this.#closed ? null : this.#readerClient();
    }
  }

  #failed(error: unknown): void {
    if (this.#failing) return;
    this.#failing = true;
    this.#log.warn('the change feed cannot reach redis: events of writes answered meanwhile are lost, and clients resuming across the gap get a reset', { error: String(error) });
  }

  #recovered(): void {
    if (!this.#failing) return;
    this.#failing = false;
    this.#log.warn('the change feed reaches redis again');
  }
}

/** `[id, [field, value, ...]]`, as XRANGE and XREAD answer each entry. */
type RawEntry = [string, string[]];
/** XREAD's answer: a list of `[key, entries]` pairs (RESP2), or a map of them (RESP3); null when the wait timed out. */
type RawStreams = [string, RawEntry[]][] | Map<string, RawEntry[]> | Record<string, RawEntry[]>;

function streamsOf(answer: RawStreams | null): Iterable<[string, RawEntry[]]> {
  if (answer === null) return [];
  if (Array.isArray(answer)) return answer;
  if (answer instanceof Map) return answer.entries();
  return Object.entries(answer);
}

function eventOf([id, fields]: RawEntry): FeedEvent | null {
  const at = fields.indexOf('e');
  if (at < 0 || at + 1 >= fields.length) return null;
  try {
    return { id, ...(JSON.parse(fields[at + 1]) as DraftEvent) };
  } catch {
    return null;
  }
}
