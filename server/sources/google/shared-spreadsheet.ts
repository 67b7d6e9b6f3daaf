// What instances behind a load balancer share about one Google spreadsheet, through Redis:
// - a version counter, bumped by every write before its answer and consulted by every read, so
//   that `POST /sheets/crm` on instance A is seen by the next `GET /sheets/crm` on B and C (each
//   drops its snapshot when the counter moved since it was read). Each instance keeps the
//   versions in memory, told of every bump by a message the write waits for (shared-versions.ts): a
//   read asks Redis only while the instance cannot trust what it keeps;
// - a write lease (`SET NX PX` with a fencing token), held while a write reads, plans and sends,
//   so a PATCH or DELETE by match on one instance never interleaves with a write on another and
//   hits the wrong rows after a row shift. The holder renews it while the write runs; a holder
//   that dies loses it when it expires. Google takes no fencing token, so the holder checks its
//   token in Redis right before each upstream request instead: a holder that stalled past the
//   expiry (a long pause) finds the lease gone and stops before sending.
// Keys: `sheetrest:sheet:<root URL> <id>:version`, `...:lease` (the token), `...:fence`.
//
// The counter does not start at 0: whoever finds it missing sets it to a random number (an
// epoch folded into the version). A Redis that restarts empty starts the count somewhere else,
// so a version an instance kept a tab at does not come round again (it would serve that tab as
// current); with 2^48 starts, the chance is about the writes since the restart in 2^48.
import { randomInt } from 'node:crypto';
import { apiError, type ApiError } from '../../../lib/errors.ts';
import { underLease, type LeaseSettings } from '../../redis/lease.ts';
import type { Redis } from '../../redis/client.ts';
import { evalScript, type SharedVersions } from './shared-versions.ts';

export type { LeaseSettings } from '../../redis/lease.ts';
export interface SpreadsheetCoordination {
  /**
   * The spreadsheet's shared version; null when Redis cannot say (serve what is cached). A plain
   * number when kept in memory, so a cached read waits for nothing.
   */
  version(): number | null | Promise<number | null>;
  /** Counts one write; the new version, or null when Redis could not be told (logged). */
  changed(): Promise<number | null>;
  /**
   * Runs `step` holding the lease; `fence()` throws when the lease was lost, and is called right
   * before each upstream request. Throws 503 (nothing run) when the lease cannot be had in time.
   */
  underLease<T>(step: (fence: () => Promise<void>) => Promise<T>): Promise<T>;
}

/** Where a missing counter starts: below 2^48, so a century of writes stays a safe integer. */
const EPOCH_SPAN = 2 ** 48;
// KEYS: version. ARGV: a random start. -> the version (set to the start when missing).
const VERSION = `
local value = redis.call('GET', KEYS[1])
if value then return value end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]
`;
// KEYS: version. ARGV: a random start. -> the version after this write.
const CHANGED = `
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[1]) end
return redis.call('INCR', KEYS[1])
`;

function randomStart(): string {
  return String(randomInt(1, EPOCH_SPAN));
}

/** `versions`: the versions kept in memory (left out: every read asks Redis, as bench/cluster.ts measures). */
export function spreadsheetCoordination(redis: Redis, key: string, settings: LeaseSettings, log: (message: string) => void, versions?: SharedVersions): SpreadsheetCoordination {
  const base = `sheetrest:sheet:${key}`;
  const versionKey = `${base}:version`;
  const leaseKey = `${base}:lease`;
  const fenceKey = `${base}:fence`;
  const { client } = redis;
  return {
    version() {
      const kept = versions?.kept(versionKey);
      if (kept !== undefined) return kept;
      const get = async () => {
        try {
          // A plain GET; the script only when the counter is missing.
          const value = await client.get(versionKey);
          return Number(value ?? (await evalScript(client, VERSION, [versionKey], [randomStart()])));
        } catch {
          return null;
        }
      };
      return versions === undefined ? get() : versions.fetched(versionKey, get);
    },
    async changed() {
      try {
        if (versions !== undefined) return await versions.bump(versionKey, randomStart());
        return Number(await evalScript(client, CHANGED, [versionKey], [randomStart()]));
      } catch (error) {
        log(`sheetrest: could not tell the other instances about a write to ${key} (${String(error)}); they see it once their freshness window ends`);
        return null;
      }
    },
    underLease: (step) => underLease(redis, { lease: leaseKey, fence: fenceKey }, settings, step, leaseBusy),
  };
}

function leaseBusy(leftMs: number): ApiError {
  const seconds = String(Math.max(1, Math.ceil(leftMs / 1000)));
  return apiError('upstream_unavailable', 'Another instance is writing to this spreadsheet and still holds its write lease; nothing was written, try again.', { 'Retry-After': seconds });
}
