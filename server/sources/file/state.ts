// What the file source knows of one workbook file and its journal, shared by its jobs
// (freshness.ts, writes.ts, folding.ts, recovery.ts). After `POST /sheets/demo` on demo.xlsx,
// `latest` holds the new row at once, `durable` and `entries` once its journal line is fsynced,
// and `fingerprint` and `identity` change only when a fold (or a save made outside the server)
// replaces the file.
import type { Workbook } from '../../../lib/workbook.ts';
import { errorCode, mtimeOf } from '../../durable/disk.ts';
import { Serial } from '../../durable/group-commit.ts';
import type { EventSink, ReceiptSink } from '../source.ts';
import type { FileFormat } from './format.ts';
import type { CsvStyle } from './csv/csv.ts';
import type { FoldHistory } from './fold-history.ts';
import type { FoldOptions } from './fold-runner.ts';
import { eventsOf, Journal, receiptsOf, type JournalEntry, type JournalFiles } from './journal.ts';

/** How one workbook file is served (mod.ts works it out when it opens the file). */
export interface FileSourceConfig {
  readonly path: string;
  readonly stateDir: string;
  readonly journalPath: string;
  readonly tabName: string;
  /** Why writes are refused (logged, never sent to clients); null when the file can be written. */
  readonly notWritable: string | null;
  readonly foldAfterMs: number;
  readonly foldAfterEntries: number;
  readonly log: FileLog;
  readonly format: FileFormat;
  /** Why sheetrest cannot write this file back (codec.ts: a package its writer cannot edit), or null. */
  readonly cannotWrite: string | null;
  /** Tabs that are not worksheets (a chart sheet), with what they are: writes to them are refused. */
  readonly readOnlyTabs: ReadonlyMap<string, string>;
  /** How a CSV file lays out its lines (codec.ts), kept when it is written. */
  readonly csvStyle: CsvStyle;
  readonly identity: string;
  readonly fingerprint: string;
  /** How the journal opens its files (tests fail the disk through it). */
  readonly journalFiles?: JournalFiles;
  /** Where folds run (fold-runner.ts): a worker thread by default. */
  readonly fold?: FoldOptions;
  /** Where the Idempotency-Key receipts journaled with writes go (server/idempotency/file-store.ts). */
  readonly receipts?: ReceiptSink;
  /** Where the change-feed events journaled with writes go (the connection's webhook outbox). */
  readonly events?: EventSink;
}

export class FileState {
  readonly #config: FileSourceConfig;
  /** False when served read-only, and from the moment the file can no longer be written. */
  writable: boolean;
  /** The file's stat identity when last looked at (durable/disk.ts, fileIdentity); null when it was missing. */
  identity: string | null;
  /** SHA-256 of the file's bytes as last read or written: the journal's base. */
  fingerprint: string;
  /** The rows with every acknowledged write applied: what reads see. */
  durable: Workbook;
  /** `durable` plus the writes planned but not yet acknowledged: what the next write plans on. */
  latest: Workbook;
  /** When `durable`'s rows last changed: the file's mtime, or the time of the last acknowledged write. */
  modifiedAt: number;
  /** Acknowledged writes in the journal, not yet in the file. */
  entries: JournalEntry[] = [];
  /** Null before recovery opens one, when read-only, and after a full disk at start. */
  journal: Journal | null = null;
  /** What the folds since the last outside save wrote, to save aside what an outside save drops; null when read-only. */
  history: FoldHistory | null = null;
  /** How a CSV file lays out its lines; why the file cannot be written back; the tabs that are not worksheets. Read again on an outside save. */
  csvStyle: CsvStyle;
  cannotWrite: string | null;
  readOnlyTabs: ReadonlyMap<string, string>;
  /** Set by close() and abandon(): no fold is scheduled from then on. */
  closing = false;
  /** Everything touching the file or the journal runs here, one step at a time. */
  readonly io = new Serial();

  /** `workbook`: the file's rows as decoded (rows only, model.ts), before any journaled write. */
  constructor(config: FileSourceConfig, workbook: Workbook) {
    this.#config = config;
    this.writable = config.notWritable === null;
    this.identity = config.identity;
    this.fingerprint = config.fingerprint;
    this.durable = this.latest = workbook;
    this.modifiedAt = mtimeOf(config.identity) ?? Date.now();
    this.csvStyle = config.csvStyle;
    this.cannotWrite = config.cannotWrite;
    this.readOnlyTabs = config.readOnlyTabs;
  }

  /** Starts a fresh journal on the current fingerprint holding `entries`, then closes the old one. */
  async replaceJournal(entries: readonly JournalEntry[]): Promise<void> {
    const next = await Journal.create(this.#config.journalPath, this.fingerprint, entries, this.#config.journalFiles);
    await this.journal?.close();
    this.journal = next;
  }

  /**
   * Hands the entries' Idempotency-Key receipts to the key store, and their change-feed events to
   * the webhook outbox, before the journal forgets them; resolves once both are durable there.
   */
  async keepElsewhere(entries: readonly JournalEntry[]): Promise<void> {
    const receipts = receiptsOf(entries);
    const events = eventsOf(entries);
    await Promise.all([receipts.length > 0 ? this.#config.receipts?.keep(receipts) : undefined, events.length > 0 ? this.#config.events?.keep(events) : undefined]);
  }
}

/**
 * Where the file source reports: problems at `error` (the default), news that needs no one to
 * act at `info` (an outside save picked up, a file back, a spreadsheet program's lock file).
 */
export type FileLog = (message: string, level?: 'info' | 'warn' | 'error') => void;

/** An error as the log names it: its code (ENOSPC) when it has one. */
export function describe(error: unknown): string {
  return errorCode(error) ?? (error instanceof Error ? error.message : String(error));
}

/** The error's message, which names the file when disk.ts's cannotWriteFile made it. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
