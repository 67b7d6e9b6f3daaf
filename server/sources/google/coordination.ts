// What several instances behind a load balancer share about Google (docs/scaling.md), built on
// the Redis client the shared store hands over: `POST /sheets/crm` on instance A bumps the
// spreadsheet's version (shared-versions.ts) under its write lease (shared-spreadsheet.ts), and
// every instance signed in with the same credentials takes its per-minute requests from one
// budget (budget-redis.ts). server/shared-store.ts opens it beside the shared quota and admin state.
import type { Logger } from '../../log.ts';
import type { Redis } from '../../redis/client.ts';
import type { LeaseSettings } from '../../redis/lease.ts';
import type { SharedBudget } from './budget.ts';
import { redisBudget } from './budget-redis.ts';
import { spreadsheetCoordination, type SpreadsheetCoordination } from './shared-spreadsheet.ts';
import { openSharedVersions, type SharedVersions } from './shared-versions.ts';

export interface GoogleCoordination {
  /** Google's per-minute request budget, for every instance signed in with the same credentials. */
  readonly budget: SharedBudget;
  /** Every spreadsheet's version as this instance keeps it. */
  readonly versions: SharedVersions;
  /** The version and lease of one spreadsheet, by its lock key (root URL and id). */
  spreadsheet(key: string, log: (message: string) => void): SpreadsheetCoordination;
  close(): Promise<void>;
}

export interface GoogleCoordinationOptions {
  readonly redis: Redis;
  readonly lease: LeaseSettings;
  readonly log: Logger;
  /** The clock the versions' trust runs on (shared-versions.ts); tests pass one that stands still. */
  readonly now?: () => number;
}

/** Subscribes to version changes (resolving once registered); the budget and leases need no setup. */
export async function openGoogleCoordination(options: GoogleCoordinationOptions): Promise<GoogleCoordination> {
  const { redis, lease, log } = options;
  const versions = await openSharedVersions({ redis, log, ...(options.now === undefined ? {} : { now: options.now }) });
  return {
    budget: redisBudget({ redis, log: (message) => log.warn(message) }),
    versions,
    spreadsheet: (key, note) => spreadsheetCoordination(redis, key, lease, note, versions),
    close: () => versions.close(),
  };
}
