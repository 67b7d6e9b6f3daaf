// Monthly request allowances: the 10,001st `GET /sheets/demo` of March on the "free" plan
// (10,000 a month) -> 402 `throttle` until 1 April 00:00 UTC, with X-RateLimit-* headers on
// every answer. The caller asks `take` once per authenticated request; what counts as a
// request (a HEAD, a preflight) is its business.
//
// Counting rules (the contract's, plus one decision):
// - A request refused for quota does not count, and neither does one refused because the plan
//   leaves out its operation: both are refusals by the plan itself, and counting them would let
//   a client that keeps retrying a forbidden write eat its own read allowance.
// - Connections without a plan or without a monthly limit are counted too, so that a limit
//   added mid-month applies to the month's real use.
// - Counts belong to a calendar month in UTC; the first request of a new month starts from 0.
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
// response to save a handful of requests per crash; not worth it for a monthly allowance.
// One server process per state folder: two would overwrite each other's snapshots.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import { apiError } from '../lib/errors.ts';
import type { ApiError } from '../lib/errors.ts';
import type { Operation, PlanConfig } from './config-schema.ts';
import { ensureStateDir, writeFileAtomic, writeFileAtomicSync } from './state.ts';

export const QUOTA_FILE = 'quota.json';
const FLUSH_DELAY_MS = 250;
const RETRY_DELAY_MS = 5000;

export interface QuotaDecision {
  readonly allowed: boolean;
  /** X-RateLimit-* headers for the answer, allowed or not. */
  readonly headers: Readonly<Record<string, string>>;
  /** 402 `throttle` when not allowed. */
  readonly error?: ApiError;
}

export interface QuotaStore {
  /** Decides one request and counts it when allowed. Synchronous: no I/O. */
  take(connectionId: string, plan: PlanConfig | undefined, operation: Operation): QuotaDecision;
  /** Requests counted for the connection in the current month. */
  used(connectionId: string): number;
  /** Writes pending counts now. */
  flush(): Promise<void>;
  /** Writes pending counts without yielding, for a process `exit` hook; prefer `close()`. */
  flushSync(): void;
  /** Writes pending counts and stops the timer; `take` may not be called afterwards. */
  close(): Promise<void>;
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
}

const QuotaFileSchema = v.object({
  version: v.literal(1),
  month: v.pipe(v.string(), v.regex(/^\d{4}-\d{2}$/)),
  counts: v.record(v.string(), v.pipe(v.number(), v.integer(), v.minValue(0))),
});

/** `2024-03` for any instant in March 2024, UTC. */
export function monthKey(date: Date): string {
  return `${String(date.getUTCFullYear()).padStart(4, '0')}-${String(date.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** Unix seconds of the first instant of the next calendar month, UTC (`X-RateLimit-Reset`). */
export function nextMonthStart(date: Date): number {
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1) / 1000;
}

export async function openQuotaStore(options: QuotaStoreOptions): Promise<QuotaStore> {
  const now = options.now ?? (() => new Date());
  const flushDelayMs = options.flushDelayMs ?? FLUSH_DELAY_MS;
  const onError = options.onError ?? ((error: unknown) => console.error(`sheetrest: could not save quota counts: ${String(error)}`));
  const file = join(options.stateDir, QUOTA_FILE);
  await ensureStateDir(options.stateDir);

  const saved = await readQuotaFile(file);
  let month = saved?.month ?? monthKey(now());
  const counts = new Map<string, number>(saved === undefined ? [] : Object.entries(saved.counts));
  let dirty = false;
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writing: Promise<void> | undefined;

  const snapshot = (): string => `${JSON.stringify({ version: 1, month, counts: Object.fromEntries(counts) }, null, 2)}\n`;

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

  const flush = async (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    // One write at a time, so that an older snapshot can never be renamed over a newer one.
    while (writing !== undefined) await writing.catch(() => {});
    if (!dirty) return;
    dirty = false;
    writing = writeFileAtomic(file, snapshot())
      .catch((error: unknown) => {
        dirty = true;
        throw error;
      })
      .finally(() => {
        writing = undefined;
      });
    await writing;
  };

  // A new month starts every connection from zero.
  const rollOver = (at: Date): void => {
    const current = monthKey(at);
    if (current === month) return;
    month = current;
    counts.clear();
    dirty = true;
  };

  return {
    take(connectionId, plan, operation) {
      if (closed) throw new Error('The quota store is closed.');
      const at = now();
      rollOver(at);
      const used = counts.get(connectionId) ?? 0;
      const limit = plan?.monthlyRequests;
      const headers: Record<string, string> =
        plan === undefined || limit === undefined
          ? { 'X-RateLimit-Plan': 'unlimited' }
          : {
              'X-RateLimit-Limit': String(limit),
              'X-RateLimit-Remaining': String(Math.max(0, limit - used)),
              'X-RateLimit-Plan': plan.name,
              'X-RateLimit-Reset': String(nextMonthStart(at)),
            };
      if (plan !== undefined && !plan.operations.includes(operation)) {
        const error = apiError('throttle', `The plan "${plan.name}" does not include ${operation} requests.`);
        return { allowed: false, headers, error };
      }
      if (limit !== undefined && used >= limit) {
        const renews = new Date(nextMonthStart(at) * 1000).toISOString().replace('.000Z', 'Z');
        const error = apiError('throttle', `The monthly allowance of ${limit} requests on the plan "${plan?.name}" is used up; it renews at ${renews}.`);
        return { allowed: false, headers, error };
      }
      counts.set(connectionId, used + 1);
      dirty = true;
      schedule(flushDelayMs);
      if (limit !== undefined) headers['X-RateLimit-Remaining'] = String(limit - used - 1);
      return { allowed: true, headers };
    },
    used(connectionId) {
      rollOver(now());
      return counts.get(connectionId) ?? 0;
    },
    flush,
    flushSync() {
      if (!dirty) return;
      writeFileAtomicSync(file, snapshot());
      dirty = false;
    },
    async close() {
      closed = true;
      await flush();
    },
  };
}

async function readQuotaFile(file: string): Promise<v.InferOutput<typeof QuotaFileSchema> | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  // Starting from zero would silently hand out a month's allowance again, so a damaged file
  // stops the server and the operator decides.
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    data = undefined;
  }
  const result = v.safeParse(QuotaFileSchema, data);
  if (!result.success) {
    throw new Error(`${file} is damaged; fix it, or delete it to start this month's request counts from zero.`);
  }
  return result.output;
}
