// Every Google spreadsheet's shared version (server/sources/google/shared-spreadsheet.ts) kept in this
// instance's memory, so that a cached read asks Redis for nothing, while a `POST` on instance A
// is still seen by the very next `GET` on B (read-your-writes across instances, docs/scaling.md).
//
// The construction:
// - Each instance subscribes to `sheetrest:sheet:changed` and, while subscribed, keeps itself in
//   the set of followers (`sheetrest:sheet:followers`, a sorted set: instance -> until when, on
//   Redis's clock), renewing every RENEW_MS for TRUST_MS. It trusts what it keeps only until
//   TRUST_MS after it *sent* its last renewal that Redis confirmed, and only once the subscriber
//   answered a PING sent after that renewal (so every message published before the renewal has
//   been applied): never past the time Redis holds it as a follower.
// - A write bumps the counter, lists the followers still registered and publishes
//   `<writer> <seq> <version> <version key>`, all in one script. It answers only once every follower
//   listed has said it applied the message (on `sheetrest:sheet:applied:<writer>`), or, for one
//   that does not say so (stalled, cut off), once its registration has run out: by then it no
//   longer trusts what it keeps, and asks Redis per read.
// - Trust is lost at once when the subscription drops (and the instance leaves the set, so that
//   writes do not wait for it). Regained: registered again first, then everything kept is
//   forgotten (a message may have been missed meanwhile), then trusted; a read of a spreadsheet
//   not kept asks Redis (one GET) and keeps the answer, unless a message about that spreadsheet
//   came in while the GET was on its way (the message is then the later word).
// So a read that begins after a write was answered, on an instance that trusts what it keeps,
// finds that write's version or a later one: the instance was a follower when the write was
// published (it registered before it trusted), so the write waited for its word.
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../../log.ts';
import type { Redis, RedisClient } from '../../redis/client.ts';

/** How long a follower's registration lasts, and so the longest a write waits for a silent one. */
export const TRUST_MS = 2_000;
/** How often a follower renews its registration: three chances before it runs out. */
export const RENEW_MS = 500;
/** Redis holds a follower registered a little longer than it trusts itself, for clocks that drift. */
const CLOCK_MARGIN_MS = 50;

const PREFIX = 'sheetrest:sheet';
const CHANGED = `${PREFIX}:changed`;
const FOLLOWERS = `${PREFIX}:followers`;
const appliedChannel = (instance: string) => `${PREFIX}:applied:${instance}`;

// Redis's clock in ms, for scripts (TIME is allowed before writes: Redis 7 replicates effects).
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;
// KEYS: followers. ARGV: instance, ms registered.
const REGISTER = `${NOW}
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[1])
return 1`;
// KEYS: version, followers. ARGV: a random start, channel, "<writer> <seq>".
// -> {version, follower, ms left, follower, ms left, ...}
const BUMP = `
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SET', KEYS[1], ARGV[1]) end
local version = redis.call('INCR', KEYS[1])
${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local followers = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. now, '+inf', 'WITHSCORES')
redis.call('PUBLISH', ARGV[2], ARGV[3] .. ' ' .. string.format('%d', version) .. ' ' .. KEYS[1])
local out = {version}
for i = 1, #followers, 2 do
  out[#out + 1] = followers[i]
  out[#out + 1] = tonumber(followers[i + 1]) - now
end
return out`;

export interface VersionOptions {
  readonly redis: Redis;
  readonly log: Logger;
  /** This instance's clock for its trust (ms, monotonic); tests pass one that stands still. */
  readonly now?: () => number;
}

export interface SharedVersions {
  /**
   * The spreadsheet's version as kept here, when this instance trusts what it keeps; otherwise
   * undefined, and `fetched` is to be asked for it.
   */
  kept(versionKey: string): number | undefined;
  /** Asks Redis with `get`, keeping the answer unless a message came in meanwhile; null when Redis cannot say. */
  fetched(versionKey: string, get: () => Promise<number | null>): Promise<number | null>;
  /**
   * Bumps the counter at `versionKey` (set to `start` when missing) and tells every follower;
   * resolves with the new version once each has applied it, or its registration ran out.
   */
  bump(versionKey: string, start: string): Promise<number>;
  /** Whether reads are served from what is kept now (subscribed, registered, caught up). */
  trusted(): boolean;
  /** This instance's name among the followers. */
  readonly instance: string;
  close(): Promise<void>;
}

/** Subscribes and registers (resolving when done); a subscription that drops later is taken up again by itself. */
export async function openSharedVersions(options: VersionOptions): Promise<SharedVersions> {
  const { redis, log } = options;
  const now = options.now ?? (() => performance.now());
  const { client } = redis;
  const me = randomBytes(6).toString('hex');
  /** Versions as kept here; forgotten when trust is regained. */
  const known = new Map<string, number>();
  /** Per spreadsheet, messages applied so far: a GET answered after one came in is not kept. */
  const stamps = new Map<string, number>();
  /** How many times `known` was forgotten, for the same reason. */
  let forgotten = 0;
  /** Trusted until (this instance's clock); -Infinity while not. */
  let trustedUntil = Number.NEGATIVE_INFINITY;
  /** Counts drops of the subscription: a renewal begun before one does not restore trust. */
  let session = 0;
  let subscribed = false;
  let closed = false;
  let renewing = false;
  let seq = 0;
  /** Writes of this instance waiting for the followers' word: seq -> who said they applied it. */
  const waiting = new Map<number, { readonly acked: Set<string>; check: () => void }>();

  const lapse = () => {
    session++;
    subscribed = false;
    if (trustedUntil === Number.NEGATIVE_INFINITY) return;
    trustedUntil = Number.NEGATIVE_INFINITY;
    log.warn('the spreadsheet versions\' subscription to redis dropped; reads ask redis for the version until it is back', { redis: redis.shown });
    // Writes need not wait for an instance that no longer trusts what it keeps.
    void client.zRem(FOLLOWERS, me).catch(() => undefined);
  };

  const renew = async (): Promise<void> => {
    if (renewing || closed || !subscribed) return;
    renewing = true;
    const began = session;
    const sent = now();
    try {
      // Registered first, then the PING through the subscriber, whose answer comes after every
      // message published before it: a write published before the registration reached Redis
      // did not wait for this instance, but its message is applied before trust is (re)gained.
      await withDeadline((async () => {
        await evalScript(client, REGISTER, [FOLLOWERS], [me, String(TRUST_MS + CLOCK_MARGIN_MS)]);
        await sub.ping();
      })(), TRUST_MS);
      if (began !== session || closed) return;
      if (trustedUntil === Number.NEGATIVE_INFINITY) {
        // Registered again: a message may have been missed meanwhile, so nothing kept is trusted.
        known.clear();
        forgotten++;
        log.info('spreadsheet versions are kept in memory, told of changes through redis', { redis: redis.shown });
      }
      trustedUntil = sent + TRUST_MS;
    } catch {
      // Trust runs out by itself at trustedUntil; the next renewal tries again.
    } finally {
      renewing = false;
    }
  };

  const onChanged = (message: string) => {
    // "<writer> <seq> <version> <version key>"; the key (holding the root URL, a space, the id) goes last.
    const [writer, seqText, versionText] = message.split(' ', 3);
    const key = message.slice(writer.length + seqText.length + versionText.length + 3);
    known.set(key, Number(versionText));
    stamps.set(key, (stamps.get(key) ?? 0) + 1);
    if (writer === me) heard(Number(seqText), me);
    else void client.publish(appliedChannel(writer), `${seqText} ${me}`).catch(() => undefined);
  };

  const heard = (write: number, instance: string) => {
    const entry = waiting.get(write);
    if (entry === undefined) return;
    entry.acked.add(instance);
    entry.check();
  };

  const sub = client.duplicate({ name: `sheetrest-versions-${me}` }) as RedisClient;
  sub.on('error', lapse);
  sub.on('end', lapse);
  sub.on('reconnecting', lapse);
  await sub.connect();
  try {
    await sub.subscribe(CHANGED, onChanged);
    await sub.subscribe(appliedChannel(me), (message: string) => {
      const [write, instance] = message.split(' ');
      heard(Number(write), instance);
    });
  } catch (error) {
    sub.destroy();
    throw error;
  }
  // Back after a drop: node-redis has subscribed again by the time it says 'ready'.
  sub.on('ready', () => {
    subscribed = true;
    void renew();
  });
  subscribed = true;
  await renew();
  const timer = setInterval(() => void renew(), RENEW_MS);
  timer.unref?.();

  return {
    instance: me,
    kept(key) {
      if (!subscribed || now() >= trustedUntil) return undefined;
      return known.get(key);
    },
    async fetched(key, get) {
      const [stamp, clears] = [stamps.get(key) ?? 0, forgotten];
      const version = await get();
      if (version !== null && clears === forgotten && (stamps.get(key) ?? 0) === stamp) known.set(key, version);
      return version;
    },
    async bump(versionKey, start) {
      const write = ++seq;
      const acked = new Set<string>();
      // Listening before sending: a follower's word can come before the script's answer.
      const entry = { acked, check: () => undefined as void };
      waiting.set(write, entry);
      try {
        const reply = (await evalScript(client, BUMP, [versionKey, FOLLOWERS], [start, CHANGED, `${me} ${write}`])) as (string | number)[];
        const answeredAt = performance.now();
        const version = Number(reply[0]);
        const deadlines = new Map<string, number>();
        for (let i = 1; i + 1 < reply.length; i += 2) deadlines.set(String(reply[i]), answeredAt + Number(reply[i + 1]));
        await new Promise<void>((resolve) => {
          let timer: ReturnType<typeof setTimeout> | undefined;
          entry.check = () => {
            const at = performance.now();
            const silent = [...deadlines].filter(([instance, until]) => !acked.has(instance) && until > at);
            if (timer !== undefined) clearTimeout(timer);
            if (silent.length === 0) {
              const missed = [...deadlines.keys()].filter((instance) => !acked.has(instance));
              if (missed.length > 0) log.warn('an instance did not say it applied a write in time; the write was answered once its registration ran out (it asks redis per read until it is back)', { instances: missed.join(' ') });
              resolve();
              return;
            }
            timer = setTimeout(entry.check, Math.max(...silent.map(([, until]) => until)) - at + 1);
          };
          entry.check();
        });
        return version;
      } finally {
        waiting.delete(write);
      }
    },
    trusted: () => subscribed && now() < trustedUntil,
    async close() {
      closed = true;
      clearInterval(timer);
      trustedUntil = Number.NEGATIVE_INFINITY;
      await client.zRem(FOLLOWERS, me).catch(() => undefined);
      await sub.close().catch(() => sub.destroy());
    },
  };
}

/** Rejects when `promise` has not settled within `ms`. */
function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Runs a script by its digest, sending it whole only when Redis does not know it (at first, and after a restart). */
export async function evalScript(client: RedisClient, script: string, keys: string[], args: string[]): Promise<unknown> {
  const sha = digests.get(script) ?? createHash('sha1').update(script).digest('hex');
  digests.set(script, sha);
  const options = { keys, arguments: args };
  try {
    return await client.evalSha(sha, options);
  } catch (error) {
    if (!String(error).includes('NOSCRIPT')) throw error;
    return await client.eval(script, options);
  }
}
const digests = new Map<string, string>();
