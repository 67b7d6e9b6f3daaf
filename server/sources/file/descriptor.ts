// The file source type: `{"type": "file", "path": "book.xlsx"}` serves a workbook on this
// server (.xlsx, .xlsm, .ods or .csv), its path relative to the config file's folder (or, made
// through the admin API, to admin.fileRoot). One writing connection per file; opened with the
// workbook's lock held (server/durable/lock.ts), so a second server on the same file cannot
// write it either. Listed in server/sources/registry.ts.
import { resolve } from 'node:path';
import * as v from 'valibot';
import { strictBare, text } from '../../config/fields.ts';
import { lockWorkbook, type StateLock } from '../../durable/lock.ts';
import type { Logger } from '../../log.ts';
import type { SourceType } from '../source-type.ts';
import { formatOfPath } from './format.ts';

export const FileSourceSchema = strictBare('an object', {
  type: v.literal('file'),
  /** Relative to the config file's folder. */
  path: text('a file path'),
});

export type FileSourceConfig = v.InferOutput<typeof FileSourceSchema>;

export const fileSourceType = {
  type: 'file',
  schema: FileSourceSchema,
  fieldNames: ['type', 'path'],
  secretFields: [],
  absolutePaths: (source, base) => ({ ...source, path: resolve(base, source.path) }),
  resolve: (source, base) => ({ ...source, path: resolve(base, source.path) }),
  servedFile: (source) => ({ path: source.path, field: 'path' }),
  sharedByInstances: false,
  async open(source, { readOnly, stateDir, log, receipts, events }) {
    const { openFileSource } = await import('./mod.ts');
    // One writing server per file, whatever its state folder (lock.ts): taken before the journal is read.
    const lock = readOnly ? null : workbookLock(source.path, log);
    try {
      const opened = await openFileSource({ path: source.path, stateDir, readOnly, log: (message, level = 'error') => log[level](message), receipts, ...(events === undefined ? {} : { events }) });
      if (lock === null) return opened;
      const close = opened.close.bind(opened);
      opened.close = async () => {
        try {
          await close();
        } finally {
          lock.release();
        }
      };
      return opened;
    } catch (error) {
      lock?.release();
      throw error;
    }
  },
  endpoints: () => [],
  serverCredentials: () => null,
  serverFile: (source, field) => ({
    path: source.path,
    field: `${field}.path`,
    // The extension says nothing about the file, but a name no reader takes need not be looked at.
    problem: formatOfPath(source.path) === null ? 'unsupported file type; sheetrest reads .xlsx, .xlsm, .ods and .csv files' : null,
  }),
  dashboardForm: {
    title: 'New connection from a file',
    fields: [{ name: 'path', label: 'Workbook path (on the server)', placeholder: '/srv/crm.xlsx' }],
  },
} as const satisfies SourceType<FileSourceConfig, FileSourceConfig>;

/** The workbook's lock, or none where its folder does not let this process create files (it then cannot fold there either). */
function workbookLock(path: string, log: Logger): StateLock | null {
  try {
    return lockWorkbook(path);
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
    if (code !== 'EACCES' && code !== 'EPERM' && code !== 'EROFS' && code !== 'ENOENT') throw error;
    log.warn('the workbook\'s folder is not writable: serving it without its lock', { path, error: code });
    return null;
  }
}
