// The state folder (`.sheetrest/` by default) holds what the server must remember across
// restarts: `quota.json` with this month's request counts, and any journal a source keeps.
// These helpers replace a file there so that a crash leaves either the old or the new
// version on disk, never a torn one.
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, writeSync } from 'node:fs';
import { mkdir, open, rename } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Name of the state folder created beside the config file (or the workbook in single-file mode). */
export const DEFAULT_STATE_DIR = '.sheetrest';

/** Creates the state folder (and its parents) when it does not exist yet. */
export async function ensureStateDir(stateDir: string): Promise<void> {
  await mkdir(stateDir, { recursive: true });
}

/**
 * Replaces `path` with `data`: write a temporary file beside it, fsync it, rename it over the
 * old one, then fsync the folder so that the rename itself survives a power cut.
 */
export async function writeFileAtomic(path: string, data: string): Promise<void> {
  const temporary = temporaryPathFor(path);
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(data, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
  await syncFolder(dirname(path));
}

/** The same as `writeFileAtomic`, for the few places that cannot wait (a process `exit` hook). */
export function writeFileAtomicSync(path: string, data: string): void {
  const temporary = temporaryPathFor(path);
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(temporary, 'w');
  try {
    writeSync(fd, data, null, 'utf8');
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(temporary, path);
  syncFolderSync(dirname(path));
}

let temporaryFiles = 0;

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
