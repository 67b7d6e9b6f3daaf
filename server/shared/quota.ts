// Monthly allowances shared by every instance through Redis: with three instances behind a load
// balancer and a plan of 150 requests a month, exactly 150 are served across them. One Lua
// script per request checks the limit and counts in one atomic step (two instances can never
// both take the last request), on a key per connection and month that expires when the month
// ends: `sheetrest:quota:2026-11:crm` -> 149. The rules and headers are quota.ts's (decideQuota).
//
// Redis away: quota fails closed for limited connections (503 with Retry-After: serving them
// would let every instance hand out the allowance again) and open for connections without a
// monthly limit (nothing to protect; their requests go uncounted meanwhile, logged once).
import { apiError } from '../../lib/errors.ts';
import type { Operation, PlanConfig } from '../config-schema.ts';
import type { Logger } from '../log.ts';
import { decideQuota, monthKey, nextMonthStart, type QuotaDecision, type QuotaStore } from '../quota.ts';
import type { Redis } from './redis.ts';
import { redisUnavailable } from './unavailable.ts';

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

export interface RedisQuotaOptions {
  readonly redis: Redis;
  readonly log: Logger;
  readonly now?: () => Date;
  /** Key prefix, for tests sharing one Redis. */
  readonly prefix?: string;
}

export async function openRedisQuota(options: RedisQuotaOptions): Promise<QuotaStore> {
  const { redis, log } = options;
  const now = options.now ?? (() => new Date());
  const prefix = options.prefix ?? 'sheetrest:quota:';
  let sha = await redis.client.scriptLoad(TAKE_SCRIPT);
  // What this instance last heard of each count, for the admin API's usage view (`used`).
  const lastSeen = new Map<string, { month: string; used: number }>();
  let warnedUncounted = false;

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

  return {
    async take(connectionId: string, plan: PlanConfig | undefined, operation: Operation): Promise<QuotaDecision> {
      const at = now();
      // A plan leaving out the operation refuses without counting, and without asking Redis.
      if (plan !== undefined && !plan.operations.includes(operation)) return decideQuota(plan, operation, lastSeen.get(connectionId)?.used ?? 0, at.getTime());
      const month = monthKey(at);
      const limit = plan?.monthlyRequests;
      let reply: number;
      try {
        reply = await run(`${prefix}${month}:${connectionId}`, limit ?? -1, nextMonthStart(at));
      } catch {
        if (limit !== undefined) {
          const refusal = redisUnavailable('Requests on this connection are counted against a monthly plan');
          return { allowed: false, headers: {}, error: refusal };
        }
        if (!warnedUncounted) log.warn('redis is unreachable: requests of connections without a monthly limit are served uncounted', { redis: redis.shown });
        warnedUncounted = true;
        return decideQuota(plan, operation, 0, at.getTime());
      }
      warnedUncounted = false;
      const used = reply < 0 ? -reply - 1 : reply;
      lastSeen.set(connectionId, { month, used: reply < 0 ? used : used + 1 });
      const decision = decideQuota(plan, operation, used, at.getTime());
      // Redis decided; the rules agree with it unless the limit changed between the two looks.
      if (reply < 0 && decision.allowed) return { allowed: false, headers: decision.headers, error: apiError('throttle', 'The monthly request quota is used up.') };
      return decision;
    },
    used(connectionId) {
      const seen = lastSeen.get(connectionId);
      return seen === undefined || seen.month !== monthKey(now()) ? 0 : seen.used;
    },
    // Every count is in Redis as soon as it is made: nothing is pending.
    flush: () => Promise.resolve(),
    flushSync: () => undefined,
    close: () => Promise.resolve(),
  };
}
