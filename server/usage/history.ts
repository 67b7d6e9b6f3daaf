// The usage history: per connection and day (UTC), its requests, 4xx and 5xx, per key and per
// operation, kept KEEP_DAYS days; and its last RECENT_REQUESTS requests. The app calls `record`
// once per request to a connection (stage 9 of server/http/app.ts, beside the log line); the
// admin API reads `history` and `recent` (`GET /_admin/connections/crm/usage/history?days=30`,
// `.../requests`). Two stores: the state folder's (file-store.ts) and, with several instances,
// Redis's (redis-store.ts), whose day counts are summed across the instances.
//
// What counts: every request that named an existing connection and got past CORS, whatever its
// answer (401, 403, 402, 429 and 5xx included: they are what the admin wants to see); not a
// preflight, not a request to an unknown connection (404 before any connection is known). So the
// history counts more than the quota, which counts only requests the plan allowed.
import type { Authenticated } from '../auth.ts';
import type { DayUsage, RecentRequest } from './tally.ts';

export interface UsageRecorder {
  /**
   * One answered request; `access` null when it was refused before a key matched; `at` when it
   * was answered (ms since the epoch; the store's own clock when left out). No I/O, nothing made
   * but a day's or a connection's first counters.
   */
  record(connectionId: string, method: string, url: string, status: number, ms: number, access: Authenticated | null, at?: number): void;
}

export interface UsageHistory extends UsageRecorder {
  /** The `days` days ending today (UTC), oldest first; days without requests are zeros. */
  history(connectionId: string, days: number): Promise<DayUsage[]>;
  /** The connection's recent requests as this instance answered them, newest first. */
  recent(connectionId: string): RecentRequest[];
  /** Saves pending counts now. */
  flush(): Promise<void>;
  /** Saves pending counts without yielding (a forced exit); a no-op where that cannot be done (Redis). */
  flushSync(): void;
  close(): Promise<void>;
}
