// The state folder (`.sheetrest/` by default) holds what the server must remember across
// restarts: `quota.json` with this month's request counts, and any journal a source keeps.
// These helpers replace a file there (through disk.ts, so that a crash leaves either the old or
// the new version on disk, never a torn one), read it back, and clear the temp files a crash
// left behind. Everything here is private to the server: files are created 0600, like the journals.
import { mkdir, readdir, readFile, stat, unlink } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import * as v from 'valibot';
import { cannotWriteFile, commitTempFile, errorCode, writeTempFile } from './disk.ts';

/** Name of the state folder created beside the config file (or the workbook in single-file mode). */
export const DEFAULT_STATE_DIR = '.sheetrest';

/**
 * Creates the state folder (and its parents) when it does not exist yet. When it cannot, the
 * error says why and what to do: `--state-dir notes.txt` -> "the state folder notes.txt is a
 * file, not a folder: give --state-dir ... the path of a folder, or move the file away".
 */
export async function ensureStateDir(stateDir: string): Promise<void> {
  try {
    await mkdir(stateDir, { recursive: true });
  } catch (error) {
    throw new Error(await whyNoStateDir(stateDir, error));
  }
}

const STATE_DIR_OPTION = '--state-dir (or "stateDir" in the config file)';

async function whyNoStateDir(stateDir: string, error: unknown): Promise<string> {
  // The nearest existing path on the way, when it is not a folder (the runtimes say EEXIST or ENOTDIR).
  for (let path = resolve(stateDir); ; path = dirname(path)) {
    const found = await stat(path).catch(() => undefined);
    if (found !== undefined && !found.isDirectory()) {
      return path === resolve(stateDir)
        ? `the state folder ${stateDir} is a file, not a folder: give ${STATE_DIR_OPTION} the path of a folder, or move the file away`
        : `the state folder ${stateDir} cannot be made: ${path} is a file, not a folder; give ${STATE_DIR_OPTION} another path`;
    }
    if (found !== undefined || dirname(path) === path) break;
  }
  return `the state folder ${stateDir} cannot be created (${errorCode(error) ?? String(error)}): check that its parent folder exists and may be written, or give ${STATE_DIR_OPTION} another path`;
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
    // Errors name the file: on a full disk the runtime's own message names none.
    const { temp } = await writeTempFile(path, new TextEncoder().encode(data), 0o600).catch((error: unknown) => {
      throw cannotWriteFile(path, error);
    });
    return temp;
  },
  async commit(temporary, path) {
    await commitTempFile(temporary, path);
  },
  async discard(temporary) {
    await unlink(temporary).catch(() => undefined);
  },
};

/**
 * Temp files in the state folder that a crash (or a forced exit) left behind: the quota's and the
 * admin API's `.quota.json.sheetrest-<pid>-<hex>.tmp` (`.admin.json...`; `.quota.json.<pid>.<n>.tmp`
 * from earlier versions), a journal's, fold history's or Idempotency-Key store's
 * `.<file>.journal.sheetrest-<pid>-<hex>.tmp` and the lock's own `lock.<pid>.tmp`. Removed at
 * start, and only once the state folder's lock is held: before that they could be a live process's.
 */
const LEFTOVER = [
  /^\.(?:quota|admin)\.json\.\d+\.\d+\.tmp$/,
  /^\.(?:quota|admin)\.json\.sheetrest-\d+-[0-9a-f]+\.tmp$/,
  /^\..+\.(?:journal|compacted|idempotency)\.sheetrest-(?:\d+-)?[0-9a-f]+\.tmp$/,
  /^lock\.\d+\.tmp$/,
];

/** Removes leftover temp files from the state folder (call with its lock held); answers their names. */
export async function removeLeftoverTempFiles(stateDir: string): Promise<string[]> {
  const names = await readdir(stateDir).catch(() => [] as string[]);
  const leftovers = names.filter((name) => LEFTOVER.some((pattern) => pattern.test(name)));
  for (const name of leftovers) await unlink(join(stateDir, name)).catch(() => undefined);
  return leftovers;
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
