// Monthly allowances shared by every instance through Redis: with three instances behind a load
// balancer and a plan of 150 requests a month, exactly 150 are served across them. One Lua
// script per request of a limited connection checks the limit and counts in one atomic step
// (two instances can never both take the last request), on a key per connection and month that
// expires when the month ends: `sheetrest:quota:2026-11:crm` -> 149. The rules and headers are quota.ts's (decideQuota).
//
// A connection without a monthly limit has nothing for Redis to decide: its requests are
// served at once, counted in memory and added to Redis's count with one INCRBY per connection
// every FLUSH_MS (so a limit set mid-month still applies to the month's real use, less at most
// the last second's requests of an instance that crashed). A cached read of such a connection
// makes no Redis round trip.
//
// Redis away: quota fails closed for limited connections (503 with Retry-After: serving them
// would let every instance hand out the allowance again) and open for connections without a
// monthly limit (nothing to protect; their counts wait in memory until Redis is back).
import { apiError } from '../../lib/errors.ts';
import type { Operation, PlanConfig } from '../config/schema.ts';
import type { Logger } from '../log.ts';
import { decideQuota, monthKey, nextMonthStart, type QuotaDecision, type QuotaStore } from './quota.ts';
import type { Redis } from '../redis/client.ts';
import { redisUnavailable } from '../redis/unavailable.ts';

// KEYS[1]: the month's count; ARGV[1]: the limit (-1: none); ARGV[2]: the month's end, Unix seconds.
// Returns the count before this request, negated when the request is refused (so 0 is "allowed,
// first"): one reply carries both the decision and the number the headers need.
const TAKE_SCRIPT = `
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local limit = tonumber(ARGV[1])
if limit >= 0 and used >= limit then return -used - 1 end
if redis.call('INCR', KEYS[1]) == 1 then redis.call('EXPIREAT', KEYS[1], ARGV[2]) end
return used
`;

/** How long counts of connections without a limit stay in memory before they are added in Redis. */
export const FLUSH_MS = 1_000;

export interface RedisQuotaOptions {
  readonly redis: Redis;
  readonly log: Logger;
  readonly now?: () => Date;
  /** Key prefix, for tests sharing one Redis. */
  readonly prefix?: string;
  /** How long unlimited connections' counts wait in memory (default FLUSH_MS); tests make it long and flush themselves. */
  readonly flushMs?: number;
}

export async function openRedisQuota(options: RedisQuotaOptions): Promise<QuotaStore> {
  const { redis, log } = options;
  const now = options.now ?? (() => new Date());
  const prefix = options.prefix ?? 'sheetrest:quota:';
  let sha = await redis.client.scriptLoad(TAKE_SCRIPT);
  // What this instance last heard of each count, for the admin API's usage view (`used`).
  const lastSeen = new Map<string, { month: string; used: number }>();
  let warnedUncounted = false;
  const flushMs = options.flushMs ?? FLUSH_MS;
  /** Counts of connections without a limit not yet in Redis: month -> connection -> requests. */
  let pending = new Map<string, Map<string, number>>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let flushing: Promise<void> = Promise.resolve();
  // The month of a moment, from the current month's bounds: most requests compare two numbers.
  let [monthFrom, monthTo, currentMonth] = [Number.NaN, Number.NaN, ''];
  const monthOf = (at: Date): string => {
    const ms = at.getTime();
    if (ms >= monthFrom && ms < monthTo) return currentMonth;
    currentMonth = monthKey(at);
    monthFrom = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1);
    monthTo = nextMonthStart(at) * 1000;
    return currentMonth;
  };

  const flushOnce = async (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = new Map();
    const sends: Promise<void>[] = [];
    for (const [month, counts] of batch) {
      // A month's key expires when the month ends, as the limited connections' script sets it.
      const expiresAt = Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)), 1) / 1000;
      for (const [connectionId, count] of counts) {
        const key = `${prefix}${month}:${connectionId}`;
        sends.push(Promise.all([redis.client.incrBy(key, count), redis.client.expireAt(key, expiresAt)]).then(([total]) => {
          lastSeen.set(connectionId, { month, used: Number(total) });
        }, (error: unknown) => {
          // Kept for the next flush: Redis is away, and the counts are the clients' real use.
          add(month, connectionId, count);
          throw error;
        }));
      }
    }
    const results = await Promise.allSettled(sends);
    if (results.some((result) => result.status === 'rejected')) {
      if (!warnedUncounted) log.warn('redis is unreachable: requests of connections without a monthly limit are counted here until it is back', { redis: redis.shown });
      warnedUncounted = true;
    } else if (batch.size > 0) {
      warnedUncounted = false;
    }
  };
  const flush = (): Promise<void> => (flushing = flushing.then(flushOnce, flushOnce));

  const add = (month: string, connectionId: string, count: number) => {
    let counts = pending.get(month);
    if (counts === undefined) pending.set(month, (counts = new Map()));
    counts.set(connectionId, (counts.get(connectionId) ?? 0) + count);
    if (timer === undefined) {
      timer = setTimeout(() => void flush(), flushMs);
      timer.unref?.();
    }
  };

  const run = async (key: string, limit: number, expiresAt: number): Promise<number> => {
    const call = () => redis.client.evalSha(sha, { keys: [key], arguments: [String(limit), String(expiresAt)] });
    try {
      return Number(await call());
    } catch (error) {
      // A restarted Redis has forgotten the script.
      if (!String(error).includes('NOSCRIPT')) throw error;
      sha = await redis.client.scriptLoad(TAKE_SCRIPT);
      return Number(await call());
    }
  };

  const takeLimited = async (connectionId: string, plan: PlanConfig, operation: Operation, at: Date, limit: number): Promise<QuotaDecision> => {
    const month = monthOf(at);
    let reply: number;
    try {
      reply = await run(`${prefix}${month}:${connectionId}`, limit, nextMonthStart(at));
    } catch {
      const refusal = redisUnavailable('Requests on this connection are counted against a monthly plan');
      return { allowed: false, headers: {}, error: refusal };
    }
    const used = reply < 0 ? -reply - 1 : reply;
    lastSeen.set(connectionId, { month, used: reply < 0 ? used : used + 1 });
    const decision = decideQuota(plan, operation, used, at.getTime());
    // Redis decided; the rules agree with it unless the limit changed between the two looks.
    if (reply < 0 && decision.allowed) return { allowed: false, headers: decision.headers, error: apiError('throttle', 'The monthly request quota is used up.') };
    return decision;
  };

  return {
    take(connectionId: string, plan: PlanConfig | undefined, operation: Operation): QuotaDecision | Promise<QuotaDecision> {
      const at = now();
      // A plan leaving out the operation refuses without counting, and without asking Redis.
      if (plan !== undefined && !plan.operations.includes(operation)) return decideQuota(plan, operation, lastSeen.get(connectionId)?.used ?? 0, at.getTime());
      const limit = plan?.monthlyRequests;
      // No limit: nothing for Redis to decide. Served at once, counted in memory.
      if (limit === undefined) {
        add(monthOf(at), connectionId, 1);
        return decideQuota(plan, operation, 0, at.getTime());
      }
      return takeLimited(connectionId, plan as PlanConfig, operation, at, limit);
    },
    used(connectionId) {
      const month = monthKey(now());
      const seen = lastSeen.get(connectionId);
      const waiting = pending.get(month)?.get(connectionId) ?? 0;
      return (seen === undefined || seen.month !== month ? 0 : seen.used) + waiting;
    },
    flush,
    // Redis cannot be written to without yielding: a forced exit loses the last second's counts of unlimited connections.
    flushSync: () => undefined,
    close: () => flush(),
  };

}
