// Rate limits shared by every instance through Redis: three instances behind a load balancer,
// a plan of 60 requests per 10 s, and one key's requests spread across them -> exactly 60 are
// served in each window. One Lua script per request checks and counts in one atomic step on a
// hash per connection and caller (`sheetrest:rate:crm:key:3f9a...` -> window number and count),
// which expires when its window ends. The window is Redis's own clock (TIME), so instances whose
// clocks disagree still count in the same windows; tests pass a clock of their own.
//
// Redis away: a plan with a rate limit is refused with 503 and Retry-After, as the quota refuses a
// limited plan (server/quota/redis-store.ts): serving would let each instance hand out the window again.
import type { Logger } from '../log.ts';
import type { Redis } from '../redis/client.ts';
import { redisUnavailable } from '../redis/unavailable.ts';
import { decideRate, type RateDecision, type RateLimiter } from './rate-limit.ts';

// KEYS[1]: the caller's hash; ARGV[1]: the limit; ARGV[2]: the window in ms; ARGV[3]: now in ms
// ('' for Redis's clock). Returns { count before this request, ms left of the window }; the count
// is negated (minus one) when the request is refused, so one reply carries the decision.
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
if used >= tonumber(ARGV[1]) then return { -used - 1, left } end
redis.call('HSET', KEYS[1], 'w', window, 'n', used + 1)
redis.call('PEXPIRE', KEYS[1], left)
return { used, left }
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

  const run = async (key: string, args: string[]): Promise<[number, number]> => {
    const call = () => redis.client.evalSha(sha, { keys: [key], arguments: args });
    try {
      return (await call()) as [number, number];
    } catch (error) {
      // A restarted Redis has forgotten the script.
      if (!String(error).includes('NOSCRIPT')) throw error;
      sha = await redis.client.scriptLoad(TAKE_SCRIPT);
      return (await call()) as [number, number];
    }
  };

  return {
    async take(connectionId, caller, planName, limit): Promise<RateDecision> {
      let reply: [number, number];
      try {
        reply = await run(`${prefix}${connectionId}:${caller}`, [String(limit.requests), String(limit.perSeconds * 1000), options.now === undefined ? '' : String(options.now())]);
      } catch (error) {
        if (!warned) log.warn('redis is unreachable: requests on plans with a rate limit answer 503 until it is back', { redis: redis.shown, error: String(error) });
        warned = true;
        return { allowed: false, headers: {}, error: redisUnavailable('Requests on this connection are counted against a rate limit') };
      }
      warned = false;
      const [counted, msLeft] = reply.map(Number);
      return decideRate(planName, limit, counted < 0 ? -counted - 1 : counted, msLeft);
    },
  };
}
