// Workbooks uploaded through the admin API, stored in `admin.fileRoot` so that a connection can
// be made from them (docs/admin-api.md, "Uploading a workbook"):
//   PUT /_admin/files/crm.xlsx  Authorization: Bearer <admin token>  <the file's bytes>
//   -> 201 {"name": "crm.xlsx", "path": "/srv/sheets/crm.xlsx", "format": "xlsx", "bytes": 5123, "replaced": false, ...}
//   then POST /_admin/connections {"id": "crm", "source": {"type": "file", "path": "/srv/sheets/crm.xlsx"}}
// The body is the file itself (no multipart): curl's --data-binary @crm.xlsx, a browser's
// fetch(url, { method: 'PUT', body: file }). The name is one path segment, so it cannot leave
// the root; an existing file is kept unless `?replace=true`; the body is checked to be a
// workbook the server reads before anything is written, and is written atomically (a temp file
// beside it, fsynced, then linked or renamed into place and the folder fsynced).
import { link, lstat, realpath, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { apiError, type ApiError } from '../../lib/errors.ts';
import { commitTempFile, errorCode, fsyncDirectory, isDiskFull, writeTempFile } from '../durable/disk.ts';
import { formatOfPath, whyNotAWorkbook } from '../sources/file/mod.ts';

export interface UploadSettings {
  /** Absolute: the folder uploads are stored in (`admin.fileRoot`). */
  readonly fileRoot: string;
  /** The largest body stored (`admin.uploadBytes`). */
  readonly uploadBytes: number;
}

export interface StoredFileView {
  readonly name: string;
  /** Absolute, symlinks of the root followed: what `source.path` of a new connection names. */
  readonly path: string;
  readonly format: 'xlsx' | 'ods' | 'csv';
  readonly bytes: number;
  /** Whether a file of that name was there and is now replaced. */
  readonly replaced: boolean;
  readonly links: { readonly connections: string };
}

/**
 * Characters a stored name may not hold: separators, those Windows refuses, control characters
 * (C0 and C1), and invisible ones that make a name show as another in the dashboard or a shell:
 * bidirectional marks and overrides (`\u202E` shows `vsc.exe.csv` as `csv.exe.csv`), zero-width
 * space and the byte-order mark, line and paragraph separators. (Zero-width joiners stay: emoji and
 * several scripts need them.)
 */
const FORBIDDEN = /[\\/<>:"|?*\u0000-\u001f\u007f-\u009f\u061c\u200b\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff]/u;
/** Characters, and bytes in UTF-8: with the temp file's suffix (`.sheetrest-<pid>-<hex>.tmp`, 36 bytes), within the 255 bytes a file name may have. */
const MAX_NAME = 200;

/**
 * Why `name` cannot be stored (400 invalid_parameter), or null: one path segment, not hidden
 * (so neither `.` nor `..`), ending in .xlsx, .xlsm, .ods or .csv.
 *   checkUploadName('../etc/x.csv') -> 400 "... may not hold / \\ : * ? \" < > | or control characters"
 */
export function checkUploadName(name: string): ApiError | null {
  const refuse = (why: string) => apiError('invalid_parameter', `The file name "${name.slice(0, MAX_NAME)}" cannot be stored: ${why}.`);
  if (name === '' || name.length > MAX_NAME || new TextEncoder().encode(name).byteLength > MAX_NAME) return refuse(`a name has 1 to ${MAX_NAME} characters (${MAX_NAME} bytes in UTF-8)`);
  if (FORBIDDEN.test(name)) return refuse('a name is one file name inside admin.fileRoot, and may not hold / \\ : * ? " < > |, control characters or invisible ones (bidirectional overrides, zero-width spaces)');
  if (name.startsWith('.') || name.trim() !== name) return refuse('a name may not start with a dot or start or end with a space');
  if (formatOfPath(name) === null) return refuse('sheetrest reads .xlsx, .xlsm, .ods and .csv files; end the name with one of them');
  return null;
}

/** `PUT /_admin/files/%ff.csv`: the name as sent (percent-encoded, so plain ASCII), and how to send it. */
export function undecodableUploadName(encoded: string): ApiError {
  return apiError('invalid_parameter', `The file name "${encoded.slice(0, MAX_NAME)}" cannot be stored: its percent-encoding is not UTF-8; encode the name's bytes as UTF-8 (as encodeURIComponent does).`);
}

/** `?replace=true` (or `1`): may overwrite; anything else in the query is refused, naming what is known. */
export function replaceOf(query: URLSearchParams): boolean | ApiError {
  for (const key of query.keys()) {
    if (key !== 'replace') return apiError('invalid_parameter', `Unknown parameter "${key}": an upload takes only ?replace=true.`);
  }
  const values = query.getAll('replace');
  if (values.length === 0) return false;
  if (values.length > 1 || !['true', '1', 'false', '0'].includes(values[0])) {
    return apiError('invalid_parameter', 'replace is true or false (given once).');
  }
  return values[0] === 'true' || values[0] === '1';
}

/** The 413 of a body over the cap, naming the setting. */
export function tooLargeUpload(settings: UploadSettings): ApiError {
  return apiError('payload_too_large', `The file is larger than ${settings.uploadBytes} bytes, the most admin.uploadBytes lets an upload store; raise it in the config file, or copy the file into admin.fileRoot and create the connection from its path.`);
}

/**
 * Stores `bytes` as `name` (already checked by checkUploadName) in the root: a workbook the
 * server can read, and a new name unless `replace`. Answers what was stored, or the refusal.
 */
export async function storeUpload(name: string, bytes: Uint8Array, replace: boolean, settings: UploadSettings): Promise<StoredFileView | ApiError> {
  if (bytes.byteLength === 0) return apiError('invalid_body', `The body is empty: send the bytes of ${name} (curl --data-binary @${name}).`);
  let root: string;
  try {
    root = await realpath(settings.fileRoot);
  } catch {
    return apiError('internal_error', `admin.fileRoot (${settings.fileRoot}) is not a folder this server can reach; nothing was stored.`);
  }
  const path = join(root, name);
  const existing = await lstat(path).catch(() => null);
  if (existing !== null && !replace) {
    return apiError('conflict', `There is already a file "${name}" in admin.fileRoot; send ?replace=true to replace it (a connection serving it sees the new content as an outside edit), or choose another name.`);
  }
  if (existing !== null && !existing.isFile()) return apiError('conflict', `"${name}" in admin.fileRoot is not a regular file (a folder or a link); it cannot be replaced by an upload.`);
  const problem = await whyNotAWorkbook(bytes, name);
  if (problem !== null) return apiError('invalid_body', `The body is ${problem}; nothing was stored.`);
  try {
    const { temp } = await writeTempFile(path, bytes, 0o644);
    if (replace) await commitTempFile(temp, path);
    else {
      // link() refuses a name that exists: a file that arrived since the check is never overwritten.
      try {
        await link(temp, path);
      } catch (error) {
        await unlink(temp).catch(() => undefined);
        if (errorCode(error) === 'EEXIST') return apiError('conflict', `There is already a file "${name}" in admin.fileRoot (it arrived meanwhile); send ?replace=true to replace it.`);
        throw error;
      }
      await unlink(temp);
      await fsyncDirectory(root);
    }
  } catch (error) {
    if (isDiskFull(error)) return apiError('insufficient_storage', `The disk holding admin.fileRoot is full: ${name} was not stored.`);
    return apiError('internal_error', `${name} could not be written in admin.fileRoot (${errorCode(error) ?? 'an error'}); nothing was stored.`);
  }
  return { name, path, format: formatOfPath(name) ?? 'csv', bytes: bytes.byteLength, replaced: existing !== null, links: { connections: '/_admin/connections' } };
}
