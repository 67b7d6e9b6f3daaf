// Google's per-minute request quotas, kept on this side: every Sheets API request of every
// connection signed in as the same user (a service account, an OAuth user, a token) takes a slot
// from that user's budget and from its project's, reads and writes apart, so sheetrest waits, or
// answers 503 with Retry-After, before Google would answer 429. With 60 reads a minute per user,
// the 61st read within a minute waits until the first is a minute old (or, if that is further
// off than `maxWaitMs`, is answered 503 `upstream_unavailable`, Retry-After: the seconds to go).
//
// A rolling minute, not a refilling bucket: a bucket holding a minute's worth that refills at
// the same rate lets twice the limit through in one minute (a full bucket, then its refill),
// which Google would refuse. Here no window of a minute ever holds more than the limit: slot n
// goes no sooner than a minute after slot n - limit. Slots are handed out in arrival order.

export interface QuotaLimits {
  readonly readsPerMinutePerUser: number;
  readonly writesPerMinutePerUser: number;
  readonly readsPerMinutePerProject: number;
  readonly writesPerMinutePerProject: number;
  /** The longest a request waits for a slot; past that it is answered 503 at once. */
  readonly maxWaitMs: number;
}

/** Google's defaults (Sheets API usage limits), and a wait below the default upstream timeout. */
export const DEFAULT_QUOTA: QuotaLimits = {
  readsPerMinutePerUser: 60,
  writesPerMinutePerUser: 60,
  readsPerMinutePerProject: 300,
  writesPerMinutePerProject: 300,
  maxWaitMs: 10_000,
};

export type Kind = 'read' | 'write';

/** A slot: when to send (0: now), or how long until one would be free when that is too long. */
export type Admission = { readonly waitMs: number } | { readonly refusedForMs: number };

/** One rolling window of `limit` requests: the send times of the last `limit` slots. */
export class Window {
  readonly #times: number[] = [];
  readonly #windowMs: number;
  limit: number;

  constructor(limit: number, windowMs: number) {
    this.limit = limit;
    this.#windowMs = windowMs;
  }

  /** The earliest time at or after `now` a new slot may go: a window after slot n - limit, after every slot before it. */
  next(now: number): number {
    const times = this.#times;
    while (times.length > 0 && times[0] <= now - this.#windowMs) times.shift();
    let at = Math.max(now, times.at(-1) ?? now);
    if (times.length >= this.limit) at = Math.max(at, times[times.length - this.limit] + this.#windowMs);
    return at;
  }

  take(at: number): void {
    this.#times.push(at);
    // Only the last `limit` times decide anything.
    if (this.#times.length > this.limit) this.#times.splice(0, this.#times.length - this.limit);
  }
}

/** The windows one request must pass: its user's and its project's, for its kind. */
export function admit(windows: readonly Window[], now: number, maxWaitMs: number): Admission {
  const at = Math.max(...windows.map((window) => window.next(now)));
  if (at - now > maxWaitMs) return { refusedForMs: at - now };
  for (const window of windows) window.take(at);
  return { waitMs: at - now };
}

/**
 * Budgets kept elsewhere, for every instance at once (server/sources/google/budget-redis.ts, in Redis): a slot
 * in each of `windows` (by key, each with its limit), or null when the store cannot answer now
 * (the caller then uses its own process's budget).
 */
export interface SharedBudget {
  admit(windows: readonly { readonly key: string; readonly limit: number }[], maxWaitMs: number): Promise<Admission | null>;
}

/** The windows one request of `kind` must pass, by key, with their limits: its user's and its project's. */
export function windowKeys(kind: Kind, user: string, project: string, limits: QuotaLimits): { key: string; limit: number }[] {
  const perUser = kind === 'read' ? limits.readsPerMinutePerUser : limits.writesPerMinutePerUser;
  const perProject = kind === 'read' ? limits.readsPerMinutePerProject : limits.writesPerMinutePerProject;
  return [
    { key: `${kind} user ${user}`, limit: perUser },
    { key: `${kind} project ${project}`, limit: perProject },
  ];
}

/**
 * The budgets of one process: one per user and one per project, each with a window for reads
 * and one for writes. Connections naming the same credentials get the same windows; when their
 * configured limits differ, the lowest applies.
 */
export class Budgets {
  readonly #windows = new Map<string, Window>();
  readonly #windowMs: number;

  constructor(windowMs = 61_000) {
    this.#windowMs = windowMs;
  }

  windowsFor(kind: Kind, user: string, project: string, limits: QuotaLimits): Window[] {
    return windowKeys(kind, user, project, limits).map(({ key, limit }) => this.#window(key, limit));
  }

  #window(key: string, limit: number): Window {
    let window = this.#windows.get(key);
    if (window === undefined) {
      window = new Window(limit, this.#windowMs);
      this.#windows.set(key, window);
    } else if (limit < window.limit) {
      window.limit = limit;
    }
    return window;
  }
}

/**
 * The process's budgets. A minute plus a second: a request's slot is taken when it is sent, and
 * it reaches Google a little later, so a window of exactly a minute here could be 59.9 s there.
 */
export const SHARED_BUDGETS = new Budgets();
