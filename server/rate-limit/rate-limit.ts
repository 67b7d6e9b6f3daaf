// Short-window rate limits of a billing plan: `"rateLimit": {"requests": 60, "perSeconds": 10}`
// -> the 61st `GET /sheets/demo` of one key within a 10-second window gets 429 `rate_limited`
// with `Retry-After: 4` (the seconds left of the window), and every answer on that plan carries
// the IETF httpapi draft's fields (draft-ietf-httpapi-ratelimit-headers-10/-11):
//   RateLimit-Policy: "burst";q=60;w=10     the plan's name, its quota and window
//   RateLimit: "burst";r=12;t=4             what is left of this window, and its seconds to go
// Counted per caller: a key (its digest's start, server/auth.ts), or on an open connection the
// client's address. Fixed windows aligned to the epoch (docs/decisions.md, "Rate limits: fixed
// windows"): within a window the count is exact, also shared through Redis (redis-limiter.ts).
// A refused request is not counted, here or against the monthly quota (it never reaches it).
import { apiError, type ApiError } from '../../lib/errors.ts';

export interface RateLimit {
  readonly requests: number;
  readonly perSeconds: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  /** `RateLimit-Policy` and `RateLimit` (and `Retry-After` on a refusal). */
  readonly headers: Readonly<Record<string, string>>;
  /** 429 `rate_limited`, or 503 while the shared store is away. */
  readonly error?: ApiError;
}

/** One decision per request of a connection whose plan has a rate limit. */
export interface RateLimiter {
  take(connectionId: string, caller: string, planName: string, limit: RateLimit): RateDecision | Promise<RateDecision>;
  close?(): Promise<void>;
}

/** The window a moment falls in: its number and the milliseconds left of it. */
export function windowAt(nowMs: number, limit: RateLimit): { readonly index: number; readonly msLeft: number } {
  const windowMs = limit.perSeconds * 1000;
  const index = Math.floor(nowMs / windowMs);
  return { index, msLeft: (index + 1) * windowMs - nowMs };
}

/**
 * The decision on one request given the window's count before it (`used`) and the
 * milliseconds left of the window. Shared by the memory limiter and the Redis one.
 */
export function decideRate(planName: string, limit: RateLimit, used: number, msLeft: number): RateDecision {
  const { name, policy } = policyOf(planName, limit);
  // Whole seconds, rounded up: a client waiting `t` seconds is never early.
  const seconds = Math.max(1, Math.ceil(msLeft / 1000));
  const allowed = used < limit.requests;
  const remaining = allowed ? limit.requests - used - 1 : 0;
  const headers: Record<string, string> = { 'RateLimit-Policy': policy, RateLimit: `${name};r=${remaining};t=${seconds}` };
  if (allowed) return { allowed, headers };
  headers['Retry-After'] = String(seconds);
  const error = apiError('rate_limited', `The plan "${planName}" allows ${limit.requests} requests per ${limit.perSeconds} s for each key (or client address); try again in ${seconds} s.`, { 'Retry-After': String(seconds) });
  return { allowed, headers, error };
}

/**
 * The policy's name, the plan's as a Structured Fields string (RFC 8941: printable ASCII, `"`
 * and `\` escaped; a name with other characters is `"plan"`), and its `RateLimit-Policy` value:
 * made once per plan's limit object.
 */
function policyOf(planName: string, limit: RateLimit): { readonly name: string; readonly policy: string } {
  let made = policies.get(limit);
  if (made === undefined || made.planName !== planName) {
    const name = /^[\x20-\x7e]+$/.test(planName) ? `"${planName.replace(/[\\"]/g, (char) => `\\${char}`)}"` : '"plan"';
    made = { planName, name, policy: `${name};q=${limit.requests};w=${limit.perSeconds}` };
    policies.set(limit, made);
  }
  return made;
}

const policies = new WeakMap<RateLimit, { readonly planName: string; readonly name: string; readonly policy: string }>();

export interface MemoryLimiterOptions {
  /** The clock (ms since the epoch), injectable for tests. */
  readonly now?: () => number;
  /** Callers kept before the windows that have ended are dropped (default 100,000). */
  readonly maxCallers?: number;
}

/** One instance's counts, in memory: what a server without Redis uses. */
export function memoryRateLimiter(options: MemoryLimiterOptions = {}): RateLimiter {
  const now = options.now ?? Date.now;
  const maxCallers = options.maxCallers ?? 100_000;
  // Connection -> caller -> its window's count: no key string is built per request.
  const connections = new Map<string, Map<string, { window: number; count: number; ends: number }>>();
  let callers = 0;
  return {
    take(connectionId, caller, planName, limit) {
      const at = now();
      const { index, msLeft } = windowAt(at, limit);
      let counts = connections.get(connectionId);
      if (counts === undefined) connections.set(connectionId, (counts = new Map()));
      let entry = counts.get(caller);
      if (entry === undefined || entry.window !== index) {
        if (entry === undefined && ++callers > maxCallers) {
          for (const each of connections.values()) {
            for (const [old, kept] of each) if (kept.ends <= at) each.delete(old);
          }
          callers = [...connections.values()].reduce((sum, each) => sum + each.size, 0) + 1;
        }
        entry = { window: index, count: 0, ends: at + msLeft };
        counts.set(caller, entry);
      }
      const decision = decideRate(planName, limit, entry.count, msLeft);
      if (decision.allowed) entry.count++;
      return decision;
    },
  };
}
