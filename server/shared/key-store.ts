// A Google connection's Idempotency-Keys in Redis when several instances share it: a retry of
// `POST /sheets/crm` with `Idempotency-Key: order-17` that reaches another instance gets the
// stored answer, and a retry sent while the first try runs elsewhere waits for it (a lease per
// key). One key per receipt, `sheetrest:idem:<connection>:<caller>:<key>` (the caller names the
// API key, server/idempotency.ts), expiring 24 h after the key's first use. idempotency.ts
// drives it as it drives the state folder's store: `exclusive` takes the key's lease and
// fetches its receipt, `get` answers from that, `save` stores one.
// A file connection keeps its keys in the state folder: a file is served by one instance only.
import { apiError, type ApiError } from '../../lib/errors.ts';
import { KEY_TTL_MS } from '../idempotency-store.ts';
import type { KeyStoreLike } from '../idempotency.ts';
import type { Receipt } from '../sources/source.ts';
import { underLease, type LeaseSettings } from './lease.ts';
import type { Redis } from './redis.ts';
import { redisUnavailable } from './unavailable.ts';

export function redisKeyStore(redis: Redis, connectionId: string, settings: LeaseSettings, now: () => number = Date.now): KeyStoreLike {
  const base = `sheetrest:idem:${connectionId}:`;
  // The receipt fetched by `exclusive` for the section running now under each key.
  const fetched = new Map<string, Receipt | undefined>();
  return {
    path: `Redis ${redis.shown}`,
    now,
    get: (key) => fetched.get(key),
    async exclusive(key, section) {
      const keys = { lease: `${base}${key}:lease`, fence: `${base}${key}:fence` };
      return underLease(redis, keys, settings, async () => {
        let text: string | null;
        try {
          text = await redis.client.get(`${base}${key}`);
        } catch {
          throw redisUnavailable('Writes with an Idempotency-Key are paused');
        }
        fetched.set(key, text === null ? undefined : (JSON.parse(text) as Receipt));
        try {
          return await section();
        } finally {
          fetched.delete(key);
          // The lease's fencing counter lives as long as the key may be retried (not deleted:
          // a counter starting again could hand a new holder the token of an old one).
          await redis.client.pExpire(keys.fence, KEY_TTL_MS).catch(() => undefined);
        }
      }, keyBusy);
    },
    async save(receipt) {
      fetched.set(receipt.key, receipt);
      const left = receipt.at + KEY_TTL_MS - now();
      if (left <= 0) return;
      await redis.client.set(`${base}${receipt.key}`, JSON.stringify(receipt), { PX: left });
    },
    close: () => Promise.resolve(),
  };
}

function keyBusy(leftMs: number): ApiError {
  const seconds = String(Math.max(1, Math.ceil(leftMs / 1000)));
  return apiError('upstream_unavailable', 'A request with this Idempotency-Key is still running on another instance; send the retry again in a moment.', { 'Retry-After': seconds });
}
