// `npm start -- --admin` (or SHEETREST_ADMIN=1) with no admin token set: the server makes one
// into the state folder, `<stateDir>/admin-token` (mode 0600), and keeps using it on later
// starts; the CLI prints the file's path, never the token (docs/admin-api.md, "Turning it on").
//   await adminTokenFile('/srv/.sheetrest') -> { path: '/srv/.sheetrest/admin-token', token: '9f3c…', made: true }
import { randomBytes } from 'node:crypto';
import { lstat, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';

export const ADMIN_TOKEN_FILE = 'admin-token';

export interface AdminTokenFile {
  readonly path: string;
  readonly token: string;
  /** true: made now; false: read from an earlier start. */
  readonly made: boolean;
}

/** The token in `<stateDir>/admin-token`, made (64 hex characters, 32 random bytes) when the file does not exist. */
export async function adminTokenFile(stateDir: string): Promise<AdminTokenFile> {
  const path = join(stateDir, ADMIN_TOKEN_FILE);
  const token = randomBytes(32).toString('hex');
  try {
    // Exclusive: two starts at once cannot each write their own; created 0600, never readable by others first.
    const handle = await open(path, 'wx', 0o600);
    try {
      await handle.writeFile(`${token}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    return { path, token, made: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw new Error(`could not make the admin token file ${path}: ${(error as Error).message}`);
  }
  // A link is not followed: tightening its mode below would chmod whatever it points at.
  if ((await lstat(path).catch(() => undefined))?.isSymbolicLink()) {
    throw new Error(`the admin token file ${path} is a symbolic link; sheetrest does not follow it (it would tighten the mode of the file it points to): replace it with the file itself, or delete it to have a new one made`);
  }
  let kept: string;
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, 'r');
    kept = (await handle.readFile('utf8')).trim();
  } catch (error) {
    await handle?.close();
    // A folder of that name, or a file the server may not read: say which file, not a bare EISDIR.
    throw new Error(`could not read the admin token file ${path} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}); make it a readable file holding the token, or delete it to have a new one made`);
  }
  try {
    if (kept.length < 16 || /\s/.test(kept)) {
      throw new Error(`the admin token file ${path} does not hold a token (at least 16 characters, no white space); delete it to have a new one made`);
    }
    // A file copied in with a looser mode is tightened (the file read, through its handle): the token guards every connection.
    if (((await handle.stat()).mode & 0o077) !== 0) await handle.chmod(0o600);
  } finally {
    await handle.close();
  }
  return { path, token: kept, made: false };
}
