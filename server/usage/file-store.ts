// The usage history of one server, in the state folder: `usage/2026-11-23.json` holds that day's
// counts of every connection (`{"version":1,"day":"2026-11-23","connections":{"crm":{...}}}`),
// one file per day, KEEP_DAYS files at most (older ones are deleted as days pass and at start).
//
// Counted in memory (tally.ts) and written off the request path: while counts are dirty, today's
// file is replaced at most once a second (temp file, fsync, rename, as quota.json is), one write
// at a time; a past day's file is written once more when the day ends, then never again. `close()`
// and `flushSync()` (the server's stop and forced exit) write what is pending. A crash (kill -9)
// loses at most the last second's counts: history is for looking at, not for billing (the quota
// counts allowances, with its own 250 ms window).
//
// A damaged day file (not JSON, not this shape) is logged and left out of the history rather than
// stopping the server; a damaged today's file is overwritten by the next write.
import { readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import type { Authenticated } from '../auth.ts';
import { writeFileAtomicSync } from '../durable/disk.ts';
import { diskWriter, ensureStateDir, type AtomicWriter } from '../durable/state.ts';
import type { Logger } from '../log.ts';
import { spanClock } from '../quota/period.ts';
import type { UsageHistory } from './history.ts';
import { DayTally, emptyDay, keyLabelOf, KEEP_DAYS, lastDays, operationCodeOf, RecentRequests, type DayUsage } from './tally.ts';

export const USAGE_FOLDER = 'usage';
const FLUSH_DELAY_MS = 1000;
const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.json$/;

const CountsSchema = { requests: v.number(), clientErrors: v.number(), serverErrors: v.number() };
const DayFileSchema = v.object({
  version: v.literal(1),
  day: v.string(),
  connections: v.record(v.string(), v.object({
    ...CountsSchema,
    keys: v.array(v.object({ key: v.string(), id: v.nullable(v.string()), prefix: v.nullable(v.string()), name: v.nullable(v.string()), ...CountsSchema })),
    operations: v.record(v.string(), v.object(CountsSchema)),
  })),
});

type SavedDay = v.InferOutput<typeof DayFileSchema>['connections'];

export interface FileUsageOptions {
  readonly stateDir: string;
  readonly log: Logger;
  /** ms since the epoch; tests move it. */
  readonly now?: () => number;
  readonly flushDelayMs?: number;
  readonly keepDays?: number;
  readonly writer?: AtomicWriter;
}

export async function openFileUsage(options: FileUsageOptions): Promise<UsageHistory> {
  const { log } = options;
  const now = options.now ?? Date.now;
  const keepDays = options.keepDays ?? KEEP_DAYS;
  const flushDelayMs = options.flushDelayMs ?? FLUSH_DELAY_MS;
  const writer = options.writer ?? diskWriter;
  const folder = join(options.stateDir, USAGE_FOLDER);
  // A state folder the server may not write (read-only, full): the history is kept in memory only.
  let saving = true;
  await ensureStateDir(folder).catch((error: unknown) => {
    saving = false;
    log.warn('the usage history cannot be saved in the state folder: it is kept in memory only until the server stops', { folder, error: String(error) });
  });
  const dayOf = spanClock('day');

  let tally = new DayTally(dayOf(now()).key);
  /** Days before today, as saved. */
  const past = new Map<string, SavedDay>();
  /** Ended days whose last counts are not written yet. */
  const ended = new Map<string, DayTally>();
  const recent = new RecentRequests();
  let dirty = false;
  let closed = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writing: Promise<void> = Promise.resolve();

  const oldestKept = (today: string): string => lastDays(today, keepDays)[0];

  for (const name of saving ? await readdir(folder) : []) {
    const file = join(folder, name);
    // Only this process holds the state folder's lock: a temp file here is a crash's.
    if (name.startsWith('.') && name.endsWith('.tmp')) {
      await unlink(file).catch(() => undefined);
      continue;
    }
    const day = DAY_FILE.exec(name)?.[1];
    if (day === undefined) continue;
    if (day < oldestKept(tally.day)) {
      await unlink(file).catch(() => undefined);
      continue;
    }
    const saved = await readDay(file, log);
    if (saved === undefined) continue;
    if (day === tally.day) for (const [id, usage] of Object.entries(saved)) tally.add(id, usage);
    else past.set(day, saved);
  }

  const fileOf = (day: string): string => join(folder, `${day}.json`);
  const textOf = (day: DayTally): string => `${JSON.stringify({ version: 1, day: day.day, connections: day.toJSON() })}\n`;

  const schedule = (): void => {
    if (timer !== undefined || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void flush();
    }, flushDelayMs);
    timer.unref?.();
  };

  /** A new day: today's counts become a past day (written once more), days past KEEP_DAYS go. */
  const rollOver = (day: string): void => {
    ended.set(tally.day, tally);
    past.set(tally.day, tally.toJSON());
    tally = new DayTally(day);
    const oldest = oldestKept(day);
    for (const kept of past.keys()) if (kept < oldest) past.delete(kept);
    dirty = true;
  };

  let failing = false;
  const writeOnce = async (): Promise<void> => {
    if (!dirty || !saving) return;
    dirty = false;
    const days = [...ended.values(), tally];
    ended.clear();
    const oldest = oldestKept(tally.day);
    try {
      for (const day of days) {
        const temporary = await writer.prepare(fileOf(day.day), textOf(day));
        await writer.commit(temporary, fileOf(day.day));
      }
      for (const name of await readdir(folder)) {
        const day = DAY_FILE.exec(name)?.[1];
        if (day !== undefined && day < oldest) await unlink(join(folder, name)).catch(() => undefined);
      }
    } catch (error) {
      // Written again by the next flush, with whatever came since.
      for (const day of days) if (day !== tally) ended.set(day.day, day);
      dirty = true;
      // Said once, not every second while the disk stays full.
      if (!failing) log.error('the usage history could not be saved; trying again every second', { error: String(error) });
      failing = true;
      schedule();
      return;
    }
    if (failing) log.info('the usage history is saved again');
    failing = false;
  };

  const flush = (): Promise<void> => {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    writing = writing.then(writeOnce, writeOnce);
    return writing;
  };

  return {
    record(connectionId: string, method: string, url: string, status: number, ms: number, access: Authenticated | null, at = now()): void {
      const day = dayOf(at).key;
      if (day !== tally.day) rollOver(day);
      const key = keyLabelOf(access);
      tally.count(connectionId, operationCodeOf(method, url), key, status);
      recent.add(connectionId, at, method, url, status, ms, key);
      dirty = true;
      if (timer === undefined) schedule();
    },
    history(connectionId: string, count: number): Promise<DayUsage[]> {
      const today = dayOf(now()).key;
      if (today !== tally.day) rollOver(today);
      return Promise.resolve(lastDays(today, count).map((day): DayUsage => {
        if (day === today) return tally.view(connectionId);
        const saved = past.get(day)?.[connectionId];
        return saved === undefined ? emptyDay(day) : { day, ...saved };
      }));
    },
    recent: (connectionId) => recent.list(connectionId),
    flush,
    flushSync(): void {
      if (!dirty || !saving) return;
      for (const day of [...ended.values(), tally]) writeFileAtomicSync(fileOf(day.day), textOf(day));
      ended.clear();
      dirty = false;
    },
    async close(): Promise<void> {
      closed = true;
      await flush();
    },
  };
}

async function readDay(file: string, log: Logger): Promise<SavedDay | undefined> {
  try {
    const parsed = v.safeParse(DayFileSchema, JSON.parse(await readFile(file, 'utf8')));
    if (parsed.success) return parsed.output.connections;
    log.warn('a usage history file is damaged: its day is left out of the history', { file });
  } catch (error) {
    log.warn('a usage history file could not be read: its day is left out of the history', { file, error: String(error) });
  }
  return undefined;
}

