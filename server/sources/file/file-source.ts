// The file source at run time: `POST /sheets/demo` on `demo.xlsx` plans against the latest rows,
// lands in the journal with one fdatasync shared by every write queued meanwhile, and is answered
// then; the workbook file itself is rewritten later, once writes go idle (compaction).
//
// Durability protocol (journal.ts holds the format):
// 1. A write is acknowledged once its journal line is fsynced. Readers see it from then on.
// 2. Compaction: encode the workbook to a temp file beside it and fsync it; append
//    `compactedTo: <new fingerprint>` to the journal and fsync; check the file is still the one
//    we last read; rename the temp file over it and fsync the folder; start a fresh journal whose
//    base is the new fingerprint (temp + fsync + rename + fsync).
// 3. Recovery (recover()): the file's fingerprint equals the journal's base -> replay every
//    entry; it equals a `compactedTo` -> the entries before that mark are in the file, replay
//    the rest; it equals neither -> the file was changed by someone else, rebase (below).
//    A crash between any two steps leaves one of these cases, so nothing acknowledged is lost
//    and the file is never torn.
// External changes: every read and write first compares the file's stat identity with the one
// we last saw. On a change the file is re-read and the journaled writes are re-applied on top
// only where the rows they touch still hold what they held (rebase.ts); a write that no longer
// fits is saved to `<file>.conflict-<time>.jsonl` in the state folder and logged, and the
// outside version wins. The last look before the rename narrows, but cannot close, the window
// in which a save by another program could still be overwritten: no file system offers a
// compare-and-rename.
import { readFile, unlink } from 'node:fs/promises';
import { basename } from 'node:path';
import { isEmptyPlan, type WritePlan } from '../../../lib/apply-plan.ts';
import { apiError, type ApiError } from '../../../lib/errors.ts';
import type { Workbook } from '../../../lib/workbook.ts';
import type { Planned, Source } from '../source.ts';
import { decodeWorkbook, encodeWorkbook, type Decoded } from './codec.ts';
import { commitTempFile, errorCode, fileIdentity, fileIdentityNow, fingerprint, isDiskFull, isMissing, isPermissionError, writeTempFile } from './disk.ts';
import { GroupCommit, Serial } from './group-commit.ts';
import { Journal, saveConflicts, type JournalContents, type JournalEntry, type JournalFiles } from './journal.ts';
import { bookUsesDate1904 } from './read-cells.ts';
import { applyKeepingCells, expectationOf, keepCells, rebase } from './rebase.ts';

export interface FileSourceState {
  readonly path: string;
  readonly stateDir: string;
  readonly journalPath: string;
  readonly tabName: string;
  /** Why writes are refused (logged, never sent to clients); null when the file can be written. */
  readonly notWritable: string | null;
  readonly compactAfterMs: number;
  readonly compactAfterEntries: number;
  readonly log: (message: string) => void;
  readonly decoded: Decoded;
  readonly identity: string;
  readonly fingerprint: string;
  /** How the journal opens its files (tests fail the disk through it). */
  readonly journalFiles?: JournalFiles;
}

/** A planned write waiting for its group commit. */
interface Accepted {
  readonly entry: JournalEntry | null;
  /** The workbook once this write (and every one before it) is applied. */
  readonly after: Workbook;
}

export class FileSource implements Source {
  readonly description: string;
  readonly #config: FileSourceState;
  #writable: boolean;
  #decoded: Decoded;
  #identity: string | null;
  #fingerprint: string;
  #durable: Workbook;
  #latest: Workbook;
  /** Acknowledged writes in the journal, not yet in the file. */
  #entries: JournalEntry[] = [];
  #journal: Journal | null = null;
  #planning: Promise<unknown> = Promise.resolve();
  /** Everything touching the file or the journal runs here, one step at a time. */
  readonly #io = new Serial();
  readonly #commits: GroupCommit<Accepted>;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  #missing = false;
  /** Orders arrivals and file checks: under load one stat serves every write queued before it began. */
  #clock = 0;
  /** The clock when the last check that found the file unchanged began. */
  #checkedAt = 0;
  #closing: Promise<void> | null = null;
  /** How long the last encode of the whole workbook took. */
  #lastCompactionMs = 0;

  constructor(config: FileSourceState) {
    this.#config = config;
    this.description = `file ${config.path}`;
    this.#writable = config.notWritable === null;
    this.#decoded = config.decoded;
    this.#identity = config.identity;
    this.#fingerprint = config.fingerprint;
    this.#durable = this.#latest = config.decoded.workbook;
    this.#commits = new GroupCommit<Accepted>({
      serial: this.#io,
      commit: (batch) => this.#commitToJournal(batch),
      afterBatch: async () => {
        if (this.#entries.length >= config.compactAfterEntries) await this.#io.run(() => this.#compact());
      },
      onError: (error) => config.log(`sheetrest: writing ${config.path} failed: ${describe(error)}`),
    });
  }

  get writable(): boolean {
    return this.#writable;
  }

  async read(): Promise<Workbook> {
    await this.#refresh();
    return this.#durable;
  }

  write<T>(plan: (workbook: Workbook) => Planned<T>): Promise<T> {
    if (this.#closing !== null) return Promise.reject(apiError('write_error', 'The server is shutting down; send the write again once it is back.'));
    const arrival = ++this.#clock;
    const accepted = this.#planning.then(() => this.#plan(plan, arrival));
    this.#planning = accepted.catch(() => undefined);
    return accepted.then(async ({ result, durable }) => {
      await durable;
      return result;
    });
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#planning;
      await this.#commits.settled();
      clearTimeout(this.#idleTimer);
      await this.#io.run(() => this.#compact());
      await this.#journal?.close();
    })();
    return this.#closing;
  }

  /**
   * Stops at once, as a crash would: no flush, no compaction, the journal just closed. What was
   * acknowledged is in the journal and the next open replays it. For tests of recovery.
   */
  async abandon(): Promise<void> {
    this.#closing ??= Promise.resolve();
    clearTimeout(this.#idleTimer);
    this.#writable = false;
    await this.#io.run(async () => {
      await this.#journal?.close();
      this.#journal = null;
    });
  }

  /** Brings the journal left by the last run into the state (see the protocol above). */
  async recover(contents: JournalContents | null): Promise<void> {
    const { journalPath, log, path } = this.#config;
    if (contents !== null && contents.entries.length > 0) {
      const mark = contents.compactions.findLast((compaction) => compaction.fingerprint === this.#fingerprint);
      if (contents.base === this.#fingerprint || mark !== undefined) {
        const replay = contents.entries.slice(contents.base === this.#fingerprint ? 0 : mark?.entriesBefore);
        if (contents.damaged.length > 0) {
          // Writes were lost between these (mod.ts logs which lines): re-check each as on an outside change.
          await this.#adopt(this.#decoded, this.#fingerprint, this.#identity, replay, false);
        } else {
          this.#durable = this.#latest = replay.reduce((workbook, entry) => this.#apply(workbook, entry.plan), this.#durable);
          this.#entries = replay.slice();
        }
        if (replay.length > 0) log(`sheetrest: recovered ${this.#entries.length} journaled write(s) to ${path}`);
      } else {
        await this.#adopt(this.#decoded, this.#fingerprint, this.#identity, contents.entries, false);
      }
    }
    // Read-only: leave the journal for a run that can write it back.
    if (!this.#writable) return;
    this.#journal = await Journal.create(journalPath, this.#fingerprint, this.#entries, this.#config.journalFiles);
    await this.#io.run(() => this.#compact());
  }

  async #plan<T>(plan: (workbook: Workbook) => Planned<T>, arrival: number): Promise<{ result: T; durable: Promise<void> }> {
    if (!this.#writable) throw this.#notWritable();
    // A look at the file begun after this write arrived already saw any change made before it.
    if (this.#checkedAt <= arrival) await this.#refresh();
    const before = this.#latest;
    const planned = plan(before);
    const writePlan = planned.plan;
    // A write with nothing to write still waits for the writes before it: its answer may show them.
    if (writePlan === null || isEmptyPlan(writePlan)) return { result: planned.result, durable: this.#commits.add({ entry: null, after: before }) };
    const entry: JournalEntry = { plan: writePlan, expected: expectationOf(before, writePlan) };
    // The engine already applied the plan (planned.workbook); only the cells' formats are ours to keep.
    keepCells(before, writePlan, this.#usesDate1904());
    this.#latest = planned.workbook;
    return { result: planned.result, durable: this.#commits.add({ entry, after: this.#latest }) };
  }

  #apply(workbook: Workbook, plan: WritePlan, decoded = this.#decoded): Workbook {
    return applyKeepingCells(decoded.book !== null && bookUsesDate1904(decoded.book))(workbook, plan);
  }

  #usesDate1904(): boolean {
    return this.#decoded.book !== null && bookUsesDate1904(this.#decoded.book);
  }

  /** The journal append of one group commit; a write is acknowledged once this returns. */
  async #commitToJournal(batch: readonly Accepted[]): Promise<void> {
    const entries = batch.flatMap((accepted) => (accepted.entry === null ? [] : [accepted.entry]));
    if (entries.length > 0) {
      try {
        if (this.#journal === null) throw new Error('no journal is open');
        // A failed append that could not be cut back: start over from what was acknowledged.
        if (this.#journal.broken) await this.#replaceJournal(this.#entries);
        await this.#journal.append(entries);
      } catch (error) {
        // Every write not yet durable was planned on top of these: the group commit fails them all.
        this.#latest = this.#durable;
        this.#config.log(`sheetrest: could not save writes to the journal of ${this.#config.path}: ${describe(error)}`);
        // Right away too, so that compaction, which appends a mark, finds a sound journal.
        if (this.#journal?.broken) await this.#replaceJournal(this.#entries).catch(() => undefined);
        if (isDiskFull(error)) throw apiError('insufficient_storage', 'The server\'s disk is full; nothing was written. Try again once space is freed.');
        throw apiError('write_error', 'The write could not be saved; nothing was written.');
      }
      this.#entries.push(...entries);
    }
    this.#durable = batch[batch.length - 1].after;
    this.#armIdleCompaction();
  }

  #armIdleCompaction(): void {
    clearTimeout(this.#idleTimer);
    if (this.#entries.length === 0 || !Number.isFinite(this.#config.compactAfterMs) || this.#closing !== null) return;
    // Encoding the workbook holds the event loop (about 1.5 s for 100k rows), so a big workbook
    // waits for a longer quiet spell: four times its last compaction, at least compactAfterMs.
    const quiet = Math.max(this.#config.compactAfterMs, 4 * this.#lastCompactionMs);
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = undefined;
      this.#io.run(() => this.#compact()).catch(() => undefined);
    }, quiet);
    // Pending compaction must not keep a process alive: the journal already holds the writes.
    this.#idleTimer.unref?.();
  }

  /** Folds the journal into the workbook file (protocol step 2). Logs rather than throws. */
  async #compact(): Promise<void> {
    const { log, path } = this.#config;
    if (!this.#writable || this.#journal === null || this.#entries.length === 0) return;
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        if (!(await this.#adoptIfChanged()) || this.#entries.length === 0) return;
        const started = performance.now();
        const { bytes, decoded } = encodeWorkbook(this.#durable, this.#decoded);
        this.#lastCompactionMs = performance.now() - started;
        const target = fingerprint(bytes);
        const { temp, identity } = await writeTempFile(path, bytes);
        await this.#journal.markCompaction(target);
        // The last look: a save that landed while we encoded must not be overwritten.
        if ((await fileIdentity(path)) !== this.#identity) {
          await unlink(temp).catch(() => undefined);
          continue;
        }
        await commitTempFile(temp, path);
        this.#decoded = decoded;
        this.#identity = identity;
        this.#fingerprint = target;
        this.#entries = [];
        await this.#replaceJournal([]);
        return;
      }
      log(`sheetrest: ${path} keeps changing outside the server; its journal is folded in later`);
      this.#armIdleCompaction();
    } catch (error) {
      if (isPermissionError(error)) {
        this.#writable = false;
        log(`sheetrest: ${path} can no longer be written (${errorCode(error)}); writes are refused, ${this.#entries.length} acknowledged write(s) stay in ${this.#journal.path}`);
      } else {
        log(`sheetrest: could not write ${path} (${describe(error)}); its journal keeps the writes and it is retried later`);
        this.#armIdleCompaction();
      }
    }
  }

  async #replaceJournal(entries: readonly JournalEntry[]): Promise<void> {
    const next = await Journal.create(this.#config.journalPath, this.#fingerprint, entries, this.#config.journalFiles);
    await this.#journal?.close();
    this.#journal = next;
  }

  /** Cheap check before every read and write: a stat, and a re-read only when it changed. */
  async #refresh(): Promise<void> {
    const started = ++this.#clock;
    const identity = fileIdentityNow(this.#config.path);
    if (identity !== null && identity === this.#identity && !this.#missing) {
      this.#checkedAt = Math.max(this.#checkedAt, started);
      return;
    }
    await this.#io.run(async () => {
      if (!(await this.#adoptIfChanged())) throw this.#unavailable();
    });
  }

  /** Picks up a change made outside the server (holding #io); false when the file is gone. */
  async #adoptIfChanged(): Promise<boolean> {
    const { path, log, tabName } = this.#config;
    let identity: string | null;
    let bytes: Uint8Array;
    try {
      identity = await fileIdentity(path);
      if (identity === this.#identity && !this.#missing) return true;
      bytes = identity === null ? new Uint8Array() : await readFile(path);
    } catch (error) {
      if (!isMissing(error)) log(`sheetrest: cannot read ${path}: ${describe(error)}`);
      identity = null;
      bytes = new Uint8Array();
    }
    if (identity === null) {
      if (!this.#missing) log(`sheetrest: ${path} is missing; requests get 503 until it is back`);
      this.#missing = true;
      return false;
    }
    if (this.#missing) log(`sheetrest: ${path} is back`);
    this.#missing = false;
    const print = fingerprint(bytes);
    if (print === this.#fingerprint) {
      this.#identity = identity;
      return true;
    }
    let decoded: Decoded;
    try {
      decoded = decodeWorkbook(bytes, this.#decoded.format, tabName);
    } catch (error) {
      // Most likely caught half-way through another program's save: the next request retries.
      log(`sheetrest: ${path} changed but cannot be read yet: ${describe(error)}`);
      throw this.#unavailable();
    }
    // Writes accepted but not yet in the journal were planned on the old rows: journal them first.
    while (this.#commits.queued > 0) await this.#commits.commitQueued();
    await this.#adopt(decoded, print, identity, this.#entries, true);
    return true;
  }

  /** Takes the file's new content, re-applying the journaled writes that still fit. */
  async #adopt(decoded: Decoded, print: string, identity: string | null, entries: readonly JournalEntry[], announce: boolean): Promise<void> {
    const { log, path } = this.#config;
    const { workbook, applied, conflicts } = rebase(decoded.workbook, entries, (next, plan) => this.#apply(next, plan, decoded));
    this.#decoded = decoded;
    this.#fingerprint = print;
    this.#identity = identity;
    this.#durable = this.#latest = workbook;
    this.#entries = applied.slice();
    if (announce) log(`sheetrest: picked up a change to ${path} made outside the server`);
    if (conflicts.length > 0) await this.#reportConflicts(conflicts);
    if (this.#journal !== null) await this.#replaceJournal(applied);
    this.#armIdleCompaction();
  }

  async #reportConflicts(conflicts: readonly JournalEntry[]): Promise<void> {
    const { log, path, stateDir } = this.#config;
    const what = `${conflicts.length} acknowledged write(s) to ${path} conflict with a change made outside the server`;
    if (!this.#writable) return log(`sheetrest: ${what}; they stay in the journal`);
    const file = await saveConflicts(stateDir, basename(path), conflicts);
    log(`sheetrest: ${what}; kept the outside version and saved the writes to ${file}`);
  }

  #notWritable(): ApiError {
    return apiError('write_error', 'This spreadsheet is read-only on this server; nothing was written.');
  }

  #unavailable(): ApiError {
    return apiError('upstream_unavailable', 'The spreadsheet file is not available right now; try again shortly.', { 'Retry-After': '5' });
  }
}

function describe(error: unknown): string {
  return errorCode(error) ?? (error instanceof Error ? error.message : String(error));
}
