// The file-system steps the server's durability rests on: fingerprints, cheap change detection,
// and the one way each file is written: replaced so that a crash leaves either the old or the
// new bytes (workbook folds, journals, quota.json, admin.json, receipts), or appended to and
// fsynced before the write is acknowledged (journals, receipts, fold history).
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, mkdirSync, openSync, realpathSync, renameSync, statSync, unlinkSync, watch, writeSync, type FSWatcher } from 'node:fs';
import { mkdir, open, readdir, realpath, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import process from 'node:process';
import { isAlive } from './lock.ts';

export function fingerprint(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * What `stat` says about a file, as one comparable string; null when it does not exist. A
 * save by a spreadsheet program changes the inode (write-and-rename) or size and mtime; the
 * ctime catches an edit that kept the size and put the mtime back (`utimes` cannot set ctime).
 */
export async function fileIdentity(path: string): Promise<string | null> {
  try {
    const info = await stat(path);
    return identityOf(info);
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

/**
 * The same, synchronously: every read looks at the file, and on a local disk a cached stat
 * takes a microsecond or two, far less than a round trip through the thread pool.
 */
export function fileIdentityNow(path: string): string | null {
  try {
    return identityOf(statSync(path));
  } catch {
    return null;
  }
}

/** Changes younger than this may hide from ctime: Deno (and some file systems) give it in whole seconds. */
const COARSE_CLOCK_MS = 2_000;
/** Files up to this size are cheap enough to hash when their identity cannot be trusted. */
const HASH_BELOW_BYTES = 1 << 20;

/**
 * Whether an unchanged identity still needs the content's fingerprint to tell: its ctime is in
 * whole seconds (Deno, some file systems), the file changed so recently that a second edit
 * within the same second would leave it as it is, and it is small enough to hash. A larger file
 * edited twice within one second there is the blind spot.
 */
export function identityNeedsHash(identity: string, now = Date.now()): boolean {
  const [, , size, , ctime] = identity.split(':');
  // A ctime with a fraction of a second comes from a clock fine enough to show any later edit.
  return Number(ctime) % 1000 === 0 && Number(size) <= HASH_BELOW_BYTES && now - Number(ctime) < COARSE_CLOCK_MS;
}

/** The modification time an identity holds (ms since the epoch), or undefined for none. */
export function mtimeOf(identity: string | null): number | undefined {
  const mtime = Number(identity?.split(':')[3]);
  return Number.isFinite(mtime) ? Math.floor(mtime) : undefined;
}

function identityOf(info: { dev: number; ino: number; size: number; mtimeMs: number; ctimeMs: number }): string {
  return `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}:${info.ctimeMs}`;
}

/**
 * Calls `changed` whenever something happens to `path` (a save renames a new file over it, so
 * its folder is watched). Null where the runtime or the file system cannot watch (a network
 * file system, no inotify watches left): the caller then looks at the file now and then.
 */
export function watchFile(path: string, changed: () => void, other?: (file: string) => void): { close(): void } | null {
  const watched = watchFolderFor(path, changed, other);
  // A symlinked workbook changes where the link points (a fold renames over the target): that folder too.
  const real = realPathNow(path);
  if (watched === null || real === path) return watched;
  const target = watchFolderFor(real, changed);
  if (target === null) {
    watched.close();
    return null;
  }
  return {
    close() {
      watched.close();
      target.close();
    },
  };
}

/** `other`: told of every other file name in the folder that changed (a lock file beside the workbook). */
function watchFolderFor(path: string, changed: () => void, other?: (file: string) => void): FSWatcher | null {
  const name = basename(path);
  try {
    const watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
      if (file === null || file === name) changed();
      else other?.(String(file));
    });
    watcher.on('error', () => {
      watcher.close();
      changed();
    });
    return watcher;
  } catch {
    return null;
  }
}

function realPathNow(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

export function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}

/** Whether a failure means "not allowed to write here" rather than a passing fault. */
export function isPermissionError(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'EACCES' || code === 'EPERM' || code === 'EROFS';
}

/** Whether a failure means the disk (or the user's quota on it) is full: 507, not a passing fault. */
export function isDiskFull(error: unknown): boolean {
  const code = errorCode(error);
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/**
 * The error of a failed write, naming the file (`cannot write /srv/.sheetrest/book.xlsx.1a2b3c4d.journal:
 * no space left on device (ENOSPC)`): the runtime's own message names no file for a write to an
 * open handle. Keeps the code, so isDiskFull and isPermissionError still tell it.
 */
export function cannotWriteFile(path: string, error: unknown): Error {
  const code = errorCode(error);
  const why = code === 'ENOSPC' ? 'no space left on device (ENOSPC)' : code === 'EDQUOT' ? 'disk quota exceeded (EDQUOT)' : (code ?? (error instanceof Error ? error.message : String(error)));
  return Object.assign(new Error(`cannot write ${path}: ${why}`), code === undefined ? {} : { code });
}

/** Flushes a directory's entries (a rename or a new file) to disk; a no-op where unsupported. */
export async function fsyncDirectory(path: string): Promise<void> {
  let handle;
  try {
    handle = await open(path, 'r');
    await handle.sync();
  } catch (error) {
    // Windows cannot open directories; some file systems refuse fsync on them (EINVAL).
    const code = errorCode(error);
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'ENOTSUP') throw error;
  } finally {
    await handle?.close();
  }
}

/**
 * The one temp-name rule: temp files sit beside their target (a rename is atomic only within one
 * file system) and say whose they are: `.quota.json.sheetrest-4121-0a1b2c3d4e5f.tmp`. The pid
 * and random part keep two writes (an exit hook's and a running one's, or a second process
 * sharing the folder by mistake) from ever sharing a temp file.
 */
export function tempPathFor(path: string): string {
  return join(dirname(path), `.${basename(path)}.sheetrest-${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
}

/** The pid a temp file's name carries; undefined for the names of earlier versions, which had none. */
function tempFileOwner(name: string): number | undefined {
  const match = /\.sheetrest-(\d+)-[0-9a-f]+\.tmp$/.exec(name);
  return match === null ? undefined : Number(match[1]);
}

/** What writing a file needs of an open handle; FileHandle has it. A seam for tests that fail the disk. */
export interface WritableHandle {
  write(buffer: Uint8Array, offset: number, length: number): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  sync(): Promise<void>;
  truncate(length: number): Promise<void>;
  close(): Promise<void>;
}

/** Opens files for writing: a fresh one (`wx`) or one to append to (`a`). */
export interface WritableFiles {
  open(path: string, flags: 'wx' | 'a', mode?: number): Promise<WritableHandle>;
}

export const DISK_FILES: WritableFiles = { open: (path, flags, mode) => open(path, flags, mode) };

/** Writes every byte: a write may take only part (a nearly full disk), so continue where it stopped. */
export async function writeAll(handle: WritableHandle, bytes: Uint8Array): Promise<void> {
  for (let written = 0; written < bytes.byteLength; ) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.byteLength - written);
    // No progress and no error: treat it as the full disk it almost certainly is, not a loop.
    if (!(bytesWritten > 0)) throw Object.assign(new Error('the disk took none of the bytes written'), { code: 'ENOSPC' });
    written += bytesWritten;
  }
}

/**
 * Appends `bytes` to an open file and fdatasyncs it: a write is acknowledged only after this
 * resolves. On failure the caller cuts the file back to its size before (each keeps its own
 * rule for a cut back that fails too: journal.ts, fold-history.ts, idempotency/file-store.ts).
 */
export async function appendAndSync(handle: WritableHandle, bytes: Uint8Array): Promise<void> {
  await writeAll(handle, bytes);
  await handle.datasync();
}

/**
 * Writes bytes to a fresh temp file beside `path` and fsyncs it; answers its path and identity.
 * A failure leaves no temp file behind.
 */
export async function writeTempFile(path: string, bytes: Uint8Array | readonly Uint8Array[], mode = 0o644, files: WritableFiles = DISK_FILES): Promise<{ temp: string; identity: string }> {
  const temp = tempPathFor(path);
  // A file given in pieces (a CSV fold's slices) is written piece by piece, never joined into one buffer.
  return { temp, identity: await writeNewFile(temp, bytes instanceof Uint8Array ? [bytes] : bytes, mode, files) };
}

/**
 * Creates `temp` (which must not exist: a name from `tempPathFor`), writes `pieces` to it as they
 * come and fsyncs it; answers its identity. A failure leaves no file behind. A fold's worker
 * writes the new package this way, a piece at a time (fold.ts).
 */
export async function writeNewFile(temp: string, pieces: Iterable<Uint8Array>, mode = 0o644, files: WritableFiles = DISK_FILES): Promise<string> {
  const handle = await files.open(temp, 'wx', mode);
  try {
    for (const piece of pieces) await writeAll(handle, piece);
    await handle.sync();
  } catch (error) {
    await handle.close().catch(() => undefined);
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await handle.close();
  // rename keeps inode, size and mtime (not ctime: commitTempFile gives the identity after it).
  return identityOf(await stat(temp));
}

/**
 * Moves a synced temp file over `path` and makes the rename itself durable. Answers the file's
 * identity after the rename (which changes its ctime) while it is still the temp file's inode;
 * null when it is not (replaced again already) or cannot be looked at. A failed rename removes
 * the temp file.
 */
export async function commitTempFile(temp: string, path: string): Promise<string | null> {
  const before = await stat(temp);
  try {
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw error;
  }
  await fsyncDirectory(dirname(path));
  const after = await stat(path).catch(() => null);
  return after !== null && after.ino === before.ino && after.dev === before.dev && after.size === before.size && after.mtimeMs === before.mtimeMs ? identityOf(after) : null;
}

/**
 * Replaces `path` with `bytes`: after a crash at any moment it holds the old bytes or the new.
 * A symlink stays a link: its target is replaced.
 */
export async function replaceFileDurably(path: string, bytes: Uint8Array, mode = 0o644): Promise<void> {
  const file = await realpath(path).catch(() => path);
  const { temp } = await writeTempFile(file, bytes, mode);
  await commitTempFile(temp, file);
}

/**
 * The same at once, for the few places that cannot wait (a process `exit` hook): replaces `path`
 * with `data` (created 0600), naming the file in the error of a failed write.
 */
export function writeFileAtomicSync(path: string, data: string): void {
  const temp = tempPathFor(path);
  mkdirSync(dirname(path), { recursive: true });
  let fd: number;
  try {
    fd = openSync(temp, 'wx', 0o600);
  } catch (error) {
    throw cannotWriteFile(path, error);
  }
  try {
    writeSync(fd, data, null, 'utf8');
    fsyncSync(fd);
  } catch (error) {
    // A full disk: no half-written temp file is left behind.
    closeSync(fd);
    unlinkQuietlySync(temp);
    throw cannotWriteFile(path, error);
  }
  closeSync(fd);
  renameSync(temp, path);
  fsyncDirectorySync(dirname(path));
}

function unlinkQuietlySync(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

// Best effort: an exit hook has no one left to tell (some platforms, Windows, cannot open a folder).
function fsyncDirectorySync(folder: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(folder, 'r');
    fsyncSync(fd);
  } catch {
    // see above
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Removes temp files a crash left beside `path`. The workbook's folder is not covered by the
 * state folder's lock (another server with its own state folder may serve the same file), so a
 * temp file whose process is still alive may be a fold in progress and is left alone.
 */
export async function removeStaleTempFiles(path: string): Promise<number> {
  const prefix = `.${basename(path)}.sheetrest-`;
  let removed = 0;
  for (const name of await readdir(dirname(path)).catch(() => [] as string[])) {
    const owner = tempFileOwner(name);
    if (name.startsWith(prefix) && name.endsWith('.tmp') && (owner === undefined || owner === process.pid || !isAlive(owner))) {
      await unlink(join(dirname(path), name)).catch(() => undefined);
      removed++;
    }
  }
  return removed;
}

/**
 * Why the source cannot write `path`, or null when it can. Probes by opening for writing and
 * creating a temp file rather than asking `access`, which some runtimes answer from the mode
 * bits alone (wrong for root, immutable files and read-only mounts).
 */
export async function whyNotWritable(path: string, stateDir: string): Promise<string | null> {
  try {
    // Opening without writing changes neither the content nor the mtime.
    await (await open(path, 'r+')).close();
  } catch (error) {
    return `the file is not writable (${errorCode(error) ?? 'denied'})`;
  }
  if (!(await canCreateFilesIn(path))) return 'its folder does not allow new files';
  try {
    await mkdir(stateDir, { recursive: true });
  } catch (error) {
    return `the state folder ${stateDir} cannot be created (${errorCode(error) ?? 'denied'})`;
  }
  if (!(await canCreateFilesIn(join(stateDir, 'probe')))) return `the state folder ${stateDir} does not allow new files`;
  return null;
}

/** Whether a temp file can be created beside `path` (a fold renames one over the file). */
async function canCreateFilesIn(path: string): Promise<boolean> {
  const probe = tempPathFor(path);
  try {
    await (await open(probe, 'wx')).close();
    await unlink(probe);
    return true;
  } catch {
    return false;
  }
}
