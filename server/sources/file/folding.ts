// When and how the journal is folded into the workbook file: once writes to demo.xlsx have been
// idle foldAfterMs (or four times the last fold, for a big file), once the journal holds
// foldAfterEntries writes, at start and at close. A fold (the protocol's step 2, file-source.ts):
// encode the workbook to a temp file beside it and fsync it (.xlsx and .ods: decoded afresh and
// replayed, and written, in a worker, fold-runner.ts; .csv: from the rows, csv/fold.ts); append the mark
// `compactedTo: <new fingerprint>` to the journal and fsync; check the file is still the one last
// read; rename the temp file over it and fsync the folder; record the fold (fold-history.ts); start
// a fresh journal whose base is the new fingerprint. A fold that fails is logged once and tried
// again with backoff (backoff.ts); the journal keeps the writes meanwhile.
import { realpath, unlink } from 'node:fs/promises';
import { commitTempFile, errorCode, fileIdentity, isPermissionError, writeTempFile } from '../../durable/disk.ts';
import { FoldBackoff, RETRY_CAP_MS } from './backoff.ts';
import { gridRows } from '../../../lib/rows.ts';
import { formatCsvInSteps } from './csv/fold.ts';
import { runFold } from './fold-runner.ts';
import type { Freshness } from './freshness.ts';
import { describe, messageOf, type FileSourceConfig, type FileState } from './state.ts';

export class Folding {
  readonly #config: FileSourceConfig;
  readonly #state: FileState;
  readonly #freshness: Pick<Freshness, 'adoptIfChanged' | 'unreadable'>;
  #idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** How long the last fold took (writes wait for it). */
  #lastFoldMs = 0;
  /** After a failed fold, when to try again (close() tries regardless) and what to log. */
  readonly #backoff: FoldBackoff;

  constructor(config: FileSourceConfig, state: FileState, freshness: Pick<Freshness, 'adoptIfChanged' | 'unreadable'>) {
    this.#config = config;
    this.#state = state;
    this.#freshness = freshness;
    this.#backoff = new FoldBackoff(config.foldAfterMs);
  }

  /** Folds failed in a row since the last one that worked. */
  get failures(): number {
    return this.#backoff.failures;
  }

  /** Why the last fold failed (or why folding stopped); null when it worked. */
  get cause(): string | null {
    return this.#backoff.cause;
  }

  /** (Re)starts the wait for a quiet spell, after which the journal is folded. */
  arm(): void {
    clearTimeout(this.#idleTimer);
    if (this.#state.entries.length === 0 || !Number.isFinite(this.#config.foldAfterMs) || this.#state.closing) return;
    // Writes wait for a fold (seconds for 100k rows; in a worker reads do not), so a big
    // workbook waits for a longer quiet spell: four times its last fold, at least foldAfterMs.
    // After a failure, not before the backoff has run out.
    const quiet = Math.max(this.#config.foldAfterMs, 4 * this.#lastFoldMs, this.#backoff.waitMs(performance.now()));
    this.#idleTimer = setTimeout(() => {
      this.#idleTimer = undefined;
      this.#state.io.run(() => this.fold(false)).catch(() => undefined);
    }, quiet);
    // A pending fold must not keep a process alive: the journal already holds the writes.
    this.#idleTimer.unref?.();
  }

  /** Cancels the wait: the file source is closing (close() folds once more itself). */
  stop(): void {
    clearTimeout(this.#idleTimer);
  }

  /**
   * Folds the journal into the workbook file (holding state.io). Logs rather than throws. After
   * a failure only `force` (start, close) tries again before the backoff has run out.
   */
  async fold(force: boolean): Promise<void> {
    const { log, path, tabName, format } = this.#config;
    const state = this.#state;
    if (!state.writable || state.journal === null || state.entries.length === 0) return;
    if (!force && this.#backoff.waitMs(performance.now()) > 0) return;
    try {
      // A fold makes the journal forget its writes, and with them their Idempotency-Keys.
      await state.keepElsewhere(state.entries);
      for (let attempt = 0; attempt < 3; attempt++) {
        if (!(await this.#freshness.adoptIfChanged()) || state.entries.length === 0 || this.#freshness.unreadable) return;
        const started = performance.now();
        // The fold decodes the file as last read and replays the journal on it: state.durable, as
        // the protocol's recovery would rebuild it, without the event loop waiting (fold-runner.ts).
        // A CSV file is written from the rows held here, a slice at a time (csv/fold.ts).
        const job = { path, expected: state.fingerprint, format, tabName, entries: state.entries };
        // Through a symlink the new bytes replace its target, in the target's folder, and the
        // link stays a link (renaming over the link itself would make it a plain file).
        const file = await realpath(path).catch(() => path);
        // An .xlsx or .ods fold writes the new file itself (fold-runner.ts); a CSV one's pieces are written here.
        const result = format === 'csv' ? await this.#csvFold(file) : (await runFold(job, this.#config.fold)).result;
        this.#lastFoldMs = performance.now() - started;
        // Saved over since the last look: the next attempt looks again.
        if (result.kind === 'changed') continue;
        const { temp, identity, fingerprint: target } = result;
        await state.journal.markFold(target);
        // The last look: a save that landed while we encoded must not be overwritten.
        if ((await fileIdentity(path)) !== state.identity) {
          await unlink(temp).catch(() => undefined);
          continue;
        }
        const renamed = await commitTempFile(temp, file);
        const folded = { base: state.fingerprint, produced: target, entries: state.entries };
        state.identity = renamed ?? identity;
        state.fingerprint = target;
        state.entries = [];
        // Recorded before the journal forgets these writes, so no crash leaves them in neither.
        await state.history?.add(folded).catch((error: unknown) => log(`sheetrest: could not keep what was folded into ${path} (${messageOf(error)}); a stale copy saved over it may go unnoticed`));
        await state.replaceJournal([]);
        this.#succeeded(folded.entries.length);
        return;
      }
      this.#failed('it keeps changing outside the server');
    } catch (error) {
      if (isPermissionError(error)) {
        state.writable = false;
        this.#backoff.stopped(`it can no longer be written (${errorCode(error)})`);
        log(`sheetrest: ${path} can no longer be written (${errorCode(error)}); writes are refused, ${state.entries.length} acknowledged write(s) stay in ${state.journal.path}`);
      } else {
        this.#failed(describe(error));
      }
    }
  }

  /** The CSV file of the rows held here, in pieces (csv/fold.ts), written to a temp file beside `file`. */
  async #csvFold(file: string): Promise<{ kind: 'folded'; temp: string; identity: string; fingerprint: string }> {
    // Through the tab's chunks, whose lines the last fold kept (csv/fold.ts).
    const tab = this.#state.durable.tabs[0];
    const { pieces, fingerprint: print } = await formatCsvInSteps(tab === undefined ? [] : gridRows(tab), this.#state.csvStyle);
    return { kind: 'folded', ...(await writeTempFile(file, pieces)), fingerprint: print };
  }

  /** A failed fold: the journal keeps the writes, and the next try waits (backoff.ts). */
  #failed(cause: string): void {
    const { log, path } = this.#config;
    if (this.#backoff.failed(cause, performance.now())) {
      log(`sheetrest: could not fold the journal into ${path}: ${cause}; ${this.#state.entries.length} acknowledged write(s) stay in ${this.#state.journal?.path}, retried with backoff (up to every ${RETRY_CAP_MS / 60_000} minutes) and on stop`);
    }
    this.arm();
  }

  #succeeded(folded: number): void {
    // "compaction" in this line is the log's old word, kept as it was: people and scripts read it.
    if (this.#backoff.succeeded()) this.#config.log(`sheetrest: folded ${folded} journaled write(s) into ${this.#config.path}; compaction works again`);
  }
}
