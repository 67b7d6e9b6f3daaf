// Shared state for several instances behind a load balancer (docs/scaling.md), opened by
// start.ts when the config has `"store": {"type": "redis", "url": "redis://127.0.0.1:6379/0"}`:
// one Redis connection, the shared quota, Google's per-minute request budget, the admin API's
// state, and per Google spreadsheet its version (kept in memory, told of changes through a
// subscription of its own: sources/google/shared-versions.ts) and write lease.
import type { StoreConfig } from '../config/config.ts';
import type { Logger } from '../log.ts';
import type { QuotaStore } from '../quota/quota.ts';
import type { SharedBudget } from '../sources/google/budget.ts';
import { redisBudget } from '../sources/google/budget-redis.ts';
import { openRedisQuota } from '../quota/redis-store.ts';
import { openRedis, type Redis } from './client.ts';
import type { LeaseSettings } from './lease.ts';
import { sharedAdminState, type SharedAdminState } from '../admin/redis-state.ts';
import { spreadsheetCoordination, type SpreadsheetCoordination } from '../sources/google/shared-spreadsheet.ts';
import { openSharedVersions, type SharedVersions } from '../sources/google/shared-versions.ts';

export interface SharedStore {
  readonly redis: Redis;
  readonly quota: QuotaStore;
  /** Google's per-minute request budget, for every instance signed in with the same credentials. */
  readonly budget: SharedBudget;
  /** The store's lease settings, for spreadsheets' and Idempotency-Keys' leases. */
  readonly lease: LeaseSettings;
  /** The admin API's connections and keys, in place of admin.json. */
  readonly admin: SharedAdminState;
  /** Every spreadsheet's version as this instance keeps it. */
  readonly versions: SharedVersions;
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
  let versions: SharedVersions | undefined;
  try {
    const quota = await openRedisQuota({ redis, log });
    versions = await openSharedVersions({ redis, log, ...(options.now === undefined ? {} : { now: options.now }) });
    const kept = versions;
    log.info('sharing quota, cache invalidation and write leases through redis', { redis: redis.shown });
    const lease = { leaseMs: config.leaseMs, leaseWaitMs: config.leaseWaitMs };
    const admin = sharedAdminState(redis, lease, log, { maxStaleMs: config.maxStaleMs });
    return {
      redis,
      admin,
      quota,
      budget: redisBudget({ redis, log: (message) => log.warn(message) }),
      lease,
      versions: kept,
      spreadsheet: (key, note) => spreadsheetCoordination(redis, key, config, note, kept),
      async close() {
        await admin.close();
        await kept.close();
        await redis.close();
      },
    };
  } catch (error) {
    await versions?.close();
    await redis.close();
    throw error;
  }
}
