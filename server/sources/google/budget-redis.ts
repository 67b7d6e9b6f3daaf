// Google's per-minute request budget shared by every instance through Redis: with three
// instances signed in as the same service account and Google's 60 reads a minute per user, the
// 61st read within a minute, on whichever instance, waits for a slot (or is answered 503), as
// server/sources/google/budget.ts does within one process. The same rolling window, kept in
// Redis: per window (`sheetrest:budget:read user <root URL> robot@project`) a list of the send
// times of its slots, decided and taken by one Lua script on Redis's clock (instances' clocks
// differ), so two instances never both take the last slot of a minute.
// Redis unable to answer: the caller uses its local budget (admit answers null), see
// docs/decisions.md.
import type { Admission, SharedBudget } from './budget.ts';
import type { Redis } from '../../redis/client.ts';

// KEYS: the windows (user's, project's); ARGV[1]: window ms; ARGV[2]: longest wait ms; ARGV[3..]:
// each window's limit. Slot n of a window goes no sooner than a window after slot n - limit, and
// after every slot before it. Returns the wait in ms, or -(wait + 1) when it is longer than the
// longest wait (nothing taken).
const ADMIT_SCRIPT = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local window = tonumber(ARGV[1])
local at = now
for i, key in ipairs(KEYS) do
  while true do
    local first = redis.call('LINDEX', key, 0)
    if not first or tonumber(first) > now - window then break end
    redis.call('LPOP', key)
  end
  local limit = tonumber(ARGV[2 + i])
  local count = redis.call('LLEN', key)
  if count > 0 then at = math.max(at, tonumber(redis.call('LINDEX', key, -1))) end
  if count >= limit then at = math.max(at, tonumber(redis.call('LINDEX', key, count - limit)) + window) end
end
if at - now > tonumber(ARGV[2]) then return -(at - now) - 1 end
for _, key in ipairs(KEYS) do
  redis.call('RPUSH', key, at)
  redis.call('PEXPIRE', key, at - now + window)
end
return at - now
`;

export interface RedisBudgetOptions {
  readonly redis: Redis;
  /** A minute plus a second, as the local budget's (a slot is taken before the request reaches Google). */
  readonly windowMs?: number;
  /** Key prefix, for tests sharing one Redis. */
  readonly prefix?: string;
  /** Told once when Redis stops answering, and once when it answers again. */
  readonly log: (message: string) => void;
}

export function redisBudget(options: RedisBudgetOptions): SharedBudget {
  const { redis, log } = options;
  const windowMs = options.windowMs ?? 61_000;
  const prefix = options.prefix ?? 'sheetrest:budget:';
  let sha: string | null = null;
  let failing = false;
  const run = async (keys: string[], args: string[]): Promise<number> => {
    sha ??= await redis.client.scriptLoad(ADMIT_SCRIPT);
    try {
      return Number(await redis.client.evalSha(sha, { keys, arguments: args }));
    } catch (error) {
      // A restarted Redis has forgotten the script.
      if (!String(error).includes('NOSCRIPT')) throw error;
      sha = await redis.client.scriptLoad(ADMIT_SCRIPT);
      return Number(await redis.client.evalSha(sha, { keys, arguments: args }));
    }
  };
  return {
    async admit(windows, maxWaitMs): Promise<Admission | null> {
      let reply: number;
      try {
        reply = await run(
          windows.map((window) => prefix + window.key),
          [String(windowMs), String(Math.max(0, Math.floor(maxWaitMs))), ...windows.map((window) => String(Math.max(1, Math.floor(window.limit))))],
        );
      } catch {
        if (!failing) log("Google's request budget cannot be shared (redis is unreachable): each instance counts its own requests until it is back");
        failing = true;
        return null;
      }
      if (failing) log("Google's request budget is shared through redis again");
      failing = false;
      return reply < 0 ? { refusedForMs: -reply - 1 } : { waitMs: reply };
    },
  };
}
