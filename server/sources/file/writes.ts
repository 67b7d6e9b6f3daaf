// Planning and journaling writes: `POST /sheets/demo` on demo.xlsx is planned against the latest
// rows (every write before it applied, durable or not), in arrival order, and answered once its
// journal line is fsynced, with one fdatasync shared by every write queued meanwhile (group
// commit, durable/group-commit.ts). A write the file's format cannot store (limits.ts) is refused
// before it is journaled. A write's Idempotency-Key receipt rides in its own journal line, and so
// do its change-feed events for the webhook outbox (Planned.events): one fsync for all three.
import { isEmptyPlan } from '../../../lib/write-plan.ts';
import { apiError, type ApiError } from '../../../lib/errors.ts';
import type { Workbook } from '../../../lib/workbook.ts';
import { isDiskFull } from '../../durable/disk.ts';
import { GroupCommit } from '../../durable/group-commit.ts';
import type { Planned } from '../source.ts';
import type { Folding } from './folding.ts';
import type { Freshness } from './freshness.ts';
import { eventsOf, receiptsOf, type JournalEntry } from './journal.ts';
import { refuseUnstorable } from './limits.ts';
import { expectationOf, keepCells } from './rebase.ts';
import { describe, type FileSourceConfig, type FileState } from './state.ts';

/** A planned write waiting for its group commit. */
interface Accepted {
  readonly entry: JournalEntry | null;
  /** The workbook once this write (and every one before it) is applied. */
  readonly after: Workbook;
}

export class Writes {
  readonly #config: FileSourceConfig;
  readonly #state: FileState;
  readonly #freshness: Pick<Freshness, 'lookedSince' | 'refresh' | 'unreadable'>;
  readonly #folding: Pick<Folding, 'arm' | 'fold'>;
  #planning: Promise<unknown> = Promise.resolve();
  readonly #commits: GroupCommit<Accepted>;

  constructor(config: FileSourceConfig, state: FileState, freshness: Pick<Freshness, 'lookedSince' | 'refresh' | 'unreadable'>, folding: Pick<Folding, 'arm' | 'fold'>) {
    this.#config = config;
    this.#state = state;
    this.#freshness = freshness;
    this.#folding = folding;
    this.#commits = new GroupCommit<Accepted>({
      serial: state.io,
      commit: (batch) => this.#commitToJournal(batch),
      afterBatch: async () => {
        if (state.entries.length >= config.foldAfterEntries) await state.io.run(() => folding.fold(false));
      },
      onError: (error) => config.log(`sheetrest: writing ${config.path} failed: ${describe(error)}`),
    });
  }

  /** Plans after every write that arrived before it; resolves once the write is durable. `arrival`: Freshness.arrive(). */
  write<T>(plan: (workbook: Workbook) => Planned<T>, arrival: number): Promise<T> {
    const accepted = this.#planning.then(() => this.#plan(plan, arrival));
    this.#planning = accepted.catch(() => undefined);
    return accepted.then(async ({ result, durable }) => {
      await durable;
      return result;
    });
  }

  /** Journals the writes accepted but not yet journaled (holding state.io): an outside version is taken only after them. */
  async commitQueued(): Promise<void> {
    while (this.#commits.queued > 0) await this.#commits.commitQueued();
  }

  /** Resolves once every write accepted so far is planned and its group commit has ended. */
  async settled(): Promise<void> {
    await this.#planning;
    await this.#commits.settled();
  }

  async #plan<T>(plan: (workbook: Workbook) => Planned<T>, arrival: number): Promise<{ result: T; durable: Promise<void> }> {
    const state = this.#state;
    if (!state.writable || state.cannotWrite !== null) throw this.#notWritable();
    // A look at the file begun after this write arrived already saw any change made before it.
    if (!this.#freshness.lookedSince(arrival)) await this.#freshness.refresh();
    // Planning on the last good version would overwrite the outside one at the next fold.
    if (this.#freshness.unreadable) throw apiError('upstream_unavailable', 'The spreadsheet file was changed outside the server and cannot be read; nothing was written. Try again once it is fixed.', { 'Retry-After': '5' });
    const before = state.latest;
    const planned = plan(before);
    const writePlan = planned.plan;
    // A write with nothing to write still waits for the writes before it: its answer may show them.
    if (writePlan === null || isEmptyPlan(writePlan)) return { result: planned.result, durable: this.#commits.add({ entry: null, after: before }) };
    // Refused before the journal sees it: a write the file cannot hold would block every fold.
    const unstorable = refuseUnstorable(this.#config.format, writePlan, planned.workbook);
    if (unstorable !== null) throw unstorable;
    const notSheet = state.readOnlyTabs.get(writePlan.tab);
    if (notSheet !== undefined) throw apiError('write_error', `The tab "${writePlan.tab}" is ${notSheet}, which sheetrest cannot write; nothing was written.`);
    // An Idempotency-Key's receipt goes in the write's own journal line: durable together or not at all.
    const expected = expectationOf(before, writePlan);
    // Its change-feed events likewise, numbered now (in arrival order) when an outbox takes them.
    const events = this.#config.events === undefined ? [] : (planned.events?.() ?? []);
    const entry: JournalEntry = {
      plan: writePlan,
      expected,
      ...(planned.receipt === undefined ? {} : { receipt: planned.receipt }),
      ...(events.length === 0 ? {} : { events }),
    };
    // The engine already applied the plan (planned.workbook). A .csv row keeps the fields of the
    // columns the write did not set verbatim (csv/formulas.ts); .xlsx and .ods rows hold no
    // cells here: the fold keeps their formats (fold.ts).
    keepCells(before, writePlan);
    state.latest = planned.workbook;
    return { result: planned.result, durable: this.#commits.add({ entry, after: state.latest }) };
  }

  /** The journal append of one group commit; a write is acknowledged once this returns. */
  async #commitToJournal(batch: readonly Accepted[]): Promise<void> {
    const { log, path } = this.#config;
    const state = this.#state;
    const entries = batch.flatMap((accepted) => (accepted.entry === null ? [] : [accepted.entry]));
    if (entries.length > 0) {
      try {
        // None since a full disk at start (recovery.ts): start it now, with the writes it held.
        if (state.journal === null) await this.#reopenJournal();
        if (state.journal === null) throw new Error('no journal is open');
        // A failed append that could not be cut back: start over from what was acknowledged.
        if (state.journal.broken) await state.replaceJournal(state.entries);
        await state.journal.append(entries);
      } catch (error) {
        // Every write not yet durable was planned on top of these: the group commit fails them all.
        state.latest = state.durable;
        log(`sheetrest: could not save writes to the journal of ${path}: ${describe(error)}`);
        // Right away too, so that a fold, which appends a mark, finds a sound journal.
        if (state.journal?.broken) await state.replaceJournal(state.entries).catch(() => undefined);
        if (isDiskFull(error)) throw apiError('insufficient_storage', 'The server\'s disk is full; nothing was written. Try again once space is freed.');
        throw apiError('write_error', 'The write could not be saved; nothing was written.');
      }
      state.entries.push(...entries);
      this.#config.receipts?.journaled(receiptsOf(entries));
      const events = eventsOf(entries);
      if (events.length > 0) this.#config.events?.journaled(events);
    }
    state.durable = batch[batch.length - 1].after;
    state.modifiedAt = Date.now();
    this.#folding.arm();
  }

  async #reopenJournal(): Promise<void> {
    await this.#state.replaceJournal(this.#state.entries);
    this.#config.log(`sheetrest: the journal of ${this.#config.path} could be written again; writes are accepted`);
  }

  #notWritable(): ApiError {
    // Why a file cannot be written back is the file's own business and safe to say; why the disk
    // refuses (paths, the state folder) is only logged.
    const why = this.#state.cannotWrite;
    if (why !== null) return apiError('write_error', `This spreadsheet is served read-only because sheetrest cannot write this file back (${why}); nothing was written.`);
    return apiError('write_error', 'This spreadsheet is read-only on this server; nothing was written.');
  }
}
