// A Google connection's Idempotency-Keys in Redis when several instances share it: a retry of
// `POST /sheets/crm` with `Idempotency-Key: order-17` that reaches another instance gets the
// stored answer, a retry sent while the first try runs elsewhere waits for it, and no Redis
// fault makes a key write twice. idempotency.ts drives it as it drives the state folder's store:
// `exclusive` claims the key (or finds its receipt), `get` answers from that, `save` stores one.
//
// Per key (`<caller>:<Idempotency-Key>`, the caller naming the API key, server/idempotency/idempotency.ts):
// - `sheetrest:idem:<connection>:<key>` holds the receipt, or, while a try runs, a marker
//   `{"running":"<attempt>"}`. The marker is set, in the same script that finds no receipt,
//   before the write runs, and lives as long as the key may be retried (24 h): it stays until
//   the receipt replaces it or the try ends undecided (nothing kept, so a retry may run again);
// - `...:<key>:lease` holds the attempt while its instance works on it, renewed every third of
//   `leaseMs`: a retry finding the marker and the lease waits for the first try (up to
//   `leaseWaitMs`, then 409 `conflict`); a retry finding the marker without a lease answers 409
//   `conflict` at once: the try was cut off (its instance lost Redis, or stopped) and whether it
//   wrote is not known here. Never a second write.
// What Redis must still learn (a receipt to store, a marker to take back: a claim that failed
// may still be applied late) is kept in memory and sent again every RETRY_MS until Redis takes
// it; meanwhile this instance answers a retry of that key from memory. With Redis's append-only
// file, a restart keeps markers and receipts; restarted empty, Redis has forgotten the keys it
// held (docs/scaling.md), and this instance stores the receipts it still holds again.
// A file connection keeps its keys in the state folder: a file is served by one instance only.
import { randomBytes } from 'node:crypto';
import { apiError, type ApiError } from '../../lib/errors.ts';
import { KEY_TTL_MS } from './file-store.ts';
import type { KeyStoreLike } from './idempotency.ts';
import type { Receipt } from '../sources/source.ts';
import type { LeaseSettings } from '../redis/lease.ts';
import { neverSent, type Redis } from '../redis/client.ts';
import { redisUnavailable } from '../redis/unavailable.ts';

/** How often what Redis must still learn is sent again. */
const RETRY_MS = 250;
/** How often a retry looks again at a try running elsewhere. */
const POLL_MS = 5;

// KEYS: record, lease. ARGV: attempt, lease ms, marker ms.
// -> {'receipt', text} | {'busy', lease ms left} | {'cut', ''} (a marker, no lease) | {'claimed', ''}
const CLAIM = `
local record = redis.call('GET', KEYS[1])
if record and string.sub(record, 1, 11) ~= '{"running":' then return {'receipt', record} end
local left = redis.call('PTTL', KEYS[2])
if left ~= -2 then return {'busy', tostring(left)} end
if record then return {'cut', ''} end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
redis.call('SET', KEYS[1], '{"running":"' .. ARGV[1] .. '"}', 'PX', ARGV[3])
return {'claimed', ''}
`;
// KEYS: lease. ARGV: attempt, lease ms.
const RENEW = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;
// KEYS: record, lease. ARGV: attempt, receipt ('' for none), receipt ms.
// A receipt replaces the attempt's marker (or nothing: Redis restarted empty); without one the
// marker goes. Another attempt's marker or receipt is left as it is; the lease goes if ours.
const SETTLE = `
local record = redis.call('GET', KEYS[1])
local mine = record == '{"running":"' .. ARGV[1] .. '"}'
if ARGV[2] ~= '' then
  if (not record or mine) and tonumber(ARGV[3]) > 0 then redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
elseif mine then
  redis.call('DEL', KEYS[1])
end
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1
`;

/** What Redis must still learn about a key: the end of `attempt`, with its receipt if kept. */
interface Unsettled {
  readonly key: string;
  readonly attempt: string;
  readonly receipt?: Receipt;
}

export interface RedisKeyStoreOptions {
  readonly log?: (message: string) => void;
  readonly now?: () => number;
}

export function redisKeyStore(redis: Redis, connectionId: string, settings: LeaseSettings, options: RedisKeyStoreOptions = {}): KeyStoreLike {
  const base = `sheetrest:idem:${connectionId}:`;
  const now = options.now ?? Date.now;
  const log = options.log ?? (() => undefined);
  const keysOf = (key: string) => [`${base}${key}`, `${base}${key}:lease`];
  // The receipt found by `exclusive` for the section running now under each key.
  const fetched = new Map<string, Receipt | undefined>();
  // The attempt each running section holds, so that `save` knows which marker it replaces.
  const attempts = new Map<string, { readonly attempt: string; saved: boolean }>();
  // By attempt: several attempts on one key may each have something to take back.
  const unsettled = new Map<string, Unsettled>();
  // By key: the receipts among them, which answer retries here until Redis holds them.
  const held = new Map<string, Unsettled>();
  let retrying: ReturnType<typeof setTimeout> | undefined;
  let flushing: Promise<void> | null = null;

  const settle = async (item: Unsettled): Promise<void> => {
    const left = item.receipt === undefined ? 0 : item.receipt.at + KEY_TTL_MS - now();
    await redis.client.eval(SETTLE, { keys: keysOf(item.key), arguments: [item.attempt, item.receipt === undefined ? '' : JSON.stringify(item.receipt), String(Math.max(0, Math.floor(left)))] });
    unsettled.delete(item.attempt);
    if (held.get(item.key) === item) held.delete(item.key);
  };
  /** Sends what Redis must still learn, oldest first, stopping at the first failure (Redis still away). */
  const flush = (): Promise<void> =>
    (flushing ??= (async () => {
      try {
        for (const item of [...unsettled.values()]) await settle(item);
      } catch {
        // Still away: the next round tries again.
      } finally {
        flushing = null;
        if (unsettled.size > 0) later();
      }
    })());
  const later = () => {
    if (retrying !== undefined) return;
    retrying = setTimeout(() => {
      retrying = undefined;
      void flush();
    }, RETRY_MS);
    retrying.unref?.();
  };
  const remember = (item: Unsettled) => {
    unsettled.set(item.attempt, item);
    if (item.receipt !== undefined) held.set(item.key, item);
  };

  /** The key's claim in Redis, waiting while a try runs elsewhere; the receipt when there is one. */
  const claim = async (key: string, attempt: string): Promise<{ receipt: Receipt | undefined }> => {
    const deadline = performance.now() + settings.leaseWaitMs;
    for (;;) {
      let reply: [string, string];
      try {
        reply = (await redis.client.eval(CLAIM, { keys: keysOf(key), arguments: [attempt, String(settings.leaseMs), String(KEY_TTL_MS)] })) as [string, string];
      } catch (error) {
        // Perhaps applied, or applied late (a paused Redis going on): take it back once Redis answers.
        if (!neverSent(error)) {
          remember({ key, attempt });
          later();
        }
        throw redisUnavailable('Writes with an Idempotency-Key are paused');
      }
      const [outcome, detail] = reply.map(String);
      if (outcome === 'claimed') return { receipt: undefined };
      if (outcome === 'receipt') return { receipt: JSON.parse(detail) as Receipt };
      // Ours, not yet stored (this instance lost Redis after the write): answered from memory.
      const mine = held.get(key)?.receipt;
      if (mine !== undefined) return { receipt: mine };
      // Perhaps a claim of ours that landed late: once taken back, the key is free.
      if (performance.now() < deadline && [...unsettled.values()].some((item) => item.key === key)) {
        await flush();
        continue;
      }
      if (outcome === 'cut') throw cutOff();
      const waitLeft = deadline - performance.now();
      if (waitLeft <= 0) throw stillRunning(Number(detail));
      await sleep(Math.min(waitLeft, POLL_MS + Math.random() * POLL_MS));
    }
  };

  return {
    path: `Redis ${redis.shown}`,
    now,
    get: (key) => held.get(key)?.receipt ?? fetched.get(key),
    async exclusive(key, section) {
      const pending = held.get(key);
      if (pending !== undefined) {
        await settle(pending).catch(() => undefined);
        const kept = held.get(key)?.receipt;
        // Redis still away: a receipt this instance holds answers the retry all the same.
        if (kept !== undefined) {
          fetched.set(key, kept);
          try {
            return await section();
          } finally {
            fetched.delete(key);
          }
        }
      }
      const attempt = randomBytes(9).toString('base64url');
      const { receipt } = await claim(key, attempt);
      if (receipt !== undefined) {
        fetched.set(key, receipt);
        try {
          return await section();
        } finally {
          fetched.delete(key);
        }
      }
      // Claimed: the lease says the try is alive while it runs.
      const renew = setInterval(() => {
        void redis.client.eval(RENEW, { keys: [keysOf(key)[1]], arguments: [attempt, String(settings.leaseMs)] }).catch(() => undefined);
      }, Math.max(10, Math.floor(settings.leaseMs / 3)));
      const running = { attempt, saved: false };
      fetched.set(key, undefined);
      attempts.set(key, running);
      try {
        return await section();
      } finally {
        clearInterval(renew);
        fetched.delete(key);
        attempts.delete(key);
        // No receipt kept (an undecided answer, or a throw): the marker goes, so a retry runs.
        if (!running.saved) {
          const item = { key, attempt };
          remember(item);
          await settle(item).catch(() => later());
        }
      }
    },
    /** Rejects when Redis did not take it now; it is kept in memory and sent again until it does. */
    async save(receipt) {
      const running = attempts.get(receipt.key);
      if (running === undefined) return;
      running.saved = true;
      const item = { key: receipt.key, attempt: running.attempt, receipt };
      remember(item);
      try {
        await settle(item);
      } catch (error) {
        later();
        throw error;
      }
    },
    async close() {
      if (retrying !== undefined) clearTimeout(retrying);
      retrying = undefined;
      if (unsettled.size > 0) await flush();
      if (retrying !== undefined) clearTimeout(retrying);
      const left = held.size;
      if (left > 0) log(`sheetrest: ${left} Idempotency-Key answer(s) of ${connectionId} could not be stored in Redis before stopping; retries of those keys answer 409 conflict until they expire`);
    },
  };
}

function stillRunning(leftMs: number): ApiError {
  const seconds = String(Math.max(1, Math.ceil(leftMs / 1000)));
  return apiError('conflict', 'A request with this Idempotency-Key is still running on another instance; send the retry again in a moment.', { 'Retry-After': seconds });
}

function cutOff(): ApiError {
  return apiError(
    'conflict',
    'The first request with this Idempotency-Key was cut off before its answer was stored (its instance lost the shared store, or stopped), so whether it was written is not known: a retry gets its answer once that instance stores it; if none comes, check the rows and send a new key.',
    { 'Retry-After': '1' },
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
