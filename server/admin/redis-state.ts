// The admin API's state (docs/admin-api.md) kept in Redis when a store is configured, so that a
// connection or key made through one instance's `/_admin` is served by all of them and a key
// revoked on one stops working on all (docs/scaling.md). In place of admin.json:
// - `sheetrest:admin:state` holds `{"version":1,"revision":n,"connections":[...]}` (the same
//   connections admin.json would), and `sheetrest:admin:revision` its revision, both set by one
//   script that also publishes the revision on `sheetrest:admin:changed`;
// - a change is made under a lease (`sheetrest:admin:lease`), so two instances never both change
//   the state they read;
// - every instance applies a published revision, then says so on `sheetrest:admin:applied`; the
//   changing instance waits (up to ACK_WAIT_MS) until as many instances as received the message
//   have said so, so that a revoked key has stopped working everywhere before the revocation is
//   answered. A message missed (a dropped subscription) is caught up by asking for the revision
//   every POLL_MS, and at once when the subscription comes back.
// An instance out of touch (its revision check failing, or finding a revision it has not
// applied yet) for longer than `store.maxStaleMs` cannot tell whether a key was revoked
// meanwhile: `stale()` says so, and requests with keys answer 503 until it has caught up.
// A Redis restarted empty has lost the state the instances still serve: the first instance to
// notice saves what it serves again (re-seeding). The revision starts at a random number when
// missing, so a revision from before the restart does not come round again (an instance
// compares for equality, not order, and would otherwise take a new change for one it has).
import { randomBytes, randomInt } from 'node:crypto';
import * as v from 'valibot';
import { apiError, type ApiError } from '../../lib/errors.ts';
import type { Logger } from '../log.ts';
import { StoredConnectionSchema, type StoredConnection } from './store.ts';
import { underLease, type LeaseSettings } from '../redis/lease.ts';
import type { Redis, RedisClient } from '../redis/client.ts';

/** How often an instance asks for the revision, in case it missed a message. */
export const POLL_MS = 1_000;
/** How long a change waits for the other instances to say they applied it. */
export const ACK_WAIT_MS = 2_000;

const PREFIX = 'sheetrest:admin';
const CHANGED = `${PREFIX}:changed`;
const APPLIED = `${PREFIX}:applied`;

// KEYS: state, revision. ARGV: connections (JSON), channel, a random start. -> {revision, instances told}.
const SAVE = `
if redis.call('EXISTS', KEYS[2]) == 0 then redis.call('SET', KEYS[2], ARGV[3]) end
local revision = redis.call('INCR', KEYS[2])
-- '%d': concatenating the number would print it with 14 digits only (1.2291413071943e+14).
redis.call('SET', KEYS[1], '{"version":1,"revision":' .. string.format('%d', revision) .. ',"connections":' .. ARGV[1] .. '}')
local told = redis.call('PUBLISH', ARGV[2], revision)
return {revision, told}
`;

const StateSchema = v.object({ version: v.literal(1), revision: v.number(), connections: v.array(StoredConnectionSchema) });

export interface AdminSnapshot {
  readonly revision: number;
  readonly connections: StoredConnection[];
}

export interface SharedAdminState {
  /** The state now; revision 0 and no connections when none was ever saved. */
  load(): Promise<AdminSnapshot>;
  /**
   * The state at start. When Redis holds none yet, the connections of this instance's admin.json
   * (made before Redis was configured) become it; when it holds some, admin.json is left unused.
   */
  adopt(fromFile: readonly StoredConnection[]): Promise<AdminSnapshot>;
  /** Runs `change` holding the admin lease (503 when Redis is away or the lease is not had in time). */
  underLock<T>(change: () => Promise<T>): Promise<T>;
  /** Saves the connections (under the lock); the new revision and how many instances were told. */
  save(connections: readonly StoredConnection[]): Promise<{ revision: number; told: number }>;
  /** Resolves once `told` instances said they applied `revision`, or after ACK_WAIT_MS (logged). */
  applied(revision: number, told: number): Promise<void>;
  /**
   * Null while this instance has caught up with Redis within the last `maxStaleMs` (as of its
   * last revision check that found it current); else the 503 requests with keys answer.
   */
  stale(): ApiError | null;
  /** One revision check (the one `follow` runs every POLL_MS): catches up when behind. */
  check(): Promise<void>;
  /**
   * Calls `apply(snapshot)` whenever the revision in Redis is not `current().revision`, then
   * tells the instance that made the change; re-seeds a Redis that lost the state with
   * `current()`. Returns when subscribed.
   */
  follow(current: () => AdminSnapshot, apply: (snapshot: AdminSnapshot) => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

export interface FreshnessSettings {
  /** How long since the last check that found this instance current before `stale()` refuses. */
  readonly maxStaleMs: number;
  /** The clock (tests inject one). */
  readonly now?: () => number;
}

export function sharedAdminState(redis: Redis, lease: LeaseSettings, log: Logger, freshness: FreshnessSettings = { maxStaleMs: Infinity }): SharedAdminState {
  const { client } = redis;
  const now = freshness.now ?? Date.now;
  /** When the last revision check that found this instance current (or brought it there) was sent. */
  let caughtUpAt = now();
  let staleLogged = false;
  const caughtUp = (asked: number) => {
    if (asked <= caughtUpAt) return;
    caughtUpAt = asked;
    if (staleLogged) log.warn('caught up with the admin API\'s state in Redis again: requests with keys are served', {});
    staleLogged = false;
  };
  let check: () => Promise<void> = () => Promise.resolve();
  const me = randomBytes(6).toString('hex');
  let subscriber: RedisClient | undefined;
  let poll: ReturnType<typeof setInterval> | undefined;
  /** Per revision, the instances that said they applied it (kept for the last few). */
  const acks = new Map<number, Set<string>>();
  const waiters = new Set<() => void>();

  const load = async (): Promise<AdminSnapshot> => {
    const text = await client.get(`${PREFIX}:state`);
    if (text === null) return { revision: 0, connections: [] };
    const parsed = v.safeParse(StateSchema, JSON.parse(text));
    if (!parsed.success) throw new Error(`the admin API's state in Redis (${PREFIX}:state) is damaged (${parsed.issues[0].message}); restore it, or delete it to start without the connections the admin API created`);
    return { revision: parsed.output.revision, connections: parsed.output.connections };
  };

  const heard = (revision: number, instance: string) => {
    const set = acks.get(revision) ?? new Set<string>();
    set.add(instance);
    acks.set(revision, set);
    for (const old of acks.keys()) if (old < revision - 100) acks.delete(old);
    for (const wake of waiters) wake();
  };

  const underLock = <T>(change: () => Promise<T>): Promise<T> => underLease(redis, { lease: `${PREFIX}:lease`, fence: `${PREFIX}:fence` }, lease, () => change(), adminBusy, 'The change was not made');
  const save = async (connections: readonly StoredConnection[]) => {
    const reply = (await client.eval(SAVE, { keys: [`${PREFIX}:state`, `${PREFIX}:revision`], arguments: [JSON.stringify(connections), CHANGED, String(randomInt(1, 2 ** 47))] })) as [number, number];
    return { revision: Number(reply[0]), told: Number(reply[1]) };
  };

  return {
    load,
    adopt: (fromFile) => underLock(async () => {
      const current = await load();
      if (fromFile.length === 0) return current;
      if (current.revision > 0) {
        log.warn('the admin API\'s state is in Redis; admin.json in the state folder is not used', { connections: fromFile.length });
        return current;
      }
      const { revision } = await save(fromFile);
      log.info('the connections of admin.json are now kept in Redis, shared by every instance', { connections: fromFile.length });
      return { revision, connections: [...fromFile] };
    }),
    underLock,
    save,
    applied(revision, told) {
      return new Promise((resolve) => {
        const check = () => {
          if ((acks.get(revision)?.size ?? 0) < told) return;
          done();
        };
        const timer = setTimeout(() => {
          log.warn('not every instance said it applied an admin change in time; a stalled one applies it when it next asks Redis', { revision, told, applied: acks.get(revision)?.size ?? 0 });
          done();
        }, ACK_WAIT_MS);
        const done = () => {
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
        check();
      });
    },
    stale() {
      const away = now() - caughtUpAt;
      if (away <= freshness.maxStaleMs) return null;
      if (!staleLogged) log.error('out of touch with the admin API\'s state in Redis: requests with keys answer 503 until caught up', { awayMs: away, maxStaleMs: freshness.maxStaleMs });
      staleLogged = true;
      return apiError(
        'upstream_unavailable',
        `This server has not reached the shared store (Redis) for ${Math.floor(away / 1000)} s, so it cannot tell whether API keys were revoked meanwhile: requests with keys are refused until it is back in touch.`,
        { 'Retry-After': '1' },
      );
    },
    check: () => check(),
    async follow(current, apply) {
      // One catch-up at a time; a second request while one runs runs once more after it.
      let running: Promise<void> | null = null;
      let again = false;
      // Redis lost the state (restarted empty): save what this instance serves, unless another did.
      const reseed = (mine: AdminSnapshot) => underLock(async () => {
        if ((await load()).revision !== 0) return;
        const { revision } = await save(mine.connections);
        log.warn('the admin API\'s state was missing in Redis (restarted empty?); saved again from what this instance serves', { connections: mine.connections.length });
        await apply({ revision, connections: mine.connections });
      });
      const catchUp = (): Promise<void> => {
        if (running !== null) {
          again = true;
          return running;
        }
        running = (async () => {
          do {
            again = false;
            try {
              const asked = now();
              const snapshot = await load();
              const mine = current();
              if (snapshot.revision !== mine.revision) {
                if (snapshot.revision === 0 && mine.revision !== 0) await reseed(mine);
                else await apply(snapshot);
              }
              caughtUp(asked);
            } catch (error) {
              log.error('could not apply the admin API\'s state from Redis; trying again shortly', { error: String(error) });
            }
          } while (again);
        })().finally(() => {
          running = null;
        });
        return running;
      };
      const sub = client.duplicate() as RedisClient;
      sub.on('error', () => undefined);
      // Back after a dropped subscription: messages may have been missed meanwhile.
      sub.on('ready', () => void catchUp());
      await sub.connect();
      subscriber = sub;
      await sub.subscribe(CHANGED, (message: string) => {
        const revision = Number(message);
        const ack = () => void client.publish(APPLIED, `${revision} ${me}`).catch(() => undefined);
        if (revision === current().revision) ack();
        else void catchUp().then(ack);
      });
      await sub.subscribe(APPLIED, (message: string) => {
        const [revision, instance] = message.split(' ');
        heard(Number(revision), instance);
      });
      check = async () => {
        const asked = now();
        let value: string | null;
        try {
          value = await client.get(`${PREFIX}:revision`);
        } catch {
          return;
        }
        if (Number(value ?? 0) === current().revision) caughtUp(asked);
        else await catchUp();
      };
      poll = setInterval(() => void check(), POLL_MS);
      poll.unref?.();
    },
    async close() {
      if (poll !== undefined) clearInterval(poll);
      await subscriber?.close().catch(() => subscriber?.destroy());
    },
  };
}

function adminBusy(leftMs: number): ApiError {
  const seconds = String(Math.max(1, Math.ceil(leftMs / 1000)));
  return apiError('upstream_unavailable', 'Another instance is changing the admin API\'s state; nothing was changed, try again.', { 'Retry-After': seconds });
}
