// One server per state folder: `sheetrest book.xlsx` takes `<stateDir>/lock` before it reads a
// journal or the quota counts, and a second start on the same folder stops with
//   the state folder /srv/.sheetrest is in use by another sheetrest process (pid 4121, started
//   2026-11-23T18:40:00.000Z); stop it, or give this one its own state folder (--state-dir)
// without touching anything there. Two servers on one folder would replay and fold each
// other's journals and overwrite each other's quota counts.
//
// The lock is a file holding `{"pid":4121,"started":"...","since":123456}`, created
// atomically: written to a temp file, then hard-linked to `lock` (link fails with EEXIST when it
// exists, and the file appears with its content whole); where hard links are not supported,
// created with O_EXCL. Plain files work alike on Node, Deno and Bun, with no native addon. A
// lock whose process is gone (a crash, kill -9, a power cut) is stale and taken over. Gone
// includes a zombie (killed but not yet reaped by its parent: `kill(pid, 0)` still succeeds for
// about half a second after kill -9, and a process manager restarting at once must not be
// refused) and a pid reused by another process since (`since`, the holder's start time in clock
// ticks since boot, field 22 of /proc/<pid>/stat, differs). Where there is no /proc (macOS),
// `kill(pid, 0)` alone decides. Taking over runs under a second, short-lived O_EXCL file
// (`lock.takeover`), so that two starts finding the same stale lock cannot both win. A lock
// naming this very pid that this process does not hold is stale as well: in a container the
// server is pid 1 after every restart.
//
// The same lock guards a workbook served for writing (`lockWorkbook`): `.book.xlsx.sheetrest-lock`
// beside the real file (symlinks resolved), so that a second server on the same file with another state folder stops too
// (the file source is single-instance: two would each journal and fold into the one file). A
// process holding it already shares it (two connections on one file, by whatever paths, or the
// admin API opening a connection again before closing the old one).
import { closeSync, linkSync, openSync, readFileSync, realpathSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import process from 'node:process';

export const LOCK_FILE = 'lock';

/** A held lock. `release` is synchronous, so that an `exit` hook can call it. */
export interface StateLock {
  readonly path: string;
  /** Removes the lock file if it is still ours; idempotent. */
  release(): void;
}

/** The state folder is held by another live process. The message names the folder and the pid. */
export class StateDirLocked extends Error {
  readonly pid: number;
  constructor(stateDir: string, holder: LockHolder) {
    super(
      `the state folder ${stateDir} is in use by another sheetrest process (pid ${holder.pid}, started ${holder.started}); ` +
        `stop it, or give this one its own state folder (--state-dir, or "stateDir" in the config file)`,
    );
    this.name = 'StateDirLocked';
    this.pid = holder.pid;
  }
}

/** The workbook is served for writing by another live process. */
export class WorkbookLocked extends Error {
  readonly pid: number;
  constructor(file: string, holder: LockHolder) {
    super(
      `the workbook ${file} is served for writing by another sheetrest process (pid ${holder.pid}, started ${holder.started}); ` +
        'a file is served by one instance only: stop the other, or serve a copy (several instances need a Google spreadsheet, docs/scaling.md)',
    );
    this.name = 'WorkbookLocked';
    this.pid = holder.pid;
  }
}

interface LockHolder {
  readonly pid: number;
  readonly started: string;
  /** The holder's start time in clock ticks since boot (/proc); absent in locks of older versions and where there is no /proc. */
  readonly since?: number;
}

/** Lock files this process holds, with the text it wrote: tells our own pid's stale lock from a live one. */
const held = new Map<string, string>();

const STARTED = new Date().toISOString();

/** What a lock written by this process holds: its pid, when it started, and (on Linux) its start time in ticks. */
function holderText(): string {
  const since = processStat(process.pid)?.startTicks;
  return `${JSON.stringify(since === undefined ? { pid: process.pid, started: STARTED } : { pid: process.pid, started: STARTED, since })}\n`;
}

/** Takes `<stateDir>/lock` (the folder must exist). Throws StateDirLocked when another live process holds it. */
export function lockStateDir(stateDir: string): StateLock {
  return takeLock(join(stateDir, LOCK_FILE), (holder) => new StateDirLocked(stateDir, holder), `the state folder ${stateDir}`);
}

/** The lock file guarding a workbook served for writing: beside it, hidden. */
export function workbookLockPath(file: string): string {
  return join(dirname(file), `.${basename(file)}.sheetrest-lock`);
}

/** Holders of workbook locks in this process, by the file's identity (sameFileKey), with how many connections share each. */
const workbooks = new Map<string, { lock: StateLock; users: number }>();

/**
 * Takes the workbook's lock, or shares it when this process holds it. Throws WorkbookLocked when
 * another live process does. Keyed by the file itself, not the path as written: through a
 * symlinked folder, a symlink or a hard link, one file is one lock (beside the real file, so a
 * second server reaching it by another path finds the same lock file).
 */
export function lockWorkbook(file: string): StateLock {
  const real = realPathOf(file);
  const key = sameFileKey(file);
  const path = workbookLockPath(real);
  let entry = workbooks.get(key);
  if (entry === undefined) {
    entry = { lock: takeLock(path, (holder) => new WorkbookLocked(file, holder), `the workbook ${file}`), users: 0 };
    workbooks.set(key, entry);
  }
  entry.users++;
  const shared = entry;
  let released = false;
  return {
    path: shared.lock.path,
    release() {
      if (released) return;
      released = true;
      if (--shared.users > 0) return;
      workbooks.delete(key);
      shared.lock.release();
    },
  };
}

/** The path with every symlink resolved; for a missing file, its folder's real path and its name; else the path itself. */
export function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

/** Whether two paths reach one file (sameFileKey); a symlinked folder or a hard link reaches the same one. */
export function sameFile(a: string | undefined, b: string): boolean {
  return a !== undefined && (a === b || sameFileKey(a) === sameFileKey(b));
}

/**
 * One string per file, whatever path reaches it: its device and inode (which hard links share),
 * else, for a file that cannot be looked at, its real path. Two paths name one file when their
 * keys are equal.
 */
export function sameFileKey(path: string): string {
  try {
    const info = statSync(path, { bigint: true });
    return `inode:${info.dev}:${info.ino}`;
  } catch {
    return `path:${realPathOf(path)}`;
  }
}

function takeLock(path: string, refusal: (holder: LockHolder) => Error, what: string): StateLock {
  const text = holderText();
  // A stale lock taken over by someone else between our looks: look again, a few times at most.
  for (let attempt = 0; attempt < 5; attempt++) {
    if (create(path, text)) return hold(path, text);
    const holder = readHolder(path);
    if (holder !== undefined && isLive(path, holder)) throw refusal(holder);
    takeOverStale(path, holder);
  }
  throw new Error(`${what} keeps changing hands; is another sheetrest starting there?`);
}

function hold(path: string, text: string): StateLock {
  held.set(path, text);
  return {
    path,
    release() {
      if (held.get(path) !== text) return;
      held.delete(path);
      // Only our own lock: a lock file holding anything else is someone else's.
      if (readText(path) === text) unlinkQuietly(path);
    },
  };
}

/** Creates `path` holding `text`, atomically; false when it already exists. */
function create(path: string, text: string): boolean {
  const temp = `${path}.${process.pid}.tmp`;
  try {
    writeFileSync(temp, text, { mode: 0o600 });
  } catch (error) {
    // A full disk creates the file but takes none of its bytes: nothing is left behind.
    unlinkQuietly(temp);
    throw cannotWrite(path, error);
  }
  try {
    linkSync(temp, path);
    return true;
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return false;
    // No hard links here (some network and FAT file systems): O_EXCL instead.
    return createExclusive(path, text);
  } finally {
    unlinkQuietly(temp);
  }
}

function createExclusive(path: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600);
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return false;
    throw error;
  }
  try {
    writeFileSync(fd, text);
  } catch (error) {
    closeSync(fd);
    // An empty lock file would read as damaged, and be taken over: none at all.
    unlinkQuietly(path);
    throw cannotWrite(path, error);
  }
  closeSync(fd);
  return true;
}

/** Names the lock file a write failed on (the runtime's message names none); keeps the code. */
function cannotWrite(path: string, error: unknown): Error {
  const code = codeOf(error);
  const why = code === 'ENOSPC' ? 'no space left on device (ENOSPC)' : code === 'EDQUOT' ? 'disk quota exceeded (EDQUOT)' : (code ?? String(error));
  return Object.assign(new Error(`cannot write ${path}: ${why}`), code === undefined ? {} : { code });
}

/** Replaces a stale lock under `lock.takeover`, so only one process does it at a time. */
function takeOverStale(path: string, stale: LockHolder | undefined): void {
  const guard = `${path}.takeover`;
  if (!createExclusive(guard, holderText())) {
    // A takeover whose process died half-way leaves its guard behind; anyone may clear it.
    const other = readHolder(guard);
    if (other === undefined || !isAlive(other.pid, other.since)) unlinkQuietly(guard);
    return;
  }
  try {
    // Still the same stale lock? (Another process may have taken over and locked meanwhile.)
    const now = readHolder(path);
    if (now?.pid === stale?.pid && now?.started === stale?.started) unlinkQuietly(path);
  } finally {
    unlinkQuietly(guard);
  }
}

/** Who holds the lock; undefined when the file is gone, unreadable or not ours to read (stale). */
function readHolder(path: string): LockHolder | undefined {
  const text = readText(path);
  if (text === undefined) return undefined;
  try {
    const data = JSON.parse(text) as { pid?: unknown; started?: unknown; since?: unknown };
    if (typeof data.pid === 'number' && Number.isInteger(data.pid) && data.pid > 0) {
      const started = String(data.started);
      return typeof data.since === 'number' && Number.isSafeInteger(data.since) ? { pid: data.pid, started, since: data.since } : { pid: data.pid, started };
    }
  } catch {
    // A lock written by hand or damaged: nobody can own it.
  }
  return undefined;
}

function isLive(path: string, holder: LockHolder): boolean {
  if (holder.pid === process.pid) return held.has(path);
  return isAlive(holder.pid, holder.since);
}

/**
 * Whether process `pid` is running, and is still the one that started at `since` (clock ticks
 * since boot) when that is known. Signal 0 asks whether the pid exists: ESRCH means gone, EPERM
 * means alive but another user's. /proc then tells a zombie (exited, not yet reaped: state Z or
 * X) and a pid reused by a later process (another start time) from the process that wrote the
 * lock; without /proc (macOS) the signal's answer stands.
 */
export function isAlive(pid: number, since?: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    if (codeOf(error) === 'ESRCH') return false;
  }
  const stat = processStat(pid);
  if (stat === undefined) return true;
  if (stat.state === 'Z' || stat.state === 'X' || stat.state === 'x') return false;
  return since === undefined || stat.startTicks === since;
}

/** What /proc/<pid>/stat says of a process; undefined where there is no /proc, or the process is gone. */
export function processStat(pid: number): ProcStat | undefined {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch {
    return undefined;
  }
}

export interface ProcStat {
  /** R, S, D, Z (zombie), X (dead), ... */
  readonly state: string;
  /** Field 22: when the process started, in clock ticks since boot. */
  readonly startTicks: number;
}

/**
 * Parses a /proc/<pid>/stat line: `4121 (node) S 1 4121 ... <starttime> ...`. The command name
 * (field 2) is in parentheses and may itself hold spaces and parentheses, so the fields are
 * counted from the last ')'. Undefined for a line that does not read so.
 */
export function parseProcStat(line: string): ProcStat | undefined {
  const close = line.lastIndexOf(')');
  if (close === -1 || line.indexOf('(') === -1 || line.indexOf('(') > close) return undefined;
  // After the name: field 3 (state) onwards; field 22 is the 20th of these.
  const fields = line.slice(close + 1).trim().split(/\s+/);
  const state = fields[0];
  const startTicks = Number(fields[19]);
  if (state === undefined || !/^[A-Za-z]$/.test(state) || fields[19] === undefined || !/^\d+$/.test(fields[19]) || !Number.isSafeInteger(startTicks)) return undefined;
  return { state, startTicks };
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

function codeOf(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}
