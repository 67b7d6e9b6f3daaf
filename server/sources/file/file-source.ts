// The file source at run time: `POST /sheets/demo` on `demo.xlsx` plans against the latest rows,
// lands in the journal with one fdatasync shared by every write queued meanwhile, and is answered
// then; the workbook file itself is rewritten later, once writes go idle (a fold). This class
// only composes the jobs, each in its own module, around what they share (state.ts):
//   freshness.ts  noticing saves made outside the server (a stat per look, a watcher on the folder)
//   writes.ts     planning in arrival order and the journal's group commit
//   folding.ts    when and how the journal is folded into the file, and the backoff after failures
//   recovery.ts   replaying the journal at open, and re-applying it on an outside save (conflict files)
//
// Durability protocol (journal.ts holds the format):
// 1. A write is acknowledged once its journal line is fsynced. Readers see it from then on.
// 2. A fold: encode the workbook to a temp file beside it and fsync it (.xlsx and .ods: decoded
//    afresh and replayed in a worker, fold.ts; .csv: from the rows, csv/fold.ts); append
//    `compactedTo: <new fingerprint>` to the journal and fsync; check the file is still the one
//    we last read; rename the temp file over it and fsync the folder; start a fresh journal whose
//    base is the new fingerprint (temp + fsync + rename + fsync).
// 3. Recovery (recovery.ts): the file's fingerprint equals the journal's base -> replay every
//    entry; it equals a `compactedTo` mark -> the entries before that mark are in the file,
//    replay the rest; it equals neither -> the file was changed by someone else, rebase (below).
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
// save wrote is kept (fold-history.ts) only so that the rows an outside save dropped are saved to a
// conflict file rather than lost without a trace.
// A write the file's format cannot store (limits.ts) is refused before it is journaled.
// A write's Idempotency-Key receipt rides in the write's own journal line, and is handed to the
// connection's key store (ReceiptSink) before a fold or a rebase makes the journal forget it.
import { apiError } from '../../../lib/errors.ts';
import type { Workbook } from '../../../lib/workbook.ts';
import type { Planned, ReadOptions, Source, TabChange } from '../source.ts';
import { changedTabs, OutsideChangeListeners } from '../changed-tabs.ts';
import { Folding } from './folding.ts';
import { Freshness } from './freshness.ts';
import type { JournalContents } from './journal.ts';
import { Recovery } from './recovery.ts';
import { FileState, type FileSourceConfig } from './state.ts';
import { Writes } from './writes.ts';

export type { FileSourceConfig } from './state.ts';
export { LOOK_EVERY_MS } from './freshness.ts';

export class FileSource implements Source {
  readonly description: string;
  readonly #config: FileSourceConfig;
  readonly #state: FileState;
  readonly #freshness: Freshness;
  readonly #writes: Writes;
  readonly #folding: Folding;
  readonly #recovery: Recovery;
  readonly #outsideChanges = new OutsideChangeListeners();
  #closing: Promise<void> | null = null;

  /** `workbook`: the file's rows as decoded (rows only, model.ts), before any journaled write. */
  constructor(config: FileSourceConfig, workbook: Workbook) {
    this.#config = config;
    this.description = `file ${config.path}`;
    const state = (this.#state = new FileState(config, workbook));
    this.#freshness = new Freshness(config, state, async (version) => {
      // Writes accepted but not yet in the journal were planned on the old rows: journal them first.
      await this.#writes.commitQueued();
      const before = state.durable;
      await this.#recovery.adopt(version.workbook, version.fingerprint, version.identity, state.entries, { announce: true, outside: true });
      // Only an outside save comes this way: the server's own writes never do.
      if (this.#outsideChanges.wanted) this.#outsideChanges.tell(changedTabs(before, state.durable));
    });
    this.#folding = new Folding(config, state, this.#freshness);
    this.#writes = new Writes(config, state, this.#freshness, this.#folding);
    this.#recovery = new Recovery(config, state, this.#folding);
  }

  get writable(): boolean {
    return this.#state.writable;
  }

  lastModified(): number {
    return this.#state.modifiedAt;
  }

  /** Folds failed in a row since the last one that worked (for health checks and tests). */
  get foldFailures(): number {
    return this.#folding.failures;
  }

  /**
   * The latest acknowledged rows. The file is looked at (one stat) when the folder watcher saw
   * it change, when the last look is LOOK_EVERY_MS old, or when `fresh` asks: an outside save is
   * seen within milliseconds where the watcher works, and within LOOK_EVERY_MS where it does not.
   */
  async read(options: ReadOptions = {}): Promise<Workbook> {
    if (this.#freshness.mustLook(options)) await this.#freshness.refresh();
    return this.#state.durable;
  }

  /** The rows `read` gives, while there is no reason to look at the file first. */
  readNow(options: ReadOptions = {}): Workbook | undefined {
    return this.#freshness.mustLook(options) ? undefined : this.#state.durable;
  }

  write<T>(plan: (workbook: Workbook) => Planned<T>): Promise<T> {
    if (this.#closing !== null) return Promise.reject(apiError('write_error', 'The server is shutting down; send the write again once it is back.'));
    return this.#writes.write(plan, this.#freshness.arrive());
  }

  watchOutsideChanges(listener: (changes: readonly TabChange[]) => void): () => void {
    return this.#outsideChanges.add(listener);
  }

  /** Rejects, naming the file and the journal, when acknowledged writes could not be folded into the file. */
  close(): Promise<void> {
    this.#state.closing = true;
    this.#closing ??= (async () => {
      const state = this.#state;
      await this.#writes.settled();
      this.#folding.stop();
      this.#freshness.stop();
      await state.io.run(() => this.#folding.fold(true));
      const journal = state.journal;
      await journal?.close();
      if (state.entries.length === 0) return;
      // Served read-only by choice or for want of permissions, the journal waits for a run that
      // may write; but a file sheetrest cannot write back will never take those writes.
      const unfoldable = state.cannotWrite;
      if (journal === null && unfoldable === null) return;
      const why = unfoldable !== null ? `sheetrest cannot write this file back: ${unfoldable}` : this.#freshness.missing ? 'the file is missing' : (this.#folding.cause ?? 'the file could not be written');
      throw new Error(`${this.#config.path}: ${state.entries.length} acknowledged write(s) could not be folded into the file (${why}); they stay in ${journal?.path ?? this.#config.journalPath} and the next start replays them`);
    })();
    return this.#closing;
  }

  /**
   * Stops at once, as a crash would: no flush, no fold, the journal just closed. What was
   * acknowledged is in the journal and the next open replays it. For tests of recovery.
   */
  async abandon(): Promise<void> {
    this.#state.closing = true;
    this.#closing ??= Promise.resolve();
    this.#folding.stop();
    this.#freshness.stop();
    this.#state.writable = false;
    await this.#state.io.run(async () => {
      await this.#state.journal?.close();
      this.#state.journal = null;
    });
  }

  /** Brings the journal left by the last run into the state, then folds it (recovery.ts). */
  recover(contents: JournalContents | null): Promise<void> {
    return this.#recovery.recover(contents);
  }
}
