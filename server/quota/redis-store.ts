// Allowances shared by every instance through Redis: with three instances behind a load
// balancer and a plan of 150 requests a month, exactly 150 are served across them. One Lua
// script per request of a limited connection checks the limit and counts in one atomic step
// (two instances can never both take the last request), on a key per connection and span of
// the plan's period that expires when the span ends: `sheetrest:quota:2026-11:crm` -> 149 for a
// month (the key it always had), `sheetrest:quota:2026-11-23:crm` for a day,
// `sheetrest:quota:2026-11-23T14:crm` for an hour (period.ts). The rules and headers are
// quota.ts's (decideQuota).
//
// A connection without a limit has nothing for Redis to decide: its requests are
// served at once, counted in memory and added to Redis's count with one INCRBY per connection
// every FLUSH_MS (so a limit set mid-month still applies to the month's real use, less at most
// the last second's requests of an instance that crashed), on the key of its plan's period (a
// month without a plan). A cached read of such a connection
// makes no Redis round trip.
//
// Redis away: quota fails closed for limited connections (503 with Retry-After: serving them
// would let every instance hand out the allowance again) and open for connections without a
// limit (nothing to protect; their counts wait in memory until Redis is back).
import { apiError } from '../../lib/errors.ts';
import type { BillingPlan, Operation } from '../config/schema.ts';
import type { Logger } from '../log.ts';
import { PERIOD_NAMES, PERIODS, periodOf, spanClock, type PeriodName, type Span } from './period.ts';
import { allowanceOf, decideQuota, quotaHeaders, type QuotaDecision, type QuotaStore } from './quota.ts';
import type { Redis } from '../redis/client.ts';
import { redisUnavailable } from '../redis/unavailable.ts';

// KEYS[1]: the span's count; ARGV[1]: the limit (-1: none); ARGV[2]: the span's end, Unix seconds.
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
  // What this instance last heard of each count, for the admin API's usage view (`used`): the
  // span's key tells a count of this span from an older one, and a day's from a month's.
  const lastSeen = new Map<string, { key: string; used: number }>();
  let warnedUncounted = false;
  const flushMs = options.flushMs ?? FLUSH_MS;
  /** Counts of connections without a limit not yet in Redis: span key -> its end and connection -> requests. */
  let pending = new Map<string, { readonly until: number; readonly counts: Map<string, number> }>();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let flushing: Promise<void> = Promise.resolve();
  // The span of a moment in each period, remembered: most requests compare two numbers.
  const spans = Object.fromEntries(PERIOD_NAMES.map((period) => [period, spanClock(period)])) as Record<PeriodName, (ms: number) => Span>;
  const spanOf = (plan: BillingPlan | undefined, at: Date): Span => spans[periodOf(plan)](at.getTime());

  const flushOnce = async (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    const batch = pending;
    pending = new Map();
    const sends: Promise<void>[] = [];
    for (const [span, { until, counts }] of batch) {
      // A span's key expires when the span ends, as the limited connections' script sets it.
      const expiresAt = until / 1000;
      for (const [connectionId, count] of counts) {
        const key = `${prefix}${span}:${connectionId}`;
        sends.push(Promise.all([redis.client.incrBy(key, count), redis.client.expireAt(key, expiresAt)]).then(([total]) => {
          lastSeen.set(connectionId, { key: span, used: Number(total) });
        }, (error: unknown) => {
          // Kept for the next flush: Redis is away, and the counts are the clients' real use.
          add(span, until, connectionId, count);
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

  const add = (span: string, until: number, connectionId: string, count: number) => {
    let waiting = pending.get(span);
    if (waiting === undefined) pending.set(span, (waiting = { until, counts: new Map() }));
    waiting.counts.set(connectionId, (waiting.counts.get(connectionId) ?? 0) + count);
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

  const usedNow = (connectionId: string, span: Span): number => {
    const seen = lastSeen.get(connectionId);
    const waiting = pending.get(span.key)?.counts.get(connectionId) ?? 0;
    return (seen === undefined || seen.key !== span.key ? 0 : seen.used) + waiting;
  };

  const takeLimited = async (connectionId: string, plan: BillingPlan, operation: Operation, span: Span, limit: number): Promise<QuotaDecision> => {
    const allowance = PERIODS[periodOf(plan)].adjective;
    let reply: number;
    try {
      reply = await run(`${prefix}${span.key}:${connectionId}`, limit, span.to / 1000);
    } catch {
      const refusal = redisUnavailable(`Requests on this connection are counted against a ${allowance} plan`);
      return { allowed: false, headers: {}, error: refusal };
    }
    const used = reply < 0 ? -reply - 1 : reply;
    lastSeen.set(connectionId, { key: span.key, used: reply < 0 ? used : used + 1 });
    const decision = decideQuota(plan, operation, used, span);
    // Redis decided; the rules agree with it unless the limit changed between the two looks.
    if (reply < 0 && decision.allowed) return { allowed: false, headers: decision.headers, error: apiError('throttle', `The ${allowance} request quota is used up.`) };
    return decision;
  };

  return {
    take(connectionId: string, plan: BillingPlan | undefined, operation: Operation): QuotaDecision | Promise<QuotaDecision> {
      const span = spanOf(plan, now());
      // A plan leaving out the operation refuses without counting, and without asking Redis.
      if (plan !== undefined && !plan.operations.includes(operation)) return decideQuota(plan, operation, lastSeen.get(connectionId)?.used ?? 0, span);
      const limit = allowanceOf(plan);
      // No limit: nothing for Redis to decide. Served at once, counted in memory.
      if (limit === undefined) {
        add(span.key, span.to, connectionId, 1);
        return decideQuota(plan, operation, 0, span);
      }
      return takeLimited(connectionId, plan as BillingPlan, operation, span, limit);
    },
    // This instance's last view of the count (no round trip for an answer that counts nothing):
    // other instances' requests since then are not in it.
    peek(connectionId, plan) {
      const span = spanOf(plan, now());
      return quotaHeaders(plan, usedNow(connectionId, span), span);
    },
    used(connectionId, plan) {
      return usedNow(connectionId, spanOf(plan, now()));
    },
    flush,
    // Redis cannot be written to without yielding: a forced exit loses the last second's counts of unlimited connections.
    flushSync: () => undefined,
    close: () => flush(),
  };

}
