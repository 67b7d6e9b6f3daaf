// What instances behind a load balancer share about one Google spreadsheet, through Redis:
// - a version counter, bumped by every write before its answer and read by every read, so that
//   `POST /sheets/crm` on instance A is seen by the next `GET /sheets/crm` on B and C (each drops
//   its snapshot when the counter moved since it was read);
// - a write lease (`SET NX PX` with a fencing token), held while a write reads, plans and sends,
//   so a PATCH or DELETE by match on one instance never interleaves with a write on another and
//   hits the wrong rows after a row shift. The holder renews it while the write runs; a holder
//   that dies loses it when it expires. Google takes no fencing token, so the holder checks its
//   token in Redis right before each upstream request instead: a holder that stalled past the
//   expiry (a long pause) finds the lease gone and stops before sending.
// Keys: `sheetrest:sheet:<root URL> <id>:version`, `...:lease` (the token), `...:fence`.
import { apiError, type ApiError } from '../../lib/errors.ts';
import { redisUnavailable, type Redis } from './redis.ts';

export interface SpreadsheetCoordination {
  /** The spreadsheet's shared version; null when Redis cannot say (serve what is cached). */
  version(): Promise<number | null>;
  /** Counts one write; the new version, or null when Redis could not be told (logged). */
  changed(): Promise<number | null>;
  /**
   * Runs `step` holding the lease; `fence()` throws when the lease was lost, and is called right
   * before each upstream request. Throws 503 (nothing run) when the lease cannot be had in time.
   */
  underLease<T>(step: (fence: () => Promise<void>) => Promise<T>): Promise<T>;
}

export interface LeaseSettings {
  /** The lease's time to live; renewed every third of it while held. */
  readonly leaseMs: number;
  /** How long a write waits for the lease before 503. */
  readonly leaseWaitMs: number;
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

export function spreadsheetCoordination(redis: Redis, key: string, settings: LeaseSettings, log: (message: string) => void): SpreadsheetCoordination {
  const base = `sheetrest:sheet:${key}`;
  const versionKey = `${base}:version`;
  const leaseKey = `${base}:lease`;
  const fenceKey = `${base}:fence`;
  const { client } = redis;

  const acquire = async (): Promise<number> => {
    const deadline = performance.now() + settings.leaseWaitMs;
    for (;;) {
      let reply: unknown;
      try {
        reply = await client.eval(ACQUIRE, { keys: [leaseKey, fenceKey], arguments: [String(settings.leaseMs)] });
      } catch {
        throw redisUnavailable('Writes are paused');
      }
      const [token, left] = (reply as [number, number]).map(Number);
      if (token > 0) return token;
      const waitLeft = deadline - performance.now();
      if (waitLeft <= 0) throw leaseBusy(left);
      await sleep(Math.min(waitLeft, Math.max(1, Math.min(left, POLL_MS + Math.random() * POLL_MS))));
    }
  };

  return {
    async version() {
      try {
        const value = await client.get(versionKey);
        return value === null ? 0 : Number(value);
      } catch {
        return null;
      }
    },
    async changed() {
      try {
        return await client.incr(versionKey);
      } catch (error) {
        log(`sheetrest: could not tell the other instances about a write to ${key} (${String(error)}); they see it once their freshness window ends`);
        return null;
      }
    },
    async underLease(step) {
      const token = String(await acquire());
      let lost = false;
      const renew = async (): Promise<boolean> => {
        try {
          lost ||= Number(await client.eval(RENEW, { keys: [leaseKey], arguments: [token, String(settings.leaseMs)] })) !== 1;
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
        await client.eval(RELEASE, { keys: [leaseKey], arguments: [token] }).catch(() => undefined);
      }
    },
  };
}

function leaseBusy(leftMs: number): ApiError {
  const seconds = String(Math.max(1, Math.ceil(leftMs / 1000)));
  return apiError('upstream_unavailable', 'Another instance is writing to this spreadsheet and still holds its write lease; nothing was written, try again.', { 'Retry-After': seconds });
}

function leaseLost(): ApiError {
  return apiError('upstream_unavailable', 'This instance lost the spreadsheet\'s write lease before sending the write (a long pause, or Redis went away); nothing more was written, try again.', { 'Retry-After': '1' });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
