// The file source at run time: `POST /sheets/demo` on `demo.xlsx` plans against the latest rows,
// lands in the journal with one fdatasync shared by every write queued meanwhile, and is answered
// then; the workbook file itself is rewritten later, once writes go idle (compaction).
//
// Durability protocol (journal.ts holds the format):
// 1. A write is acknowledged once its journal line is fsynced. Readers see it from then on.
// 2. Compaction (a fold): encode the workbook to a temp file beside it and fsync it (.xlsx and
//    .ods: decoded afresh and replayed in a worker, fold.ts; .csv: from the rows, fold-csv.ts); append
//    `compactedTo: <new fingerprint>` to the journal and fsync; check the file is still the one
//    we last read; rename the temp file over it and fsync the folder; start a fresh journal whose
//    base is the new fingerprint (temp + fsync + rename + fsync).
// 3. Recovery (recover()): the file's fingerprint equals the journal's base -> replay every
//    entry; it equals a `compactedTo` -> the entries before that mark are in the file, replay
//    the rest; it equals neither -> the file was changed by someone else, rebase (below).
//    A crash between any two steps leaves one of these cases, so nothing acknowledged is lost
//    and the file is never torn.
// External changes: every write, and a read when the folder watcher reports a change or the
// last look is 100 ms old (LOOK_EVERY_MS), first compares the file's stat identity with the one
// we last saw. On a change the file is re-read and the journaled writes are re-applied on top
// only where the rows they touch still hold what they held (rebase.ts); a write that no longer
// fits is saved to `<file>.conflict-<time>.jsonl` in the state folder and logged, and the
// outside version wins. The last look before the rename narrows, but cannot close, the window
// in which a save by another program could still be overwritten: no file system offers a
// compare-and-rename. Writes already folded into the file are never applied again on an outside
// save: the version saved outside is the truth for them (rows deleted outside stay deleted, and
// a stale copy wins over rows folded after it was opened). What the folds since the last outside
// save wrote is kept (compacted.ts) only so that the rows an outside save dropped are saved to a
// conflict file rather than lost without a trace.
// A write the file's format cannot store (limits.ts) is refused before it is journaled.
// A write's Idempotency-Key receipt rides in the write's own journal line, and is handed to the
// connection's key store (ReceiptSink) before a fold or a rebase makes the journal forget it.
import { readFile, realpath, unlink } from 'node:fs/promises';
import { basename } from 'node:path';
import { isEmptyPlan, type WritePlan } from '../../../lib/write-plan.ts';
import { apiError, type ApiError } from '../../../lib/errors.ts';
import type { Workbook } from '../../../lib/workbook.ts';
import type { Planned, ReadOptions, ReceiptSink, Source } from '../source.ts';
import { CompactionBackoff, RETRY_CAP_MS } from './backoff.ts';
import { decodeWorkbook } from './codec.ts';
import type { FileFormat } from './format.ts';
import type { CsvStyle } from './csv/csv.ts';
import { CompactionHistory } from './compacted.ts';
import { commitTempFile, errorCode, fileIdentity, fileIdentityNow, fingerprint, identityNeedsHash, isDiskFull, isMissing, isPermissionError, mtimeOf, watchFile, writeTempFile } from '../../durable/disk.ts';
import { formatCsvInSteps } from './csv/fold.ts';
import { runFold, type FoldOptions } from './fold-runner.ts';
import { GroupCommit, Serial } from '../../durable/group-commit.ts';
import { Journal, receiptsOf, saveConflicts, type JournalContents, type JournalEntry, type JournalFiles } from './journal.ts';
import { refuseUnstorable, unstorableEntries } from './limits.ts';
import { rowsOnly } from './model.ts';
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
  readonly #format: FileFormat;
  #csvStyle: CsvStyle;
  #identity: string | null;
  #fingerprint: string;
  #durable: Workbook;
  #latest: Workbook;
  /** When #durable's rows last changed: the file's mtime, or the time of the last acknowledged write. */
  #modifiedAt: number;
  /** Acknowledged writes in the journal, not yet in the file. */
  #entries: JournalEntry[] = [];
  #journal: Journal | null = null;
  /** What the folds since the last outside save wrote, to save aside what an outside save drops; null when read-only. */
  #history: CompactionHistory | null = null;
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
  /** Watches the file's folder so reads need not stat the file; null where watching fails. */
  #watcher: { close(): void } | null = null;
  /** Set by the watcher (and at start): the next read looks at the file. */
  #maybeChanged = true;
  /**
   * Set LOOK_EVERY_MS after the last look at the file, by a timer that holds no process open: a
   * flag, so that a read asks no clock (a clock read is a call into Deno's runtime).
   */
  #lookDue = true;
  #lookTimer: ReturnType<typeof setTimeout> | undefined;
  /** An outside version that could not be read: its identity and why; the last good one is served meanwhile. */
  #unreadable: { identity: string; why: string } | null = null;
  /** Why sheetrest cannot write this file back (codec.ts), or null; and the tabs that are not worksheets. */
  #cannotWrite: string | null;
  #readOnlyTabs: ReadonlyMap<string, string>;
  /** How long the last fold took (writes wait for it). */
  #lastCompactionMs = 0;
  /** After a failed compaction, when to try again (close() tries regardless) and what to log. */
  readonly #backoff: CompactionBackoff;

  /** `workbook`: the file's rows as decoded (rows only, model.ts), before any journaled write. */
  constructor(config: FileSourceState, workbook: Workbook) {
    this.#config = config;
    this.description = `file ${config.path}`;
    this.#writable = config.notWritable === null;
    this.#format = config.format;
    this.#cannotWrite = config.cannotWrite;
    this.#readOnlyTabs = config.readOnlyTabs;
    this.#csvStyle = config.csvStyle;
    this.#identity = config.identity;
    this.#fingerprint = config.fingerprint;
    this.#durable = this.#latest = workbook;
    this.#modifiedAt = mtimeOf(config.identity) ?? Date.now();
    this.#backoff = new CompactionBackoff(config.compactAfterMs);
    this.#commits = new GroupCommit<Accepted>({
      serial: this.#io,
      commit: (batch) => this.#commitToJournal(batch),
      afterBatch: async () => {
        if (this.#entries.length >= config.compactAfterEntries) await this.#io.run(() => this.#compact(false));
      },
      onError: (error) => config.log(`sheetrest: writing ${config.path} failed: ${describe(error)}`),
    });
    this.#watcher = watchFile(config.path, () => {
      this.#maybeChanged = true;
    });
  }

  get writable(): boolean {
    return this.#writable;
  }

  lastModified(): number {
    return this.#modifiedAt;
  }

  /** Compactions failed in a row since the last one that worked (for health checks and tests). */
  get compactionFailures(): number {
    return this.#backoff.failures;
  }

  /**
   * The latest acknowledged rows. The file is looked at (one stat) when the folder watcher saw
   * it change, when the last look is LOOK_EVERY_MS old, or when `fresh` asks: an outside save is
   * seen within milliseconds where the watcher works, and within LOOK_EVERY_MS where it does not.
   */
  async read(options: ReadOptions = {}): Promise<Workbook> {
    if (this.#mustLook(options)) await this.#refresh();
    return this.#durable;
  }

  /** The rows `read` gives, while there is no reason to look at the file first. */
  readNow(options: ReadOptions = {}): Workbook | undefined {
    return this.#mustLook(options) ? undefined : this.#durable;
  }

  #mustLook(options: ReadOptions): boolean {
    return options.fresh === true || this.#maybeChanged || this.#lookDue || this.#missing;
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

  /** Rejects, naming the file and the journal, when acknowledged writes could not be folded into the file. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#planning;
      await this.#commits.settled();
      clearTimeout(this.#idleTimer);
      clearTimeout(this.#lookTimer);
      this.#watcher?.close();
      await this.#io.run(() => this.#compact(true));
      const journal = this.#journal;
      await journal?.close();
      if (this.#entries.length === 0) return;
      // Served read-only by choice or for want of permissions, the journal waits for a run that
      // may write; but a file sheetrest cannot write back will never take those writes.
      const unfoldable = this.#cannotWrite;
      if (journal === null && unfoldable === null) return;
      const why = unfoldable !== null ? `sheetrest cannot write this file back: ${unfoldable}` : this.#missing ? 'the file is missing' : (this.#backoff.cause ?? 'the file could not be written');
      throw new Error(`${this.#config.path}: ${this.#entries.length} acknowledged write(s) could not be folded into the file (${why}); they stay in ${journal?.path ?? this.#config.journalPath} and the next start replays them`);
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
    clearTimeout(this.#lookTimer);
    this.#watcher?.close();
    this.#writable = false;
    await this.#io.run(async () => {
      await this.#journal?.close();
      this.#journal = null;
    });
  }

  /** Brings the journal left by the last run into the state (see the protocol above). */
  async recover(contents: JournalContents | null): Promise<void> {
    const { journalPath, log, path } = this.#config;
    if (this.#writable) this.#history = await CompactionHistory.load(journalPath.replace(/\.journal$/, '') + '.compacted');
    // The journal left by the last run holds the Idempotency-Keys of its writes: answered from
    // now on, and kept elsewhere before anything below (a fold, a rebase) makes it forget them.
    if (contents !== null) this.#config.receipts?.journaled(receiptsOf(contents.entries));
    // An empty journal on another base: the file was replaced while the server was stopped.
    if (contents !== null && (contents.entries.length > 0 || contents.base !== this.#fingerprint)) {
      const mark = contents.compactions.findLast((compaction) => compaction.fingerprint === this.#fingerprint);
      const matches = contents.base === this.#fingerprint || mark !== undefined;
      // Replaced outside while stopped, after a fold whose rename landed but whose fresh journal
      // was never written (a crash between the two): the writes before that fold's mark were in
      // the file the outside save replaced, so they are folded, not pending. The history records
      // the fold just after the rename; a mark it does not know was never renamed into place.
      const landed = matches ? undefined : contents.compactions.findLast((compaction) => this.#history?.produced(compaction.fingerprint) === true);
      const pending = contents.entries.slice(contents.base === this.#fingerprint ? 0 : (mark ?? landed)?.entriesBefore ?? 0);
      // An earlier version acknowledged writes the format cannot store (a 40,000-character .xlsx
      // cell): no compaction could ever fold them, so they are set aside instead of retried forever.
      const unstorable = unstorableEntries(this.#format, pending);
      if (unstorable.length > 0) {
        await this.#setAside(unstorable, `${unstorable.length} journaled write(s) to ${path} hold a cell an .${this.#format} file cannot store`);
      }
      // Nothing is written before recovery: #durable is still the file's rows as decoded.
      if (matches && unstorable.length === 0) {
        if (contents.damaged.length > 0) {
          // Writes were lost between these (mod.ts logs which lines): re-check each as on an outside change.
          await this.#adopt(this.#durable, this.#fingerprint, this.#identity, pending, { announce: false, outside: false });
        } else {
          this.#durable = this.#latest = pending.reduce((workbook, entry) => applyKeepingCells(workbook, entry.plan), this.#durable);
          this.#entries = pending.slice();
          // When the journaled writes were made is not kept: the recovery is a later bound.
          if (pending.length > 0) this.#modifiedAt = Date.now();
        }
        if (pending.length > 0) log(`sheetrest: recovered ${this.#entries.length} journaled write(s) to ${path}`);
      } else {
        // Re-planning moves the appends that followed a set-aside one up into its place.
        const storable = pending.filter((entry) => !unstorable.includes(entry));
        await this.#adopt(this.#durable, this.#fingerprint, this.#identity, storable, { announce: false, outside: !matches });
      }
    }
    // Read-only: leave the journal for a run that can write it back.
    if (!this.#writable) return;
    try {
      this.#journal = await Journal.create(journalPath, this.#fingerprint, this.#entries, this.#config.journalFiles);
    } catch (error) {
      if (!isDiskFull(error)) throw error;
      // A full disk need not stop the server: the rows, the journal's writes included, are served;
      // the journal on disk stays as it is (the next start replays it), and each write tries
      // again to start a fresh one, answering 507 while the disk is full (#commitToJournal).
      log(`sheetrest: ${messageOf(error)}; serving ${path} for reads, writes answer 507 until space is freed${this.#entries.length > 0 ? ` (${this.#entries.length} journaled write(s) stay in ${journalPath})` : ''}`);
      return;
    }
    await this.#io.run(() => this.#compact(true));
  }

  /** Hands the entries' Idempotency-Key receipts to the key store before the journal forgets them. */
  async #keepReceipts(entries: readonly JournalEntry[]): Promise<void> {
    const receipts = receiptsOf(entries);
    if (receipts.length > 0) await this.#config.receipts?.keep(receipts);
  }

  async #plan<T>(plan: (workbook: Workbook) => Planned<T>, arrival: number): Promise<{ result: T; durable: Promise<void> }> {
    if (!this.#writable || this.#cannotWrite !== null) throw this.#notWritable();
    // A look at the file begun after this write arrived already saw any change made before it.
    if (this.#checkedAt <= arrival) await this.#refresh();
    // Planning on the last good version would overwrite the outside one at the next fold.
    if (this.#unreadable !== null) throw apiError('upstream_unavailable', 'The spreadsheet file was changed outside the server and cannot be read; nothing was written. Try again once it is fixed.', { 'Retry-After': '5' });
    const before = this.#latest;
    const planned = plan(before);
    const writePlan = planned.plan;
    // A write with nothing to write still waits for the writes before it: its answer may show them.
    if (writePlan === null || isEmptyPlan(writePlan)) return { result: planned.result, durable: this.#commits.add({ entry: null, after: before }) };
    // Refused before the journal sees it: a write the file cannot hold would block every compaction.
    const unstorable = refuseUnstorable(this.#format, writePlan, planned.workbook);
    if (unstorable !== null) throw unstorable;
    const notSheet = this.#readOnlyTabs.get(writePlan.tab);
    if (notSheet !== undefined) throw apiError('write_error', `The tab "${writePlan.tab}" is ${notSheet}, which sheetrest cannot write; nothing was written.`);
    // An Idempotency-Key's receipt goes in the write's own journal line: durable together or not at all.
    const expected = expectationOf(before, writePlan);
    const entry: JournalEntry = planned.receipt === undefined ? { plan: writePlan, expected } : { plan: writePlan, expected, receipt: planned.receipt };
    // The engine already applied the plan (planned.workbook). A .csv row keeps the fields of the
    // columns the write did not set verbatim (csv-formulas.ts); .xlsx and .ods rows hold no
    // cells here: the fold keeps their formats (fold.ts).
    keepCells(before, writePlan);
    this.#latest = planned.workbook;
    return { result: planned.result, durable: this.#commits.add({ entry, after: this.#latest }) };
  }

  /** The journal append of one group commit; a write is acknowledged once this returns. */
  async #commitToJournal(batch: readonly Accepted[]): Promise<void> {
    const entries = batch.flatMap((accepted) => (accepted.entry === null ? [] : [accepted.entry]));
    if (entries.length > 0) {
      try {
        // None since a full disk at start (recover()): start it now, with the writes it held.
        if (this.#journal === null) await this.#reopenJournal();
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
      this.#config.receipts?.journaled(receiptsOf(entries));
    }
    this.#durable = batch[batch.length - 1].after;
    this.#modifiedAt = Date.now();
    this.#armIdleCompaction();
  }

  #armIdleCompaction(): void {
    clearTimeout(this.#idleTimer);
    if (this.#entries.length === 0 || !Number.isFinite(this.#config.compactAfterMs) || this.#closing !== null) return;
    // Writes wait for a fold (seconds for 100k rows; in a worker reads do not), so a big
    // workbook waits for a longer quiet spell: four times its last fold, at least compactAfterMs.
    // After a failure, not before the backoff has run out.
    const quiet = Math.max(this.#config.compactAfterMs, 4 * this.#lastCompactionMs, this.#backoff.waitMs(performance.now()));
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = undefined;
      this.#io.run(() => this.#compact(false)).catch(() => undefined);
    }, quiet);
    // Pending compaction must not keep a process alive: the journal already holds the writes.
    this.#idleTimer.unref?.();
  }

  /**
   * Folds the journal into the workbook file (protocol step 2). Logs rather than throws. After a
   * failure only `force` (start, close) tries again before the backoff has run out.
   */
  async #compact(force: boolean): Promise<void> {
    const { log, path, tabName } = this.#config;
    if (!this.#writable || this.#journal === null || this.#entries.length === 0) return;
    if (!force && this.#backoff.waitMs(performance.now()) > 0) return;
    try {
      // A fold makes the journal forget its writes, and with them their Idempotency-Keys.
      await this.#keepReceipts(this.#entries);
      for (let attempt = 0; attempt < 3; attempt++) {
        if (!(await this.#adoptIfChanged()) || this.#entries.length === 0 || this.#unreadable !== null) return;
        const started = performance.now();
        // The fold decodes the file as last read and replays the journal on it: #durable, as the
        // protocol's recovery would rebuild it, without the event loop waiting (fold-runner.ts).
        // A CSV file is written from the rows held here, a slice at a time (fold-csv.ts).
        const job = { path, expected: this.#fingerprint, format: this.#format, tabName, entries: this.#entries };
        const result = this.#format === 'csv' ? await this.#csvFold() : (await runFold(job, this.#config.fold)).result;
        this.#lastCompactionMs = performance.now() - started;
        // Saved over since the last look: the next attempt looks again.
        if (result.kind === 'changed') continue;
        const { bytes, fingerprint: target } = result;
        // Through a symlink the new bytes replace its target, in the target's folder, and the
        // link stays a link (renaming over the link itself would make it a plain file).
        const file = await realpath(path).catch(() => path);
        const { temp, identity } = await writeTempFile(file, bytes);
        await this.#journal.markCompaction(target);
        // The last look: a save that landed while we encoded must not be overwritten.
        if ((await fileIdentity(path)) !== this.#identity) {
          await unlink(temp).catch(() => undefined);
          continue;
        }
        const renamed = await commitTempFile(temp, file);
        const folded = { base: this.#fingerprint, produced: target, entries: this.#entries };
        this.#identity = renamed ?? identity;
        this.#fingerprint = target;
        this.#entries = [];
        // Recorded before the journal forgets these writes, so no crash leaves them in neither.
        await this.#history?.add(folded).catch((error: unknown) => log(`sheetrest: could not keep what was folded into ${path} (${messageOf(error)}); a stale copy saved over it may go unnoticed`));
        await this.#replaceJournal([]);
        this.#compacted(folded.entries.length);
        return;
      }
      this.#compactionFailed('it keeps changing outside the server');
    } catch (error) {
      if (isPermissionError(error)) {
        this.#writable = false;
        this.#backoff.stopped(`it can no longer be written (${errorCode(error)})`);
        log(`sheetrest: ${path} can no longer be written (${errorCode(error)}); writes are refused, ${this.#entries.length} acknowledged write(s) stay in ${this.#journal.path}`);
      } else {
        this.#compactionFailed(describe(error));
      }
    }
  }

  /** The CSV file of the rows held here, in pieces (fold-csv.ts). */
  async #csvFold(): Promise<{ kind: 'folded'; bytes: readonly Uint8Array[]; fingerprint: string }> {
    const { pieces, fingerprint: print } = await formatCsvInSteps(this.#durable.tabs[0]?.rows ?? [], this.#csvStyle);
    return { kind: 'folded', bytes: pieces, fingerprint: print };
  }

  /** A failed compaction: the journal keeps the writes, and the next try waits (backoff.ts). */
  #compactionFailed(cause: string): void {
    const { log, path } = this.#config;
    if (this.#backoff.failed(cause, performance.now())) {
      log(`sheetrest: could not fold the journal into ${path}: ${cause}; ${this.#entries.length} acknowledged write(s) stay in ${this.#journal?.path}, retried with backoff (up to every ${RETRY_CAP_MS / 60_000} minutes) and on stop`);
    }
    this.#armIdleCompaction();
  }

  #compacted(folded: number): void {
    if (this.#backoff.succeeded()) this.#config.log(`sheetrest: folded ${folded} journaled write(s) into ${this.#config.path}; compaction works again`);
  }

  async #reopenJournal(): Promise<void> {
    await this.#replaceJournal(this.#entries);
    this.#config.log(`sheetrest: the journal of ${this.#config.path} could be written again; writes are accepted`);
  }

  async #replaceJournal(entries: readonly JournalEntry[]): Promise<void> {
    const next = await Journal.create(this.#config.journalPath, this.#fingerprint, entries, this.#config.journalFiles);
    await this.#journal?.close();
    this.#journal = next;
  }

  /** Cheap check before reads (see read()) and every write: a stat, and a re-read only when it changed. */
  async #refresh(): Promise<void> {
    const started = ++this.#clock;
    // Cleared before looking: a change the watcher reports from now on is seen by the next read.
    this.#maybeChanged = false;
    this.#lookDue = false;
    clearTimeout(this.#lookTimer);
    this.#lookTimer = setTimeout(() => {
      this.#lookDue = true;
    }, LOOK_EVERY_MS);
    this.#lookTimer.unref?.();
    const identity = fileIdentityNow(this.#config.path);
    if (identity !== null && identity === this.#identity && !this.#missing && !identityNeedsHash(identity)) {
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
      if (identity !== null && identity === this.#identity && !this.#missing && !identityNeedsHash(identity)) return true;
      if (identity !== null && identity === this.#unreadable?.identity && !identityNeedsHash(identity)) return true;
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
      this.#unreadable = null;
      return true;
    }
    let decoded: Workbook;
    try {
      const { workbook, csvStyle, cannotWrite, readOnlyTabs } = decodeWorkbook(bytes, this.#format, tabName);
      decoded = rowsOnly(workbook, this.#format);
      this.#csvStyle = csvStyle;
      this.#cannotWrite = cannotWrite;
      this.#readOnlyTabs = readOnlyTabs;
    } catch (error) {
      // Caught half-way through another program's save, or a file that cannot be served (too
      // big, damaged, hostile): reads keep the last good version, writes wait (503) until the
      // file can be read again, and the log says why, once per version.
      const why = describe(error);
      if (this.#unreadable?.why !== why) log(`sheetrest: ${path} changed but cannot be read (${why}); serving the last version read until it can be, and refusing writes meanwhile`);
      this.#unreadable = { identity, why };
      return true;
    }
    if (this.#unreadable !== null) log(`sheetrest: ${path} can be read again`);
    this.#unreadable = null;
    // Writes accepted but not yet in the journal were planned on the old rows: journal them first.
    while (this.#commits.queued > 0) await this.#commits.commitQueued();
    await this.#adopt(decoded, print, identity, this.#entries, { announce: true, outside: true });
    return true;
  }

  /**
   * Takes the file's new content, re-applying the journaled writes that still fit. `outside`: the
   * content was saved by another program, the new truth for every write folded before it; those
   * writes are never applied again (rows deleted outside stay deleted), and the ones whose rows it
   * dropped are saved aside (compacted.ts).
   */
  async #adopt(decoded: Workbook, print: string, identity: string | null, entries: readonly JournalEntry[], how: { announce: boolean; outside: boolean }): Promise<void> {
    const { log, path } = this.#config;
    // Re-planned entries and conflicts leave the journal without their Idempotency-Keys.
    await this.#keepReceipts(entries);
    const { workbook, applied, conflicts } = rebase(decoded, entries, applyKeepingCells);
    this.#fingerprint = print;
    this.#identity = identity;
    this.#durable = this.#latest = workbook;
    this.#entries = applied.slice();
    this.#modifiedAt = applied.length > 0 ? Date.now() : (mtimeOf(identity) ?? Date.now());
    if (how.announce) log(`sheetrest: picked up a change to ${path} made outside the server`);
    if (conflicts.length > 0) await this.#reportConflicts(conflicts);
    if (how.outside && this.#history !== null) {
      const dropped = this.#history.droppedBy(decoded);
      try {
        if (dropped.length > 0) {
          const what = `${path} was replaced by a version without the rows of ${dropped.length} acknowledged write(s) already folded into it (deleted outside, or saved from a copy opened before they were folded)`;
          await this.#setAside(dropped, what, 'kept the outside version and ');
        }
        // Saved aside before they are forgotten; from now on the folds are compared with this version.
        await this.#history.clear();
      } catch (error) {
        // Only a record: the outside version is taken either way.
        log(`sheetrest: could not save aside the ${dropped.length} folded write(s) the outside version of ${path} dropped (${describe(error)})`);
      }
    }
    if (this.#journal !== null) await this.#replaceJournal(applied);
    this.#armIdleCompaction();
  }

  async #reportConflicts(conflicts: readonly JournalEntry[]): Promise<void> {
    const what = `${conflicts.length} acknowledged write(s) to ${this.#config.path} conflict with a change made outside the server`;
    await this.#setAside(conflicts, what, 'kept the outside version and ');
  }

  /** Saves writes that cannot be applied to a conflict file in the state folder, and logs where. */
  async #setAside(entries: readonly JournalEntry[], what: string, kept = ''): Promise<void> {
    const { log, path, stateDir } = this.#config;
    if (!this.#writable) return log(`sheetrest: ${what}; they stay in the journal`);
    const file = await saveConflicts(stateDir, basename(path), entries);
    log(`sheetrest: ${what}; ${kept}saved the writes to ${file}`);
  }

  #notWritable(): ApiError {
    // Why a file cannot be written back is the file's own business and safe to say; why the disk
    // refuses (paths, the state folder) is only logged.
    const why = this.#cannotWrite;
    if (why !== null) return apiError('write_error', `This spreadsheet is served read-only because sheetrest cannot write this file back (${why}); nothing was written.`);
    return apiError('write_error', 'This spreadsheet is read-only on this server; nothing was written.');
  }

  #unavailable(): ApiError {
    return apiError('upstream_unavailable', 'The spreadsheet file is not available right now; try again shortly.', { 'Retry-After': '5' });
  }
}

/** Applies a plan to the rows held here; a .csv row keeps its verbatim fields (keepCells). */

/** The longest a read goes without looking at the file when no watcher event says it changed. */
export const LOOK_EVERY_MS = 100;

function describe(error: unknown): string {
  return errorCode(error) ?? (error instanceof Error ? error.message : String(error));
}

/** The error's message, which names the file when disk.ts's cannotWriteFile made it. */
function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
