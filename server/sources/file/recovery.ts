// Bringing journaled writes onto a version of the file: at open, the journal the last run left
// (recover, the protocol's step 3 in file-source.ts), and whenever the file was saved outside the
// server (adopt, from freshness.ts). demo.xlsx still the journal's base -> every entry is replayed;
// equal to a fold's `compactedTo` mark -> the entries before the mark are in the file, the rest
// replayed; neither -> saved by someone else: the journaled writes are re-applied only where the
// rows they touch still hold what they held (rebase.ts), and a write that no longer fits is saved
// to `<file>.conflict-<time>.jsonl` in the state folder and logged. Writes already folded into
// the file are never applied again on an outside save; the fold history (fold-history.ts) only
// lets those whose rows the outside version dropped be saved aside rather than lost unseen.
import { basename } from 'node:path';
import type { Workbook } from '../../../lib/workbook.ts';
import { isDiskFull, mtimeOf } from '../../durable/disk.ts';
import { FoldHistory } from './fold-history.ts';
import type { Folding } from './folding.ts';
import { eventsOf, Journal, receiptsOf, saveConflicts, type JournalContents, type JournalEntry } from './journal.ts';
import { unstorableEntries } from './limits.ts';
import { applyKeepingCells, rebase } from './rebase.ts';
import { describe, messageOf, type FileSourceConfig, type FileState } from './state.ts';

export class Recovery {
  readonly #config: FileSourceConfig;
  readonly #state: FileState;
  readonly #folding: Pick<Folding, 'arm' | 'fold'>;

  constructor(config: FileSourceConfig, state: FileState, folding: Pick<Folding, 'arm' | 'fold'>) {
    this.#config = config;
    this.#state = state;
    this.#folding = folding;
  }

  /** Brings the journal left by the last run (null: none) into the state, opens a fresh one and folds it. */
  async recover(contents: JournalContents | null): Promise<void> {
    const { journalPath, log, path, format } = this.#config;
    const state = this.#state;
    if (state.writable) state.history = await FoldHistory.load(journalPath.replace(/\.journal$/, '') + '.compacted');
    // The journal left by the last run holds the Idempotency-Keys of its writes: answered from
    // now on, and kept elsewhere before anything below (a fold, a rebase) makes it forget them.
    if (contents !== null) this.#config.receipts?.journaled(receiptsOf(contents.entries));
    // Its change-feed events too: a crash after the journal's fsync may have kept them from the
    // webhook outbox, which takes those it lacks (the outbox's own appends are not fsynced).
    if (contents !== null) this.#config.events?.journaled(eventsOf(contents.entries));
    // An empty journal on another base: the file was replaced while the server was stopped.
    if (contents !== null && (contents.entries.length > 0 || contents.base !== state.fingerprint)) {
      const mark = contents.folds.findLast((fold) => fold.fingerprint === state.fingerprint);
      const matches = contents.base === state.fingerprint || mark !== undefined;
      // Replaced outside while stopped, after a fold whose rename landed but whose fresh journal
      // was never written (a crash between the two): the writes before that fold's mark were in
      // the file the outside save replaced, so they are folded, not pending. The history records
      // the fold just after the rename; a mark it does not know was never renamed into place.
      const landed = matches ? undefined : contents.folds.findLast((fold) => state.history?.produced(fold.fingerprint) === true);
      const pending = contents.entries.slice(contents.base === state.fingerprint ? 0 : (mark ?? landed)?.entriesBefore ?? 0);
      // An earlier version acknowledged writes the format cannot store (a 40,000-character .xlsx
      // cell): no fold could ever take them, so they are set aside instead of retried forever.
      const unstorable = unstorableEntries(format, pending);
      if (unstorable.length > 0) {
        await this.#setAside(unstorable, `${unstorable.length} journaled write(s) to ${path} hold a cell an .${format} file cannot store`);
      }
      // Nothing is written before recovery: state.durable is still the file's rows as decoded.
      if (matches && unstorable.length === 0) {
        if (contents.damaged.length > 0) {
          // Writes were lost between these (mod.ts logs which lines): re-check each as on an outside change.
          await this.adopt(state.durable, state.fingerprint, state.identity, pending, { announce: false, outside: false });
        } else {
          state.durable = state.latest = pending.reduce((workbook, entry) => applyKeepingCells(workbook, entry.plan), state.durable);
          state.entries = pending.slice();
          // When the journaled writes were made is not kept: the recovery is a later bound.
          if (pending.length > 0) state.modifiedAt = Date.now();
        }
        if (pending.length > 0) log(`sheetrest: recovered ${state.entries.length} journaled write(s) to ${path}`);
      } else {
        // Re-planning moves the appends that followed a set-aside one up into its place.
        const storable = pending.filter((entry) => !unstorable.includes(entry));
        await this.adopt(state.durable, state.fingerprint, state.identity, storable, { announce: false, outside: !matches });
      }
    }
    // Read-only: leave the journal for a run that can write it back.
    if (!state.writable) return;
    try {
      state.journal = await Journal.create(journalPath, state.fingerprint, state.entries, this.#config.journalFiles);
    } catch (error) {
      if (!isDiskFull(error)) throw error;
      // A full disk need not stop the server: the rows, the journal's writes included, are served;
      // the journal on disk stays as it is (the next start replays it), and each write tries
      // again to start a fresh one, answering 507 while the disk is full (writes.ts).
      log(`sheetrest: ${messageOf(error)}; serving ${path} for reads, writes answer 507 until space is freed${state.entries.length > 0 ? ` (${state.entries.length} journaled write(s) stay in ${journalPath})` : ''}`);
      return;
    }
    await state.io.run(() => this.#folding.fold(true));
  }

  /**
   * Takes a new version of the file, re-applying the journaled writes that still fit. `outside`:
   * the version was saved by another program, the new truth for every write folded before it;
   * those writes are never applied again (rows deleted outside stay deleted), and the ones whose
   * rows it dropped are saved aside (fold-history.ts).
   */
  async adopt(decoded: Workbook, print: string, identity: string | null, entries: readonly JournalEntry[], how: { announce: boolean; outside: boolean }): Promise<void> {
    const { log, path } = this.#config;
    const state = this.#state;
    // Re-planned entries and conflicts leave the journal without their Idempotency-Keys and events.
    await state.keepElsewhere(entries);
    const { workbook, applied, conflicts } = rebase(decoded, entries, applyKeepingCells);
    state.fingerprint = print;
    state.identity = identity;
    state.durable = state.latest = workbook;
    state.entries = applied.slice();
    state.modifiedAt = applied.length > 0 ? Date.now() : (mtimeOf(identity) ?? Date.now());
    // An ordinary save from a spreadsheet program: news, not a problem.
    if (how.announce) log(`sheetrest: picked up a change to ${path} made outside the server`, 'info');
    if (conflicts.length > 0) {
      const what = `${conflicts.length} acknowledged write(s) to ${path} conflict with a change made outside the server`;
      await this.#setAside(conflicts, what, 'kept the outside version and ');
    }
    if (how.outside && state.history !== null) {
      const dropped = state.history.droppedBy(decoded);
      try {
        if (dropped.length > 0) {
          const what = `${path} was replaced by a version without the rows of ${dropped.length} acknowledged write(s) already folded into it (deleted outside, or saved from a copy opened before they were folded)`;
          await this.#setAside(dropped, what, 'kept the outside version and ');
        }
        // Saved aside before they are forgotten; from now on the folds are compared with this version.
        await state.history.clear();
      } catch (error) {
        // Only a record: the outside version is taken either way.
        log(`sheetrest: could not save aside the ${dropped.length} folded write(s) the outside version of ${path} dropped (${describe(error)})`);
      }
    }
    if (state.journal !== null) await state.replaceJournal(applied);
    this.#folding.arm();
  }

  /** Saves writes that cannot be applied to a conflict file in the state folder, and logs where. */
  async #setAside(entries: readonly JournalEntry[], what: string, kept = ''): Promise<void> {
    const { log, path, stateDir } = this.#config;
    if (!this.#state.writable) return log(`sheetrest: ${what}; they stay in the journal`);
    const file = await saveConflicts(stateDir, basename(path), entries);
    log(`sheetrest: ${what}; ${kept}saved the writes to ${file}`);
  }
}
