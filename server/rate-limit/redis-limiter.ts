// Rate limits shared by every instance through Redis: three instances behind a load balancer,
// a plan of 60 requests per 10 s, and one key's requests spread across them -> exactly 60 are
// served in each window. A Lua script checks and counts in one atomic step on a hash per
// connection and caller (`sheetrest:rate:crm:key:3f9a...` -> window number and count), which
// expires when its window ends. The window is Redis's own clock (TIME), so instances whose
// clocks disagree still count in the same windows; tests pass a clock of their own.
//
// One call in flight per caller, as a group commit: a request finding its caller's call on its
// way waits for the next one, which asks for all the requests that arrived meanwhile at once
// (the script grants as many as the window has left, in order). An idle caller's request goes
// at once; a busy one's waits at most one round trip more, and the round trips per request fall
// as the load rises (docs/benchmarks.md, "Rate limits"). Still exact: Redis grants each request.
//
// Redis away: a plan with a rate limit is refused with 503 and Retry-After, as the quota refuses a
// limited plan (server/quota/redis-store.ts): serving would let each instance hand out the window again.
import type { Logger } from '../log.ts';
import type { Redis } from '../redis/client.ts';
import { redisUnavailable } from '../redis/unavailable.ts';
import { decideRate, type RateDecision, type RateLimit, type RateLimiter } from './rate-limit.ts';

// KEYS[1]: the caller's hash; ARGV[1]: the limit; ARGV[2]: the window in ms; ARGV[3]: now in ms
// ('' for Redis's clock); ARGV[4]: how many requests ask. Returns { the window's count before
// them, how many are granted, ms left of the window }.
const TAKE_SCRIPT = `
local nowMs
if ARGV[3] == '' then
  if redis.replicate_commands then redis.replicate_commands() end
  local time = redis.call('TIME')
  nowMs = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
else
  nowMs = tonumber(ARGV[3])
end
local windowMs = tonumber(ARGV[2])
local window = math.floor(nowMs / windowMs)
local left = (window + 1) * windowMs - nowMs
local used = 0
if tonumber(redis.call('HGET', KEYS[1], 'w') or '-1') == window then used = tonumber(redis.call('HGET', KEYS[1], 'n') or '0') end
local granted = math.max(0, math.min(tonumber(ARGV[4]), tonumber(ARGV[1]) - used))
if granted > 0 then
  redis.call('HSET', KEYS[1], 'w', window, 'n', used + granted)
  redis.call('PEXPIRE', KEYS[1], left)
end
return { used, granted, left }
`;

export interface RedisLimiterOptions {
  readonly redis: Redis;
  readonly log: Logger;
  /** Key prefix, for tests sharing one Redis. */
  readonly prefix?: string;
  /** A clock of the caller's (ms since the epoch) in place of Redis's TIME; for tests. */
  readonly now?: () => number;
}

export async function openRedisLimiter(options: RedisLimiterOptions): Promise<RateLimiter> {
  const { redis, log } = options;
  const prefix = options.prefix ?? 'sheetrest:rate:';
  let sha = await redis.client.scriptLoad(TAKE_SCRIPT);
  let warned = false;

  const run = async (key: string, args: string[]): Promise<[number, number, number]> => {
    const call = () => redis.client.evalSha(sha, { keys: [key], arguments: args });
    try {
      return (await call()) as [number, number, number];
    } catch (error) {
      // A restarted Redis has forgotten the script.
      if (!String(error).includes('NOSCRIPT')) throw error;
      sha = await redis.client.scriptLoad(TAKE_SCRIPT);
      return (await call()) as [number, number, number];
    }
  };

  /** Per caller (and limit): whether a call is on its way, and the requests waiting for the next. */
  const callers = new Map<string, { waiting: ((decision: RateDecision) => void)[] }>();

  const send = (id: string, key: string, planName: string, limit: RateLimit): void => {
    const caller = callers.get(id);
    if (caller === undefined) return;
    if (caller.waiting.length === 0) {
      callers.delete(id);
      return;
    }
    const batch = caller.waiting;
    caller.waiting = [];
    const args = [String(limit.requests), String(limit.perSeconds * 1000), options.now === undefined ? '' : String(options.now()), String(batch.length)];
    run(key, args).then(
      (reply) => {
        warned = false;
        const [used, granted, msLeft] = reply.map(Number);
        // The first `granted` are served, each seeing its own count; the rest see a full window.
        batch.forEach((settle, index) => settle(decideRate(planName, limit, index < granted ? used + index : limit.requests, msLeft)));
      },
      (error: unknown) => {
        if (!warned) log.warn('redis is unreachable: requests on plans with a rate limit answer 503 until it is back', { redis: redis.shown, error: String(error) });
        warned = true;
        const refused: RateDecision = { allowed: false, headers: {}, error: redisUnavailable('Requests on this connection are counted against a rate limit') };
        for (const settle of batch) settle(refused);
      },
    ).finally(() => send(id, key, planName, limit));
  };

  return {
    take(connectionId, caller, planName, limit): Promise<RateDecision> {
      const key = `${prefix}${connectionId}:${caller}`;
      const id = `${key}\n${limit.requests}/${limit.perSeconds}`;
      return new Promise((settle) => {
        const waiting = callers.get(id);
        if (waiting !== undefined) return void waiting.waiting.push(settle);
        callers.set(id, { waiting: [settle] });
        send(id, key, planName, limit);
      });
    },
  };
}
