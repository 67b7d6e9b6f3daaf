// A lease in Redis: `SET NX PX` holding a fencing token from `INCR`, taken by one script,
// renewed every third of its time to live while its holder works, released only by its holder
// (compare-and-delete). A holder that dies loses it when it expires. Used for a spreadsheet's
// writes (sources/google/shared-spreadsheet.ts) and for an Idempotency-Key's first try (idempotency/redis-store.ts):
// `await underLease(redis, { lease: 'k:lease', fence: 'k:fence' }, settings, async (fence) => ...)`.
import { apiError, type ApiError } from '../../lib/errors.ts';
import type { Redis } from './client.ts';
import { redisUnavailable } from './unavailable.ts';

export interface LeaseSettings {
  /** The lease's time to live; renewed every third of it while held. */
  readonly leaseMs: number;
  /** How long a caller waits for the lease before giving up (503). */
  readonly leaseWaitMs: number;
}

export interface LeaseKeys {
  readonly lease: string;
  readonly fence: string;
}

// KEYS: lease, fence. ARGV: ttl ms. -> {token, 0} when taken, {0, ms left} when held by another.
const ACQUIRE = `
local left = redis.call('PTTL', KEYS[1])
if left ~= -2 then return {0, left} end
local token = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], token, 'PX', ARGV[1])
return {token, 0}
`;
// KEYS: lease. ARGV: token, ttl ms. -> 1 while ours (extended), 0 when lost.
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/**
 * Polls for a lease held by another instance at this pace (plus jitter), or sooner when it ends
 * sooner. A write holds it for milliseconds (Google's round trips), so a longer pause would idle
 * the spreadsheet between writes: 15 ms cut 3-instance writes to a third of one instance's rate.
 */
const POLL_MS = 2;


/**
 * Runs `step` holding the lease; `fence()` throws when the lease was lost (call it right before
 * each effect outside). Throws `busy(ms the holder has left)` when the lease cannot be had within
 * `leaseWaitMs`, and a 503 when Redis cannot be reached (its message starting with `unavailable`);
 * `step` has not run then.
 */
export async function underLease<T>(redis: Redis, keys: LeaseKeys, settings: LeaseSettings, step: (fence: () => Promise<void>) => Promise<T>, busy: (leftMs: number) => ApiError, unavailable = 'Writes are paused'): Promise<T> {
  const { client } = redis;
  const deadline = performance.now() + settings.leaseWaitMs;
  let token: string;
  for (;;) {
    let reply: unknown;
    try {
      reply = await client.eval(ACQUIRE, { keys: [keys.lease, keys.fence], arguments: [String(settings.leaseMs)] });
    } catch {
      throw redisUnavailable(unavailable);
    }
    const [taken, left] = (reply as [number, number]).map(Number);
    if (taken > 0) {
      token = String(taken);
      break;
    }
    const waitLeft = deadline - performance.now();
    if (waitLeft <= 0) throw busy(left);
    await sleep(Math.min(waitLeft, Math.max(1, Math.min(left, POLL_MS + Math.random() * POLL_MS))));
  }
  let lost = false;
  const renew = async (): Promise<boolean> => {
    try {
      lost ||= Number(await client.eval(RENEW, { keys: [keys.lease], arguments: [token, String(settings.leaseMs)] })) !== 1;
    } catch {
      // Redis away: the lease can no longer be shown to be ours.
      lost = true;
    }
    return !lost;
  };
  const timer = setInterval(() => void renew(), Math.max(10, Math.floor(settings.leaseMs / 3)));
  try {
    return await step(async () => {
      if (lost || !(await renew())) throw leaseLost();
    });
  } finally {
    clearInterval(timer);
    await client.eval(RELEASE, { keys: [keys.lease], arguments: [token] }).catch(() => undefined);
  }
}

function leaseLost(): ApiError {
  return apiError('upstream_unavailable', "This instance lost its lease in Redis before going on (a long pause, or Redis went away); nothing more was written, try again.", { 'Retry-After': '1' });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
