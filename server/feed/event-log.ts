// Where the change feed keeps its events, per connection, for the server-sent events stream
// (server/http/events.ts) and whatever else consumes them (a webhook outbox would: read after
// the last id it delivered, be told of new ones; docs/decisions.md). `append` never waits;
// `after("1718000000000-3")` -> the events since that one, or `reset` when it is no longer kept.
// Two logs: this process's memory (one instance), and a Redis stream per connection (redis-log.ts).
import type { DraftEvent, FeedEvent } from './event.ts';

/** How much of each connection's feed is kept: the last 10,000 events, none older than 24 h. */
export interface Retention {
  readonly maxEvents: number;
  readonly maxAgeMs: number;
}

export const DEFAULT_RETENTION: Retention = { maxEvents: 10_000, maxAgeMs: 24 * 60 * 60 * 1000 };

/** What `after` gives: the events after the id, in order, or `reset` for an id not kept (too old, unknown). */
export type Replay = { readonly events: readonly FeedEvent[] } | { readonly reset: true; readonly latest: string | null };

/** Stops a subscription; the listener hears nothing after. */
export type Unsubscribe = () => void;

export interface EventLog {
  /** Numbers the events and keeps them; never waits, never throws (a log that cannot keep them logs it and drops them). */
  append(connection: string, drafts: readonly DraftEvent[]): void;
  /** The events after `id` (`null`: none, only the latest id is wanted), or reset. */
  after(connection: string, id: string): Promise<Replay>;
  /** The id of the newest event kept, or null. */
  latest(connection: string): Promise<string | null>;
  /**
   * Calls `listener` with each event appended from now on, in id order, from any instance
   * sharing the log. Resolves once no event appended after it resolved can be missed.
   */
  subscribe(connection: string, listener: (event: FeedEvent) => void): Promise<Unsubscribe>;
  close(): Promise<void>;
}

/** `1718000000000-3` -> [1718000000000, 3]; null for anything else. */
export function parseEventId(id: string): readonly [number, number] | null {
  const match = /^(\d{1,16})-(\d{1,16})$/.exec(id);
  if (match === null) return null;
  return [Number(match[1]), Number(match[2])];
}

/**
 * Negative when `a` was appended before `b` (both well-formed ids). Without a regular expression
 * or an array per id: the outbox compares ids for every event it takes and every search.
 */
export function compareEventIds(a: string, b: string): number {
  const i = a.indexOf('-');
  const j = b.indexOf('-');
  return Number(a.slice(0, i)) - Number(b.slice(0, j)) || Number(a.slice(i + 1)) - Number(b.slice(j + 1));
}

interface Ring {
  readonly events: FeedEvent[];
  /** The id of the last event dropped by the retention; null while none was. */
  dropped: string | null;
  lastMs: number;
  lastSeq: number;
  readonly listeners: Set<(event: FeedEvent) => void>;
}

/**
 * One instance's log: a ring per connection in memory, with ids shaped as Redis stream ids
 * (`<ms>-<seq>`, the sequence counting events in the same millisecond, and the clock never
 * going back). A restart forgets it: a client resuming from before one gets `reset`.
 */
export class MemoryEventLog implements EventLog {
  readonly #rings = new Map<string, Ring>();
  readonly #retention: Retention;
  readonly #now: () => number;

  constructor(retention: Retention = DEFAULT_RETENTION, now: () => number = Date.now) {
    this.#retention = retention;
    this.#now = now;
  }

  append(connection: string, drafts: readonly DraftEvent[]): void {
    const ring = this.#ring(connection);
    for (const draft of drafts) {
      const now = this.#now();
      if (now > ring.lastMs) [ring.lastMs, ring.lastSeq] = [now, 0];
      else ring.lastSeq++;
      const event: FeedEvent = { id: `${ring.lastMs}-${ring.lastSeq}`, ...draft };
      ring.events.push(event);
      for (const listener of ring.listeners) listener(event);
    }
    this.#trim(ring);
  }

  after(connection: string, id: string): Promise<Replay> {
    const ring = this.#ring(connection);
    this.#trim(ring);
    const { events } = ring;
    const latest = events.at(-1)?.id ?? ring.dropped;
    // The id just before the oldest kept one, or the newest: the client missed what follows it.
    if (id === ring.dropped && ring.dropped !== null) return Promise.resolve({ events: events.slice() });
    const at = parseEventId(id) === null ? -1 : findIndex(events, id);
    if (at < 0) return Promise.resolve({ reset: true, latest });
    return Promise.resolve({ events: events.slice(at + 1) });
  }

  latest(connection: string): Promise<string | null> {
    const ring = this.#ring(connection);
    return Promise.resolve(ring.events.at(-1)?.id ?? ring.dropped);
  }

  subscribe(connection: string, listener: (event: FeedEvent) => void): Promise<Unsubscribe> {
    const listeners = this.#ring(connection).listeners;
    listeners.add(listener);
    return Promise.resolve(() => void listeners.delete(listener));
  }

  close(): Promise<void> {
    for (const ring of this.#rings.values()) ring.listeners.clear();
    return Promise.resolve();
  }

  #ring(connection: string): Ring {
    let ring = this.#rings.get(connection);
    if (ring === undefined) this.#rings.set(connection, (ring = { events: [], dropped: null, lastMs: 0, lastSeq: 0, listeners: new Set() }));
    return ring;
  }

  /** Drops what the retention no longer keeps: past the count, then past the age. */
  #trim(ring: Ring): void {
    const { events } = ring;
    const oldest = this.#now() - this.#retention.maxAgeMs;
    let drop = Math.max(0, events.length - this.#retention.maxEvents);
    while (drop < events.length && parseEventId(events[drop].id)![0] < oldest) drop++;
    if (drop === 0) return;
    ring.dropped = events[drop - 1].id;
    events.splice(0, drop);
  }
}

/** The position of `id` among events in id order (binary search), or -1. */
function findIndex(events: readonly FeedEvent[], id: string): number {
  let [low, high] = [0, events.length - 1];
  while (low <= high) {
    const middle = (low + high) >> 1;
    const order = compareEventIds(events[middle].id, id);
    if (order === 0) return middle;
    if (order < 0) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}
