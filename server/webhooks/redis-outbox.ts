// A connection's webhook outbox with several instances (a Redis `store`): every instance
// appends its writes' events to one stream, `sheetrest:webhooks:crm` (`XADD * e <draft>`,
// awaited before the write is answered; Redis numbers them `<ms>-<seq>` in the order they
// arrive), and one instance at a time delivers them: the holder of the lease
// `sheetrest:webhooks:crm:lease` (server/redis/lease.ts). The cursors, one per webhook, are a
// hash (`sheetrest:webhooks:crm:cursors`), only ever moved forward, so a holder that lost its
// lease mid-way never takes a cursor back. A new holder reads them and goes on where the last
// left off: at least once, first deliveries in the stream's order. Delivered events are
// trimmed from the stream (`XTRIM MINID` at the slowest cursor) now and then.
// How durable an acknowledged write's events are is Redis's: with `appendonly yes` and
// `appendfsync always` they survive a crash of Redis too (docs/change-feed.md).
import { apiError } from '../../lib/errors.ts';
import type { DraftEvent, FeedEvent } from '../feed/event.ts';
import type { Logger } from '../log.ts';
import type { Redis } from '../redis/client.ts';
import { underLease, type LeaseSettings } from '../redis/lease.ts';
import type { WebhookQueue } from './outbox.ts';

const PREFIX = 'sheetrest:webhooks:';
/** How often a holder looks for events another instance appended, when it has none. */
const POLL_MS = 50;
/** How often an instance not holding the lease tries for it, at most. */
const RETRY_MS = 250;
/** Advances between trims of the stream. */
const TRIM_EVERY = 200;

// KEYS: cursors. ARGV: webhook, id. Moves the cursor forward only.
const ADVANCE = `
local old = redis.call('HGET', KEYS[1], ARGV[1])
if old then
  local oms, oseq = string.match(old, '^(%d+)-(%d+)$')
  local nms, nseq = string.match(ARGV[2], '^(%d+)-(%d+)$')
  oms, oseq, nms, nseq = tonumber(oms), tonumber(oseq), tonumber(nms), tonumber(nseq)
  if oms > nms or (oms == nms and oseq >= nseq) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

export class RedisOutbox implements WebhookQueue {
  readonly connection: string;
  readonly #redis: Redis;
  readonly #lease: LeaseSettings;
  readonly #log: Logger;
  readonly #stream: string;
  readonly #cursorsKey: string;
  readonly #stop = new AbortController();
  /** While this instance holds the lease: the check that it still does. */
  #fence: (() => Promise<void>) | null = null;
  /** Cursors read since the lease was taken (only the holder moves them). */
  readonly #cursors = new Map<string, string>();
  readonly #wakers = new Set<() => void>();
  #advances = 0;
  #leading: Promise<void> = Promise.resolve();

  private constructor(redis: Redis, connection: string, lease: LeaseSettings, log: Logger) {
    this.#redis = redis;
    this.connection = connection;
    this.#lease = lease;
    this.#log = log;
    this.#stream = PREFIX + connection;
    this.#cursorsKey = `${this.#stream}:cursors`;
  }

  static async open(redis: Redis, connection: string, webhooks: readonly string[], lease: LeaseSettings, log: Logger): Promise<RedisOutbox> {
    const outbox = new RedisOutbox(redis, connection, lease, log);
    for (const name of webhooks) await outbox.addWebhook(name);
    outbox.#leading = outbox.#lead();
    return outbox;
  }

  async record(drafts: readonly DraftEvent[]): Promise<void> {
    const { client } = this.#redis;
    // One connection, sent in order: Redis numbers them in the order the writes were acknowledged here.
    await Promise.all(drafts.map((draft) => client.sendCommand(['XADD', this.#stream, '*', 'e', JSON.stringify(draft)])));
    // The deliveries start in a later turn: the write these events belong to is answered first.
    setImmediate(() => this.#wake());
  }

  async eventsFor(webhook: string, after: string | null, max: number, signal?: AbortSignal): Promise<readonly FeedEvent[]> {
    if (this.#fence === null) {
      if (signal !== undefined) await this.#wait(RETRY_MS, signal);
      return [];
    }
    try {
      let cursor = after ?? this.#cursors.get(webhook);
      if (cursor === undefined) {
        cursor = ((await this.#redis.client.hGet(this.#cursorsKey, webhook)) as string | null | undefined) ?? '0-0';
        this.#cursors.set(webhook, cursor);
      }
      // One read for a batch of events, not one per delivery.
      const reply = await this.#redis.client.sendCommand(['XREAD', 'COUNT', String(max), 'STREAMS', this.#stream, cursor]);
      const events = entriesOf(reply, this.#stream).map(([id, fields]) => ({ id, ...(JSON.parse(fields[fields.indexOf('e') + 1]) as DraftEvent) }));
      if (events.length > 0 || signal === undefined) return events;
    } catch (error) {
      this.#log.warn('could not read a webhook outbox in Redis; trying again', { connection: this.connection, error: String(error) });
      if (signal !== undefined) await this.#wait(RETRY_MS, signal);
      return [];
    }
    await this.#wait(POLL_MS, signal);
    return [];
  }

  async stillDelivering(): Promise<boolean> {
    const fence = this.#fence;
    if (fence === null) return false;
    try {
      await fence();
      return true;
    } catch {
      return false;
    }
  }

  async advance(webhook: string, id: string): Promise<void> {
    this.#cursors.set(webhook, id);
    const { client } = this.#redis;
    await client.eval(ADVANCE, { keys: [this.#cursorsKey], arguments: [webhook, id] });
    if (++this.#advances % TRIM_EVERY === 0) await this.#trim();
  }

  /** A webhook new here starts after the stream's last event; one Redis knows keeps its cursor (HSETNX). */
  async addWebhook(webhook: string): Promise<void> {
    const { client } = this.#redis;
    const last = (await client.sendCommand(['XREVRANGE', this.#stream, '+', '-', 'COUNT', '1'])) as [string, string[]][];
    await client.hSetNX(this.#cursorsKey, webhook, last[0]?.[0] ?? '0-0');
    this.#cursors.delete(webhook);
  }

  async dropWebhook(webhook: string): Promise<void> {
    await this.#redis.client.hDel(this.#cursorsKey, webhook);
    this.#cursors.delete(webhook);
  }

  async close(): Promise<void> {
    this.#stop.abort();
    this.#wake();
    await this.#leading;
  }

  /** Tries for the lease until closed; while held, `#fence` is set and the webhooks' loops deliver. */
  async #lead(): Promise<void> {
    const signal = this.#stop.signal;
    const keys = { lease: `${this.#stream}:lease`, fence: `${this.#stream}:fence` };
    while (!signal.aborted) {
      try {
        // One try (no wait): an instance not holding it sleeps rather than polling Redis every few ms.
        await underLease(this.#redis, keys, { ...this.#lease, leaseWaitMs: 0 }, async (fence) => {
          this.#cursors.clear();
          this.#fence = fence;
          this.#wake();
          try {
            while (!signal.aborted) {
              await this.#wait(Math.max(10, Math.floor(this.#lease.leaseMs / 3)), signal, false);
              await fence();
            }
          } finally {
            this.#fence = null;
          }
        }, () => apiError('upstream_unavailable', 'another instance delivers'), 'Webhook deliveries are paused');
      } catch {
        // Held by another, lost, or Redis away: try again shortly.
      }
      if (!signal.aborted) await this.#wait(RETRY_MS * (0.5 + Math.random()), signal, false);
    }
  }

  async #trim(): Promise<void> {
    const { client } = this.#redis;
    const cursors = Object.values((await client.hGetAll(this.#cursorsKey)) as Record<string, string>);
    if (cursors.length === 0) return;
    const slowest = cursors.reduce((a, b) => (compare(a, b) <= 0 ? a : b));
    const [ms, seq] = slowest.split('-').map(Number);
    // MINID keeps ids >= its argument: the slowest cursor's event is done, so from the one after it.
    await client.sendCommand(['XTRIM', this.#stream, 'MINID', `${ms}-${seq + 1}`]);
  }

  /** Sleeps `ms`, or less when an event is recorded here (`wakeable`) or on `signal`. */
  #wait(ms: number, signal: AbortSignal, wakeable = true): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wakers.delete(done);
        signal.removeEventListener('abort', done);
        this.#stop.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      if (wakeable) this.#wakers.add(done);
      signal.addEventListener('abort', done);
      this.#stop.signal.addEventListener('abort', done);
    });
  }

  #wake(): void {
    for (const wake of [...this.#wakers]) wake();
  }
}

function compare(a: string, b: string): number {
  const [x, y] = [a.split('-').map(Number), b.split('-').map(Number)];
  return x[0] - y[0] || x[1] - y[1];
}

type Entry = [string, string[]];

/** XREAD's entries, whether the client hands streams back as `[[name, entries]]` or `{name: entries}`. */
function entriesOf(reply: unknown, stream: string): readonly Entry[] {
  if (reply === null || reply === undefined) return [];
  if (Array.isArray(reply)) return (reply as [string, Entry[]][])[0]?.[1] ?? [];
  if (reply instanceof Map) return (reply.get(stream) as Entry[] | undefined) ?? [];
  return (reply as Record<string, Entry[]>)[stream] ?? [];
}
