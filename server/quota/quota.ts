// Request allowances per period: the 10,001st `GET /sheets/demo` of March on the "free" plan
// (10,000 a month) -> 402 `throttle` until 1 April 00:00 UTC, with X-RateLimit-* headers on
// every answer. A plan counts by the month unless its `period` says "day" or "hour" (UTC);
// period.ts has the arithmetic. The caller asks `take` once per authenticated request; what
// counts as a request (a HEAD, a preflight) is its business.
//
// Counting rules (the contract's, plus one decision):
// - A request refused for quota does not count, and neither does one refused because the plan
//   leaves out its operation: both are refusals by the plan itself, and counting them would let
//   a client that keeps retrying a forbidden write eat its own read allowance.
// - Connections without a plan or without a limit are counted too (by the month without a plan),
//   so that a limit added mid-month applies to the month's real use.
// - Counts belong to a span of the plan's period (a calendar month, day or hour in UTC); the
//   first request of a new span starts from 0. A plan whose period changes starts the new
//   period's count afresh: a request is counted in its plan's period only.
//
// Persistence, and what a crash costs: decisions are made in memory (no I/O on the request
// path). While counts are dirty they are written to `quota.json` in the state folder at most
// every 250 ms, atomically (temp file, fsync, rename, fsync of the folder), so the file is
// always a whole, recent snapshot. `close()` (the server's SIGTERM/SIGINT path) and `flush()`
// write whatever is pending, so an orderly restart loses nothing. A crash (kill -9, power cut)
// can lose the counts of the last flush window, at most ~250 ms of traffic: the error is always
// in the client's favour (a few requests served free), never a request refused that should
// have been served. Making every count durable before its answer would mean an fsync (or a
// group commit of an append-only log) on every request's path, adding milliseconds to each
// response to save a handful of requests per crash; not worth it for a monthly (or hourly) allowance.
//
// A stalled write: a snapshot goes through the runtime's file thread pool (on Node, libuv's four
// threads), which the journals' fsyncs share; under a burst of durable writes one quota write
// can wait seconds for its turn or its fsync. Writes used to run strictly one after another, so
// one stalled write held back every later flush and the file fell many seconds behind. Now a
// flush does not wait for the write before it: each snapshot has its own temp file, and only the
// renames are ordered (newest wins, an older one finishing late is dropped). At most two writes
// are in flight; when both are stuck, so is the disk.
// One server process per state folder (server/durable/lock.ts): two would overwrite each other's snapshots.
import { join } from 'node:path';
import * as v from 'valibot';
import { apiError } from '../../lib/errors.ts';
import type { ApiError } from '../../lib/errors.ts';
import type { BillingPlan, Operation } from '../config/schema.ts';
import { writeFileAtomicSync } from '../durable/disk.ts';
import { diskWriter, ensureStateDir, readStateFile, type AtomicWriter } from '../durable/state.ts';
import { PERIOD_NAMES, PERIODS, isoSeconds, periodOf, spanAt, spanClock, type PeriodName, type Span } from './period.ts';

export const QUOTA_FILE = 'quota.json';
const FLUSH_DELAY_MS = 250;
const RETRY_DELAY_MS = 5000;
const MAX_WRITES_IN_FLIGHT = 2;

export interface QuotaDecision {
  readonly allowed: boolean;
  /** X-RateLimit-* headers for the answer, allowed or not. */
  readonly headers: Readonly<Record<string, string>>;
  /** 402 `throttle` when not allowed. */
  readonly error?: ApiError;
}

/** What the app asks of the quota: one decision per authenticated request. */
export interface Quota {
  /** A promise only where counts are shared (Redis): the state folder's store decides in memory. */
  take(connection: string, billingPlan: BillingPlan | undefined, operation: Operation): QuotaDecision | Promise<QuotaDecision>;
  /**
   * The X-RateLimit-* headers as the count stands, without counting: for an answer the quota was
   * not asked about (a 429 of the plan's rate limit), which the contract still gives them.
   */
  peek(connection: string, billingPlan: BillingPlan | undefined): Readonly<Record<string, string>>;
}

export interface QuotaStore {
  /** Decides one request and counts it when allowed. The state folder's store is synchronous (no I/O); the Redis one is not. */
  take(connectionId: string, plan: BillingPlan | undefined, operation: Operation): QuotaDecision | Promise<QuotaDecision>;
  /** The X-RateLimit-* headers of `used`'s count, nothing counted (Quota.peek). */
  peek(connectionId: string, plan: BillingPlan | undefined): Readonly<Record<string, string>>;
  /** Requests counted for the connection in the current span of its plan's period (a month without a plan). */
  used(connectionId: string, plan?: BillingPlan): number;
  /** Writes pending counts now. */
  flush(): Promise<void>;
  /** Writes pending counts without yielding, for a process `exit` hook; prefer `close()`. */
  flushSync(): void;
  /** Writes pending counts and stops the timer; `take` may not be called afterwards. */
  close(): Promise<void>;
}

/** The state folder's store: decides in memory, so `take` answers at once. */
export interface LocalQuotaStore extends QuotaStore {
  take(connectionId: string, plan: BillingPlan | undefined, operation: Operation): QuotaDecision;
}

export interface QuotaStoreOptions {
  /** The state folder; created when missing. */
  readonly stateDir: string;
  /** The clock, injectable for tests. */
  readonly now?: () => Date;
  /** How long counts may stay only in memory; 250 ms by default. */
  readonly flushDelayMs?: number;
  /** Told when a background write fails (it is retried); prints to stderr by default. */
  readonly onError?: (error: unknown) => void;
  /** How snapshots reach the disk; injectable so tests can stall or fail a write. */
  readonly writer?: AtomicWriter;
}

const countsSchema = v.record(v.string(), v.pipe(v.number(), v.integer(), v.minValue(0)));

// A month's counts stay where they always were (`month`, `counts`), so a deployment with month
// plans only writes the file it wrote before periods; a day's or an hour's current counts are
// under `periods` (`"day": {"key": "2024-03-15", "counts": {...}}`) while it has any.
const QuotaFileSchema = v.object({
  version: v.literal(1),
  month: v.pipe(v.string(), v.regex(/^\d{4}-\d{2}$/)),
  counts: countsSchema,
  periods: v.optional(v.record(v.picklist(PERIOD_NAMES.filter((name) => name !== 'month')), v.object({ key: v.string(), counts: countsSchema }))),
});

/** A plan's allowance per span of its period (`requests`, or `monthlyRequests` for a month), or undefined for none. */
export function allowanceOf(plan: BillingPlan | undefined): number | undefined {
  return plan?.requests ?? plan?.monthlyRequests;
}

/**
 * The decision on one request in `span` of the plan's period given the span's count before it
 * (`used`): refused by the plan's operations or its used-up allowance, else allowed, with the
 * headers it answers with (Remaining already counts this request; Reset is the span's end).
 * Shared by this store and the Redis one (server/quota/redis-store.ts).
 */
export function decideQuota(plan: BillingPlan | undefined, operation: Operation, used: number, span: Span): QuotaDecision {
  const limit = allowanceOf(plan);
  if (plan === undefined || limit === undefined) {
    if (plan !== undefined && !plan.operations.includes(operation)) return { allowed: false, headers: UNLIMITED, error: operationRefused(plan, operation) };
    return UNLIMITED_ALLOWED;
  }
  const headers = quotaHeaders(plan, used, span);
  if (!plan.operations.includes(operation)) return { allowed: false, headers, error: operationRefused(plan, operation) };
  if (used >= limit) {
    const allowance = PERIODS[periodOf(plan)].adjective;
    const error = apiError('throttle', `The ${allowance} allowance of ${limit} requests on the plan "${plan.name}" is used up; it renews at ${isoSeconds(span.to)}.`);
    return { allowed: false, headers, error };
  }
  headers['X-RateLimit-Remaining'] = String(limit - used - 1);
  return { allowed: true, headers };
}

/**
 * The X-RateLimit-* headers of a span in which `used` requests were counted: a plan of 100 a
 * month with 2 used -> Limit 100, Remaining 98, its name, Reset at the month's end; no limit ->
 * `X-RateLimit-Plan: unlimited` alone.
 */
export function quotaHeaders(plan: BillingPlan | undefined, used: number, span: Span): Record<string, string> {
  const limit = allowanceOf(plan);
  if (plan === undefined || limit === undefined) return { ...UNLIMITED };
  return {
    'X-RateLimit-Limit': String(limit),
    'X-RateLimit-Remaining': String(Math.max(0, limit - used)),
    'X-RateLimit-Plan': plan.name,
    'X-RateLimit-Reset': String(span.to / 1000),
  };
}

const UNLIMITED: Readonly<Record<string, string>> = Object.freeze({ 'X-RateLimit-Plan': 'unlimited' });
const UNLIMITED_ALLOWED: QuotaDecision = Object.freeze({ allowed: true, headers: UNLIMITED });

function operationRefused(plan: BillingPlan, operation: Operation): ApiError {
  return apiError('throttle', `The plan "${plan.name}" does not include ${operation} requests.`);
}

export async function openQuotaStore(options: QuotaStoreOptions): Promise<LocalQuotaStore> {
  // Most requests need only a number to compare with their span's bounds: no Date is made for them.
  const clock = options.now;
  const nowMs = clock === undefined ? Date.now : () => clock().getTime();
  const flushDelayMs = options.flushDelayMs ?? FLUSH_DELAY_MS;
  const onError = options.onError ?? ((error: unknown) => console.error(`sheetrest: could not save quota counts: ${String(error)}`));
  const writer = options.writer ?? diskWriter;
  const file = join(options.stateDir, QUOTA_FILE);
  await ensureStateDir(options.stateDir);

  const saved = await readQuotaFile(file);
  const tallies = {} as Record<PeriodName, Tally>;
  for (const period of PERIOD_NAMES) {
    const kept = period === 'month' ? (saved && { key: saved.month, counts: saved.counts }) : saved?.periods?.[period];
    const counts = new Map<string, number>(kept === undefined ? [] : Object.entries(kept.counts));
    tallies[period] = { key: kept?.key ?? spanAt(period, nowMs()).key, counts, spanOf: spanClock(period) };
  }
  let dirty = false;
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Snapshots are numbered as they are taken. Several may be on their way to disk at once (see
  // "A stalled write" above), but they are renamed into place one at a time, in `renames`, and a
  // snapshot older than the one already in place is dropped, never renamed over it.
  let taken = 0;
  let inPlace = 0;
  const writes = new Map<number, Promise<void>>();
  let renames: Promise<unknown> = Promise.resolve();

  const snapshot = (): string => {
    const periods: Record<string, { key: string; counts: Record<string, number> }> = {};
    for (const period of PERIOD_NAMES) {
      const { key, counts } = tallies[period];
      if (period !== 'month' && counts.size > 0) periods[period] = { key, counts: Object.fromEntries(counts) };
    }
    const month = tallies.month;
    const saving = { version: 1, month: month.key, counts: Object.fromEntries(month.counts), ...(Object.keys(periods).length > 0 ? { periods } : {}) };
    return `${JSON.stringify(saving, null, 2)}\n`;
  };

  const schedule = (delay: number): void => {
    if (timer !== undefined || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      flush().catch((error: unknown) => {
        onError(error);
        schedule(Math.max(delay, RETRY_DELAY_MS));
      });
    }, delay);
  };

  const write = async (number: number, data: string): Promise<void> => {
    try {
      const temporary = await writer.prepare(file, data);
      const rename = renames.then(async () => {
        if (number < inPlace) return writer.discard(temporary);
        await writer.commit(temporary, file);
        inPlace = number;
      });
      renames = rename.catch(() => undefined);
      await rename;
    } catch (error) {
      // These counts are not on disk: the next flush writes them (with whatever came since).
      if (number > inPlace) dirty = true;
      throw error;
    }
  };

  const flush = async (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    // A bound on writes in flight: when two are stuck the disk is, and more would only hold
    // more of the thread pool the journals need.
    while (writes.size >= MAX_WRITES_IN_FLIGHT) await Promise.race(writes.values()).catch(() => undefined);
    if (!dirty) {
      // Nothing new, but the latest snapshot may still be on its way: "flushed" means on disk.
      await writes.get(taken);
      return;
    }
    dirty = false;
    const number = ++taken;
    const writing = write(number, snapshot()).finally(() => writes.delete(number));
    writes.set(number, writing);
    await writing;
  };

  // A new span of a period (a new month, day or hour) starts its connections from zero.
  const currentSpan = (tally: Tally, ms: number): Span => {
    const span = tally.spanOf(ms);
    if (span.key !== tally.key) {
      tally.key = span.key;
      tally.counts.clear();
      dirty = true;
    }
    return span;
  };

  return {
    take(connectionId, plan, operation) {
      if (closed) throw new Error('The quota store is closed.');
      const tally = tallies[periodOf(plan)];
      const span = currentSpan(tally, nowMs());
      const used = tally.counts.get(connectionId) ?? 0;
      const decision = decideQuota(plan, operation, used, span);
      if (!decision.allowed) return decision;
      tally.counts.set(connectionId, used + 1);
      dirty = true;
      schedule(flushDelayMs);
      return decision;
    },
    peek(connectionId, plan) {
      const tally = tallies[periodOf(plan)];
      const span = currentSpan(tally, nowMs());
      return quotaHeaders(plan, tally.counts.get(connectionId) ?? 0, span);
    },
    used(connectionId, plan) {
      const tally = tallies[periodOf(plan)];
      currentSpan(tally, nowMs());
      return tally.counts.get(connectionId) ?? 0;
    },
    flush,
    flushSync() {
      // A snapshot still on its way counts as pending: the process may be about to exit.
      if (!dirty && inPlace === taken) return;
      const number = ++taken;
      writeFileAtomicSync(file, snapshot());
      // Any write still in flight is older: it is dropped instead of renamed over this one.
      inPlace = number;
      dirty = false;
    },
    async close() {
      closed = true;
      await flush();
      // Older writes still in flight are dropped once they finish; wait, so no temp file stays.
      await Promise.allSettled(writes.values());
    },
  };
}

/** The counts of one period's current span: `{ key: '2024-03', counts: demo -> 12 }`. */
interface Tally {
  key: string;
  readonly counts: Map<string, number>;
  readonly spanOf: (ms: number) => Span;
}

function readQuotaFile(file: string): Promise<v.InferOutput<typeof QuotaFileSchema> | undefined> {
  // Starting from zero would silently hand out a month's allowance again.
  return readStateFile(file, QuotaFileSchema, () => `${file} is damaged; fix it, or delete it to start this month's request counts from zero.`);
}
