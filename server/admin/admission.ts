// What a connection made through the admin API may use (docs/admin-api.md, "What the admin API
// may open"). The admin token lets someone describe a source; opening it must not let them read
// the server's other files, or send the server's secrets to a host of their choosing:
//   POST /_admin/connections {"id": "pw", "source": {"type": "file", "path": "outside/pw.csv"}}
//     (a symlink to /etc/passwd) -> 400 invalid_body, the one message every refused path gets
//   {"id": "x", "source": {"type": "google", "spreadsheetId": "1AbC", "accessToken": {"env": "HOME"}}}
//     -> 400 invalid_body "source.accessToken: the admin API does not read environment variables; ..."
//   {"id": "x", "source": {"type": "google", ..., "rootUrl": "http://127.0.0.1:9/"}}
//     -> 400 invalid_body "source.rootUrl: ... not in admin.allowedEndpoints ..."
// The config file's own connections are not checked here: the operator wrote them.
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative } from 'node:path';
import { apiError, isApiError, type ApiError } from '../../lib/errors.ts';
import type { AdminRules } from '../config/config.ts';
import { sourceTypeOf, type ParsedSource, type ServerFile } from '../sources/registry.ts';

/** The file an admitted path named when it was checked: a swap after the check shows as another dev/inode. */
export interface AdmittedFile {
  readonly dev: number;
  readonly ino: number;
}

/**
 * The rules on a source as it arrives in an admin request's body (before anything is read):
 * no `{"env"}` anywhere, endpoints from `admin.allowedEndpoints` only, and the server's own
 * credentials only when `admin.allowServerCredentials` says so. Null when it may be opened.
 */
export function checkRequestedSource(source: ParsedSource, rules: AdminRules, field = 'source'): ApiError | null {
  const env = envReference(source, field);
  if (env !== null) {
    // The field only: whether the variable exists is the server's business.
    return apiError('invalid_body', `The body is not valid: ${env}: the admin API does not read environment variables; give the value itself.`);
  }
  const type = sourceTypeOf(source);
  for (const [name, url] of type.endpoints(source, field)) {
    if (url !== undefined && !isAllowedEndpoint(url, rules.allowedEndpoints)) {
      return apiError('invalid_body', `The body is not valid: ${name}: the admin API may send requests only to ${rules.allowedEndpoints.join(', ') || 'no endpoint'} (admin.allowedEndpoints in the config file).`);
    }
  }
  const serverCredentials = type.serverCredentials(source);
  if (serverCredentials !== null && !rules.allowServerCredentials) {
    return apiError('invalid_body', `The body is not valid: ${field}: ${serverCredentials}, which needs "admin.allowServerCredentials": true in the config file.`);
  }
  return null;
}

/** The first field holding `{"env": ...}`, as `source.oauth.clientSecret`; null when none does. */
function envReference(value: unknown, field: string): string | null {
  if (typeof value !== 'object' || value === null) return null;
  if (Object.hasOwn(value, 'env')) return field;
  for (const [key, inner] of Object.entries(value)) {
    const found = envReference(inner, `${field}.${key}`);
    if (found !== null) return found;
  }
  return null;
}

/**
 * Whether `url` is one of `allowed` (each an origin, or an origin and a path prefix):
 * `https://sheets.googleapis.com/v4/` is within `https://sheets.googleapis.com`, but
 * `https://sheets.googleapis.com.example.org/` is not (origins are compared whole).
 */
export function isAllowedEndpoint(url: string, allowed: readonly string[]): boolean {
  if (!URL.canParse(url)) return false;
  const target = new URL(url);
  return allowed.some((entry) => {
    if (!URL.canParse(entry)) return false;
    const base = new URL(entry);
    if (base.origin !== target.origin) return false;
    const prefix = base.pathname.endsWith('/') ? base.pathname : `${base.pathname}/`;
    return target.pathname.startsWith(prefix) || `${target.pathname}/` === prefix;
  });
}

/** The one answer for every path refused: outside the root, missing, a directory, a FIFO... all alike. */
export function refusedPath(field: string, rules: AdminRules): ApiError {
  return apiError('invalid_body', `The source cannot be opened: ${field}: the admin API opens only existing regular files inside ${rules.fileRoot} (admin.fileRoot), after following symlinks.`);
}

/**
 * Checks that `file.path` (absolute) is a regular file inside `admin.fileRoot` once symlinks
 * are followed, without opening it: a FIFO is refused before anything could block on it. Every
 * refusal is the same error, so that answers do not tell which paths exist outside the root.
 * A `file.problem` (a workbook's unknown extension, which says nothing about the file) is
 * answered before the file is looked at.
 */
export async function admitFile(file: ServerFile, rules: AdminRules): Promise<AdmittedFile | ApiError> {
  const { path, field } = file;
  if (file.problem !== null) return apiError('invalid_body', `The source cannot be opened: ${field}: ${file.problem}.`);
  try {
    const [root, real] = await Promise.all([realpath(rules.fileRoot), realpath(path)]);
    const inside = relative(root, real);
    // Outside: `..` first, or another drive on Windows (an absolute answer).
    if (inside === '' || inside.split(/[\\/]/)[0] === '..' || isAbsolute(inside)) return refusedPath(field, rules);
    const found = await stat(real);
    if (!found.isFile()) return refusedPath(field, rules);
    return { dev: found.dev, ino: found.ino };
  } catch {
    return refusedPath(field, rules);
  }
}

/** Whether `file.path` still names the file admitted before it was opened (not swapped meanwhile for another). */
export async function stillAdmitted(file: ServerFile, rules: AdminRules, before: AdmittedFile): Promise<ApiError | null> {
  const now = await admitFile({ ...file, problem: null }, rules);
  if (isApiError(now)) return now;
  return now.dev === before.dev && now.ino === before.ino ? null : refusedPath(file.field, rules);
}

/**
 * `opening`, or 'timeout' after `ms`. The opening goes on; if it succeeds late, `late` gets
 * what it opened (to close it), so a source that hangs holds up no later change.
 */
export async function withTimeout<T>(opening: Promise<T>, ms: number, late: (value: T) => void): Promise<T | 'timeout'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => {
      timedOut = true;
      resolve('timeout');
    }, ms);
  });
  opening.then(
    (value) => {
      if (timedOut) late(value);
    },
    () => undefined,
  );
  try {
    return await Promise.race([opening, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
