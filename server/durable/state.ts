// The state folder (`.sheetrest/` by default) holds what the server must remember across
// restarts: `quota.json` with this month's request counts, and any journal a source keeps.
// These helpers replace a file there so that a crash leaves either the old or the new
// version on disk, never a torn one, and clear the temp files a crash left behind.
// Everything here is private to the server: files are created 0600, like the journals.
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import * as v from 'valibot';
import { cannotWriteFile } from './disk.ts';

/** Name of the state folder created beside the config file (or the workbook in single-file mode). */
export const DEFAULT_STATE_DIR = '.sheetrest';

/** Creates the state folder (and its parents) when it does not exist yet. */
export async function ensureStateDir(stateDir: string): Promise<void> {
  await mkdir(stateDir, { recursive: true });
}

/**
 * Replacing a file in two steps, so that a caller can order the second: `prepare` writes a
 * temporary file beside `path` and fsyncs it; `commit` renames it over `path` and fsyncs the
 * folder so that the rename itself survives a power cut; `discard` drops a prepared file that
 * is no longer wanted. Injectable, so tests can stall or fail a write.
 */
export interface AtomicWriter {
  prepare(path: string, data: string): Promise<string>;
  commit(temporary: string, path: string): Promise<void>;
  discard(temporary: string): Promise<void>;
}

export const diskWriter: AtomicWriter = {
  async prepare(path, data) {
    const temporary = temporaryPathFor(path);
    // Errors name the file: on a full disk the runtime's own message names none.
    const handle = await open(temporary, 'w', 0o600).catch((error: unknown) => {
      throw cannotWriteFile(path, error);
    });
    try {
      await handle.writeFile(data, 'utf8');
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => undefined);
      await unlink(temporary).catch(() => undefined);
      throw cannotWriteFile(path, error);
    }
    await handle.close();
    return temporary;
  },
  async commit(temporary, path) {
    try {
      await rename(temporary, path);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
    await syncFolder(dirname(path));
  },
  async discard(temporary) {
    await unlink(temporary).catch(() => undefined);
  },
};

/** Replaces `path` with `data` at once, for the few places that cannot wait (a process `exit` hook). */
export function writeFileAtomicSync(path: string, data: string): void {
  const temporary = temporaryPathFor(path);
  mkdirSync(dirname(path), { recursive: true });
  let fd: number;
  try {
    fd = openSync(temporary, 'w', 0o600);
  } catch (error) {
    throw cannotWriteFile(path, error);
  }
  try {
    writeSync(fd, data, null, 'utf8');
    fsyncSync(fd);
  } catch (error) {
    // A full disk: no half-written temp file is left behind.
    closeSync(fd);
    unlinkQuietlySync(temporary);
    throw cannotWriteFile(path, error);
  }
  closeSync(fd);
  renameSync(temporary, path);
  syncFolderSync(dirname(path));
}

function unlinkQuietlySync(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

let temporaryFiles = 0;

/**
 * Temp files in the state folder that a crash (or a forced exit) left behind: the quota's and the admin API's
 * `.quota.json.<pid>.<n>.tmp` (`.admin.json...`), a journal's, compaction history's or Idempotency-Key store's
 * `.<file>.journal.sheetrest-<pid>-<hex>.tmp` and the lock's
 * own `lock.<pid>.tmp`. Removed at start, and only once the state folder's lock is held: before
 * that they could be a live process's.
 */
const LEFTOVER = [/^\.(?:quota|admin)\.json\.\d+\.\d+\.tmp$/, /^\..+\.(?:journal|compacted|idempotency)\.sheetrest-(?:\d+-)?[0-9a-f]+\.tmp$/, /^lock\.\d+\.tmp$/];

/** Removes leftover temp files from the state folder (call with its lock held); answers their names. */
export async function removeLeftoverTempFiles(stateDir: string): Promise<string[]> {
  const names = await readdir(stateDir).catch(() => [] as string[]);
  const leftovers = names.filter((name) => LEFTOVER.some((pattern) => pattern.test(name)));
  for (const name of leftovers) await unlink(join(stateDir, name)).catch(() => undefined);
  return leftovers;
}

// Each write gets its own temporary name (pid and a counter), so that a synchronous write from
// an exit hook, or a second process sharing the folder by mistake, never truncates a file
// another write is still filling.
function temporaryPathFor(path: string): string {
  temporaryFiles += 1;
  return join(dirname(path), `.${basename(path)}.${process.pid}.${temporaryFiles}.tmp`);
}

// Some platforms (Windows) cannot open a folder for fsync; there the rename is as durable as
// the file system makes it, and that is the best available.
async function syncFolder(folder: string): Promise<void> {
  let handle;
  try {
    handle = await open(folder, 'r');
    await handle.sync();
  } catch {
    // see above: best effort
  } finally {
    await handle?.close().catch(() => {});
  }
}

function syncFolderSync(folder: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(folder, 'r');
    fsyncSync(fd);
  } catch {
    // see syncFolder: best effort
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * A JSON file of the state folder, checked against `schema`: undefined when there is none. A
 * damaged file (not JSON, or not the schema's shape) throws `damaged(problem)`: starting without
 * what it held (counts, connections) would silently hand something out again, so the operator
 * decides. `problem` names the first field found wrong, when one is.
 */
export async function readStateFile<T>(file: string, schema: v.GenericSchema<unknown, T>, damaged: (problem: string) => string): Promise<T | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    throw new Error(damaged('not JSON'));
  }
  const result = v.safeParse(schema, data);
  if (result.success) return result.output;
  const issue = result.issues[0];
  const where = (issue.path ?? []).map((item) => String(item.key)).join('.');
  throw new Error(damaged(`${where === '' ? '' : `${where}: `}${issue.message}`));
}
