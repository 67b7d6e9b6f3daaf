// The usage history shared by every instance, in Redis: one hash per day and connection,
// `sheetrest:usage:2026-11-23:crm` -> requests 1204, clientErrors 3, serverErrors 0,
// `op:search:requests` 20, `key:<id>:requests` 900, `label:<id>` {"id":…,"prefix":…,"name":…}.
// Each instance counts in memory (tally.ts) and adds its counts with HINCRBY once a second, so
// the hashes hold the sum of every instance's requests; a hash expires KEEP_DAYS days after its
// day ends. An instance killed (kill -9) loses its last second's counts; Redis away: the counts
// wait in memory and are added once it is back.
//
// Keys per day: each instance sends at most MAX_KEYS_PER_DAY keys per connection and day (the
// rest as `other`), so a hash holds at most that many per instance. Recent requests stay in each
// instance's memory (server/usage/tally.ts RecentRequests): the admin API answers the ones the
// instance it reached served (docs/admin-api.md).
import type { Authenticated } from '../auth.ts';
import type { Logger } from '../log.ts';
import { spanClock } from '../quota/period.ts';
import type { Redis } from '../redis/client.ts';
import type { UsageHistory } from './history.ts';
import { DAY_MS, DayTally, keyLabelOf, keyNumberOf, KEEP_DAYS, lastDays, MAX_KEYS_PER_DAY, operationCodeOf, OTHER_KEYS, RecentRequests, zeroCounts, type Counts, type DayUsage, type KeyCounts } from './tally.ts';

const FLUSH_MS = 1000;
const COUNT_FIELDS = ['requests', 'clientErrors', 'serverErrors'] as const;

export interface RedisUsageOptions {
  readonly redis: Redis;
  readonly log: Logger;
  readonly now?: () => number;
  /** Key prefix, for tests sharing one Redis. */
  readonly prefix?: string;
  readonly flushMs?: number;
}

export function openRedisUsage(options: RedisUsageOptions): UsageHistory {
  const { redis, log } = options;
  const now = options.now ?? Date.now;
  const prefix = options.prefix ?? 'sheetrest:usage:';
  const flushMs = options.flushMs ?? FLUSH_MS;
  const dayOf = spanClock('day');
  const recent = new RecentRequests();
  /** Counts not yet in Redis, by day. */
  let pending = new Map<string, DayTally>();
  /** Keys this instance has sent today (`sentDay`) per connection, by their numbers, for the cap. */
  let sentDay = '';
  let sentKeys = new Map<string, Set<number>>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let flushing: Promise<void> = Promise.resolve();
  let warned = false;

  const hashOf = (day: string, connectionId: string): string => `${prefix}${day}:${connectionId}`;

  const schedule = (): void => {
    if (timer !== undefined) return;
    timer = setTimeout(() => void flush(), flushMs);
    timer.unref?.();
  };

  const flushOnce = async (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = new Map();
    const sends: Promise<unknown>[] = [];
    for (const [day, tally] of batch) {
      const expiresAt = Math.ceil((Date.parse(`${day}T00:00:00Z`) + (KEEP_DAYS + 1) * DAY_MS) / 1000);
      for (const connectionId of tally.connections.keys()) {
        const hash = hashOf(day, connectionId);
        const usage = tally.view(connectionId);
        for (const field of COUNT_FIELDS) if (usage[field] > 0) sends.push(redis.client.hIncrBy(hash, field, usage[field]));
        for (const [operation, counts] of Object.entries(usage.operations)) {
          for (const field of COUNT_FIELDS) if (counts[field] > 0) sends.push(redis.client.hIncrBy(hash, `op:${operation}:${field}`, counts[field]));
        }
        for (const key of usage.keys) {
          for (const field of COUNT_FIELDS) if (key[field] > 0) sends.push(redis.client.hIncrBy(hash, `key:${key.key}:${field}`, key[field]));
          sends.push(redis.client.hSet(hash, `label:${key.key}`, JSON.stringify({ id: key.id, prefix: key.prefix, name: key.name })));
        }
        sends.push(redis.client.expireAt(hash, expiresAt));
      }
    }
    const results = await Promise.allSettled(sends);
    if (results.some((result) => result.status === 'rejected')) {
      // HINCRBY is not idempotent: a batch partly sent may be partly counted again. Redis away
      // usually fails all of it; a rare over-count beats losing the counts.
      for (const [day, tally] of batch) {
        for (const connectionId of tally.connections.keys()) pendingOf(day).add(connectionId, tally.view(connectionId));
      }
      if (!warned) log.warn('redis is unreachable: the usage history waits in memory until it is back', { redis: redis.shown });
      warned = true;
      schedule();
    } else warned = false;
  };
  const flush = (): Promise<void> => (flushing = flushing.then(flushOnce, flushOnce));

  const pendingOf = (day: string): DayTally => {
    let tally = pending.get(day);
    if (tally === undefined) pending.set(day, (tally = new DayTally(day)));
    return tally;
  };

  return {
    record(connectionId: string, method: string, url: string, status: number, ms: number, access: Authenticated | null, at = now()): void {
      const day = dayOf(at).key;
      if (day !== sentDay) {
        // A new day: yesterday's sets are no longer needed.
        sentDay = day;
        sentKeys = new Map();
      }
      let key = keyLabelOf(access);
      let sent = sentKeys.get(connectionId);
      if (sent === undefined) sentKeys.set(connectionId, (sent = new Set()));
      const number = key.number ?? keyNumberOf(key.key);
      if (!sent.has(number)) {
        if (sent.size >= MAX_KEYS_PER_DAY) key = OTHER_KEYS;
        else sent.add(number);
      }
      pendingOf(day).count(connectionId, operationCodeOf(method, url), key, status);
      recent.add(connectionId, at, method, url, status, ms, key);
      if (timer === undefined) schedule();
    },
    async history(connectionId: string, count: number): Promise<DayUsage[]> {
      const days = lastDays(dayOf(now()).key, count);
      const hashes = await Promise.all(days.map((day) => redis.client.hGetAll(hashOf(day, connectionId))));
      return days.map((day, index) => {
        const tally = new DayTally(day);
        tally.add(connectionId, dayFromHash(hashes[index] as Record<string, string>));
        // This instance's counts of the last second, not in Redis yet.
        const waiting = pending.get(day);
        if (waiting?.connections.has(connectionId)) tally.add(connectionId, waiting.view(connectionId));
        return tally.view(connectionId);
      });
    },
    recent: (connectionId) => recent.list(connectionId),
    flush,
    // Redis cannot be written to without yielding: a forced exit loses the last second's counts.
    flushSync: () => undefined,
    close: () => flush(),
  };
}

/** A day's hash (`requests`, `op:read:requests`, `key:<id>:requests`, `label:<id>`...) as counts. */
function dayFromHash(hash: Record<string, string>): Omit<DayUsage, 'day'> {
  const totals = zeroCounts();
  const operations: Record<string, Counts> = {};
  const keys = new Map<string, KeyCounts>();
  for (const [field, value] of Object.entries(hash)) {
    if (field.startsWith('label:')) continue;
    const parts = field.split(':');
    const name = parts.at(-1) as (typeof COUNT_FIELDS)[number];
    if (!COUNT_FIELDS.includes(name)) continue;
    const amount = Number(value) || 0;
    if (parts.length === 1) totals[name] += amount;
    else if (parts[0] === 'op') (operations[parts[1]] ??= zeroCounts())[name] += amount;
    else if (parts[0] === 'key') {
      const ident = parts.slice(1, -1).join(':');
      let counts = keys.get(ident);
      if (counts === undefined) keys.set(ident, (counts = { ...labelOf(ident, hash[`label:${ident}`]), ...zeroCounts() }));
      counts[name] += amount;
    }
  }
  return { ...totals, operations, keys: [...keys.values()] };
}

function labelOf(key: string, saved: string | undefined): { key: string; id: string | null; prefix: string | null; name: string | null } {
  try {
    const label = JSON.parse(saved ?? '{}') as Record<string, unknown>;
    const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
    return { key, id: text(label.id), prefix: text(label.prefix), name: text(label.name) };
  } catch {
    return { key, id: null, prefix: null, name: null };
  }
}
