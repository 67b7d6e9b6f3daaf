// Shared state for several instances behind a load balancer (docs/scaling.md), opened by
// start.ts when the config has `"store": {"type": "redis", "url": "redis://127.0.0.1:6379/0"}`:
// one Redis connection (redis/client.ts), and built on it the shared quota and rate limits, the admin API's
// state, the change feed's streams, and Google's coordination (sources/google/coordination.ts: the per-minute request
// budget, and per spreadsheet its version, kept in memory and told of changes through a
// subscription of its own, and its write lease). Part of the composition root: redis/ hands out
// the client and knows none of the features built on it.
import type { StoreConfig } from './config/config.ts';
import type { Logger } from './log.ts';
import type { QuotaStore } from './quota/quota.ts';
import { openRedisQuota } from './quota/redis-store.ts';
import type { RateLimiter } from './rate-limit/rate-limit.ts';
import { openRedisLimiter } from './rate-limit/redis-limiter.ts';
import { openRedis, type Redis } from './redis/client.ts';
import type { EventLog } from './feed/event-log.ts';
import { RedisEventLog } from './feed/redis-log.ts';
import type { LeaseSettings } from './redis/lease.ts';
import { sharedAdminState, type SharedAdminState } from './admin/redis-state.ts';
import { openGoogleCoordination, type GoogleCoordination, type SharedBudget, type SharedVersions, type SpreadsheetCoordination } from './sources/google/mod.ts';

export interface SharedStore {
  readonly redis: Redis;
  readonly quota: QuotaStore;
  /** Plans' rate limits, counted once for every instance. */
  readonly rateLimiter: RateLimiter;
  /** Google's per-minute request budget, for every instance signed in with the same credentials. */
  readonly budget: SharedBudget;
  /** The store's lease settings, for spreadsheets' and Idempotency-Keys' leases. */
  readonly lease: LeaseSettings;
  /** The admin API's connections and keys, in place of admin.json. */
  readonly admin: SharedAdminState;
  /** Every spreadsheet's version as this instance keeps it. */
  readonly versions: SharedVersions;
  /** The change feed's events, a Redis stream per connection (closed by the feed that uses it). */
  readonly events: EventLog;
  /** The version and lease of one spreadsheet, by its lock key (root URL and id). */
  spreadsheet(key: string, log: (message: string) => void): SpreadsheetCoordination;
  close(): Promise<void>;
}

export interface SharedStoreOptions {
  /** The clock the versions' trust runs on (sources/google/shared-versions.ts); tests pass one that stands still. */
  readonly now?: () => number;
}

export async function openSharedStore(config: StoreConfig, log: Logger, options: SharedStoreOptions = {}): Promise<SharedStore> {
  const redis = await openRedis({ url: config.url.reveal(), log });
  let google: GoogleCoordination | undefined;
  try {
    const quota = await openRedisQuota({ redis, log });
    const rateLimiter = await openRedisLimiter({ redis, log });
    const lease = { leaseMs: config.leaseMs, leaseWaitMs: config.leaseWaitMs };
    google = await openGoogleCoordination({ redis, lease, log, ...(options.now === undefined ? {} : { now: options.now }) });
    const kept = google;
    log.info('sharing quota, cache invalidation and write leases through redis', { redis: redis.shown });
    const admin = sharedAdminState(redis, lease, log, { maxStaleMs: config.maxStaleMs });
    return {
      redis,
      admin,
      quota,
      rateLimiter,
      budget: kept.budget,
      lease,
      versions: kept.versions,
      events: new RedisEventLog(redis, log),
      spreadsheet: (key, note) => kept.spreadsheet(key, note),
      async close() {
        await admin.close();
        await kept.close();
        await redis.close();
      },
    };
  } catch (error) {
    await google?.close();
    await redis.close();
    throw error;
  }
}
