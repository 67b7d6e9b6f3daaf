// Rate limits shared by every instance through Redis: three instances behind a load balancer,
// a plan of 60 requests per 10 s, and one key's requests spread across them -> never more than
// 60 served in a window, and 60 while they keep coming. A Lua script checks and counts in one
// atomic step on a hash per connection and caller (`sheetrest:rate:crm:key:3f9a...` -> window
// number and count), which expires when its window ends. The window is Redis's own clock (TIME),
// so instances whose clocks disagree still count in the same windows; tests pass their own.
//
// A request should not wait for Redis (a kept read is answered in the turn it arrives), so an
// instance holds a lease per caller: besides the requests it asks for, the script grants it an
// eighth of what is left of the window (at most LEASE_MAX), counted in Redis at once. Requests
// are served from the lease without a round trip; a new lease is asked for when half is used.
// Near the limit what is left is small and the lease is 0: each request is granted by Redis
// (one call in flight per caller, carrying every request that arrived meanwhile, as a group
// commit). So no window ever serves more than the limit; it serves fewer only when an instance
// holding a lease stops getting that caller's requests before the window ends (at most an
// eighth of what was left when it was leased). The lease ends with its window by this
// instance's clock, measured from when it was asked for (before Redis looked), so it is never
// used past the window Redis counted it in. docs/decisions.md, "Rate limits".
import type { Logger } from '../log.ts';
import type { Redis } from '../redis/client.ts';
import { redisUnavailable } from '../redis/unavailable.ts';
import { decideRate, type RateDecision, type RateLimit, type RateLimiter } from './rate-limit.ts';

// KEYS[1]: the caller's hash; ARGV[1]: the limit; ARGV[2]: the window in ms; ARGV[3]: now in ms
// ('' for Redis's clock); ARGV[4]: how many requests ask; ARGV[5]: the most to lease besides.
// Returns { the window's count before them, how many are granted, how many leased, ms left of
// the window, the window's number }.
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
local limit = tonumber(ARGV[1])
local granted = math.max(0, math.min(tonumber(ARGV[4]), limit - used))
local leased = math.min(tonumber(ARGV[5]), math.floor((limit - used - granted) / 8))
if granted + leased > 0 then
  redis.call('HSET', KEYS[1], 'w', window, 'n', used + granted + leased)
  redis.call('PEXPIRE', KEYS[1], left)
end
return { used, granted, leased, left, window }
`;

/** The most one lease holds: a large limit is still asked for in steps. */
export const LEASE_MAX = 1000;

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

  const clock = options.now ?? Date.now;

  const run = async (key: string, args: string[]): Promise<number[]> => {
    const call = () => redis.client.evalSha(sha, { keys: [key], arguments: args });
    try {
      return ((await call()) as unknown[]).map(Number);
    } catch (error) {
      // A restarted Redis has forgotten the script.
      if (!String(error).includes('NOSCRIPT')) throw error;
      sha = await redis.client.scriptLoad(TAKE_SCRIPT);
      return ((await call()) as unknown[]).map(Number);
    }
  };

  /** Per connection and caller: its lease, whether a call is on its way, and the requests waiting for it. */
  const connections = new Map<string, Map<string, Lease>>();

  /** A request served from the lease: its decision, at once. */
  const fromLease = (lease: Lease, now: number): RateDecision => {
    lease.tokens--;
    const decision = decideRate(lease.planName, lease.limit, lease.used, lease.ends - now);
    lease.used++;
    return decision;
  };

  const ask = (lease: Lease): void => {
    lease.asking = true;
    const batch = lease.waiting;
    lease.waiting = [];
    const sent = clock();
    const { limit } = lease;
    const args = [String(limit.requests), String(limit.perSeconds * 1000), options.now === undefined ? '' : String(sent), String(batch.length), String(LEASE_MAX)];
    run(lease.key, args).then(
      ([used, granted, leased, msLeft, window]) => {
        warned = false;
        // What is left of an older window's lease is gone with it, and so is its count.
        if (window !== lease.window) {
          lease.tokens = 0;
          lease.used = 0;
        }
        lease.window = window;
        lease.ends = sent + msLeft;
        lease.tokens += leased;
        lease.refillBelow = Math.floor(leased / 2);
        // The first `granted` are served, each seeing its own count; the rest see a full window.
        batch.forEach((settle, index) => settle(decideRate(lease.planName, limit, index < granted ? used + index : limit.requests, msLeft)));
        lease.used = Math.max(lease.used, used + granted);
      },
      (error: unknown) => {
        if (!warned) log.warn('redis is unreachable: requests on plans with a rate limit answer 503 until it is back', { redis: redis.shown, error: String(error) });
        warned = true;
        const refused: RateDecision = { allowed: false, headers: {}, error: redisUnavailable('Requests on this connection are counted against a rate limit') };
        for (const settle of batch) settle(refused);
      },
    ).finally(() => {
      lease.asking = false;
      const now = clock();
      // Requests that came meanwhile: from the new lease where it has some, else the next call.
      while (lease.waiting.length > 0 && lease.tokens > 0 && now < lease.ends) lease.waiting.shift()?.(fromLease(lease, now));
      if (lease.waiting.length > 0) ask(lease);
      else if (lease.tokens === 0 && now >= lease.ends) lease.forget();
    });
  };

  return {
    take(connectionId, caller, planName, limit): RateDecision | Promise<RateDecision> {
      let leases = connections.get(connectionId);
      if (leases === undefined) connections.set(connectionId, (leases = new Map()));
      let lease = leases.get(caller);
      // A plan changed meanwhile: a lease of the old limit is not this one's.
      if (lease !== undefined && (lease.limit.requests !== limit.requests || lease.limit.perSeconds !== limit.perSeconds) && !lease.asking) lease = undefined;
      if (lease === undefined) {
        const held = leases;
        const made: Lease = { key: `${prefix}${connectionId}:${caller}`, planName, limit, window: -1, ends: 0, tokens: 0, used: 0, refillBelow: 0, asking: false, waiting: [], forget: () => held.get(caller) === made && held.delete(caller) };
        lease = made;
        leases.set(caller, made);
      }
      const now = clock();
      if (lease.tokens > 0 && now < lease.ends) {
        const decision = fromLease(lease, now);
        // Half used: the next lease is asked for before this one runs out.
        if (lease.tokens <= lease.refillBelow && !lease.asking) ask(lease);
        return decision;
      }
      const held = lease;
      return new Promise((settle) => {
        held.waiting.push(settle);
        if (!held.asking) ask(held);
      });
    },
  };
}

interface Lease {
  readonly key: string;
  readonly planName: string;
  readonly limit: RateLimit;
  /** The window it was granted in (Redis's number), and when that ends by this instance's clock. */
  window: number;
  ends: number;
  /** Requests this instance may still serve in that window without asking. */
  tokens: number;
  /** The window's count as this instance last knew it, with what it served since (for `RateLimit`'s `r`). */
  used: number;
  refillBelow: number;
  asking: boolean;
  waiting: ((decision: RateDecision) => void)[];
  /** Drops it from its connection's leases, once its window is over and nothing waits. */
  readonly forget: () => void;
}
