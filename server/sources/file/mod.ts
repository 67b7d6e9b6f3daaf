// Opens a workbook file as a source: `openFileSource({ path: 'demo.xlsx' })` serves
// `GET /sheets/demo` from demo.xlsx and journals writes in `.sheetrest/` beside it. A file that
// is missing, unreadable or of an unknown kind rejects with an Error naming the path and the
// problem, for the CLI to print before it exits.
import { createHash } from 'node:crypto';
import { access, readFile, realpath, rename } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { EventSink, ReceiptSink, Source } from '../source.ts';
import type { Workbook } from '../../../lib/workbook.ts';
import { csvTabName, decodeWorkbook } from './codec.ts';
import { formatOfPath } from './format.ts';
import type { CsvStyle } from './csv/csv.ts';
import { errorCode, fileIdentity, fingerprint, isMissing, removeStaleTempFiles, whyNotWritable } from '../../durable/disk.ts';
import { FileSource } from './file-source.ts';
import type { FileLog } from './state.ts';
import type { FoldOptions } from './fold-runner.ts';
import { rowsOnly } from './model.ts';
import { loadSheetJs, needsSheetJs } from './xlsx/sheetjs.ts';
import { readJournal, type JournalContents, type JournalFiles } from './journal.ts';

export { FileSource } from './file-source.ts';
export { formatOfPath, type FileFormat } from './format.ts';

export interface FileSourceOptions {
  /** The workbook: `.xlsx` (or `.xlsm`), `.ods` or `.csv`. */
  readonly path: string;
  /** Where the journal lives; default `.sheetrest/` beside the workbook. */
  readonly stateDir?: string;
  /** Refuse every write with 403 write_error; the file and the state folder are never touched. */
  readonly readOnly?: boolean;
  /** Fold the journal into the workbook once writes have been idle this long (ms; Infinity: only on close). */
  readonly foldAfterMs?: number;
  /** Fold the journal into the workbook once it holds this many writes, busy or not. */
  readonly foldAfterEntries?: number;
  /** Where problems (at error) and news (at info) are reported; default console.error. */
  readonly log?: FileLog;
  /** How the journal opens its files; for tests that fail the disk. */
  readonly journalFiles?: JournalFiles;
  /** Where folds run; a worker thread by default (fold-runner.ts). */
  readonly fold?: FoldOptions;
  /** Where the Idempotency-Key receipts journaled with writes are kept (server/idempotency/file-store.ts). */
  readonly receipts?: ReceiptSink;
  /** Where the change-feed events journaled with writes go (the connection's webhook outbox, server/webhooks/). */
  readonly events?: EventSink;
}

export const DEFAULT_FOLD_AFTER_MS = 200;
export const DEFAULT_FOLD_AFTER_ENTRIES = 5000;

export async function openFileSource(options: FileSourceOptions): Promise<FileSource & Source> {
  const path = resolve(options.path);
  const log = options.log ?? ((message: string) => console.error(message));
  const format = formatOfPath(path);
  if (format === null) throw new Error(`${options.path}: unsupported file type; sheetrest reads .xlsx, .xlsm, .ods and .csv files`);
  const stateDir = resolve(options.stateDir ?? join(dirname(path), '.sheetrest'));
  const identity = await fileIdentity(path).catch(() => null);
  const bytes = await readFile(path).catch((error: unknown) => {
    throw new Error(`${options.path}: ${readProblem(error)}`);
  });
  const tabName = csvTabName(path);
  const print = fingerprint(bytes);
  // The server keeps the rows only (model.ts); what writing the file back needs, each fold decodes afresh.
  let workbook: Workbook;
  let csvStyle: CsvStyle;
  let cannotWrite: string | null;
  let readOnlyTabs: ReadonlyMap<string, string>;
  if (needsSheetJs(format)) await loadSheetJs();
  try {
    const decoded = decodeWorkbook(bytes, format, tabName);
    workbook = rowsOnly(decoded.workbook, format);
    ({ csvStyle, cannotWrite, readOnlyTabs } = decoded);
  } catch (error) {
    throw new Error(`${options.path}: not a readable .${format} file (${error instanceof Error ? error.message : String(error)})`);
  }
  // A symlinked workbook is written where the link points (a fold replaces the target and keeps
  // the link, file-source.ts), and its journal is the real file's, whichever path reaches it.
  const real = await realpath(path).catch(() => path);
  const notWritable =
    options.readOnly === true
      ? 'the connection is read-only'
      : cannotWrite !== null
        ? `sheetrest cannot write this file back (${cannotWrite})`
        : await whyNotWritable(real, stateDir);
  if (notWritable !== null && options.readOnly !== true) log(`sheetrest: serving ${path} read-only: ${notWritable}`);
  const journalPath = journalPathOf(stateDir, real);
  // Versions before issue 20 named the journal after the path as configured: a symlink's.
  if (real !== path && notWritable === null) await adoptJournal(journalPathOf(stateDir, path), journalPath);
  let journal: JournalContents | null;
  try {
    journal = await readJournal(journalPath);
  } catch (error) {
    throw new Error(`${journalPath}: cannot read the journal of ${options.path} (${errorCode(error) ?? (error instanceof Error ? error.message : String(error))})`);
  }
  if (journal?.torn) log(`sheetrest: ${journalPath}: dropped a last line cut short (a write interrupted before it was acknowledged)`);
  if (journal !== null && journal.damaged.length > 0) {
    log(
      `sheetrest: ${journalPath}: line(s) ${journal.damaged.join(', ')} are damaged and their writes lost; ` +
        'the intact writes after them are re-checked against the file, and any that no longer fits is saved to a conflict file',
    );
  }
  if (notWritable === null) {
    await removeStaleTempFiles(real);
    if (real !== path) await removeStaleTempFiles(path);
  }
  const config = {
    path,
    stateDir,
    journalPath,
    tabName,
    notWritable,
    foldAfterMs: options.foldAfterMs ?? DEFAULT_FOLD_AFTER_MS,
    foldAfterEntries: options.foldAfterEntries ?? DEFAULT_FOLD_AFTER_ENTRIES,
    log,
    format,
    cannotWrite,
    readOnlyTabs,
    csvStyle,
    identity: identity ?? '',
    fingerprint: print,
    ...(options.journalFiles === undefined ? {} : { journalFiles: options.journalFiles }),
    ...(options.fold === undefined ? {} : { fold: options.fold }),
    ...(options.receipts === undefined ? {} : { receipts: options.receipts }),
    ...(options.events === undefined ? {} : { events: options.events }),
  };
  const source = new FileSource(config, workbook);
  await source.recover(journal);
  return source;
}

/**
 * Why `bytes` is not a workbook this server can read as `name` says (`crm.xlsx`: an .xlsx), or
 * null when it is one: what the admin API's upload checks before it stores a file.
 *   await whyNotAWorkbook(new TextEncoder().encode('hello'), 'crm.xlsx') -> 'not a readable .xlsx file (...)'
 */
export async function whyNotAWorkbook(bytes: Uint8Array, name: string): Promise<string | null> {
  const format = formatOfPath(name);
  if (format === null) return 'not a .xlsx, .xlsm, .ods or .csv file';
  if (needsSheetJs(format)) await loadSheetJs();
  try {
    decodeWorkbook(bytes, format, csvTabName(name));
    return null;
  } catch (error) {
    return `not a readable .${format} file (${error instanceof Error ? error.message : String(error)})`;
  }
}

/** One journal per workbook: the path's hash keeps two `demo.xlsx` in different folders apart. */
function journalPathOf(stateDir: string, path: string): string {
  return join(stateDir, `${basename(path)}.${createHash('sha256').update(path).digest('hex').slice(0, 8)}.journal`);
}

/** Moves a journal (and its fold history, `.compacted`) kept under an older name to the current one, unless one is there already. */
async function adoptJournal(from: string, to: string): Promise<void> {
  const exists = (path: string) => access(path).then(() => true, () => false);
  if ((await exists(to)) || !(await exists(from))) return;
  for (const [older, newer] of [[from.replace(/\.journal$/, '.compacted'), to.replace(/\.journal$/, '.compacted')], [from, to]]) {
    await rename(older, newer).catch((error: unknown) => {
      if (!isMissing(error)) throw new Error(`${older}: cannot move the journal to ${newer} (${errorCode(error) ?? String(error)})`);
    });
  }
}

function readProblem(error: unknown): string {
  switch (errorCode(error)) {
    case 'ENOENT':
    case 'ENOTDIR':
      return 'file not found';
    case 'EACCES':
    case 'EPERM':
      return 'cannot read the file (permission denied)';
    case 'EISDIR':
      return 'is a folder, not a workbook file';
    default:
      return `cannot read the file (${errorCode(error) ?? String(error)})`;
  }
}
