// Noticing saves made outside the server: someone saves demo.xlsx in Excel, and the next
// `GET /sheets/demo` serves their rows. Every write, and a read when the folder watcher reports a
// change or the last look is LOOK_EVERY_MS old, first compares the file's stat identity with the
// one last seen (one stat, no read). On a change the file is read and decoded, and the new
// version handed to the file source, which re-applies the journaled writes on it (recovery.ts,
// adopt). A missing file answers 503 until it is back; a version that cannot be read (caught
// half-way through another program's save, damaged) leaves the last good one served and writes
// refused until it can be.
import { readFile } from 'node:fs/promises';
import { apiError, type ApiError } from '../../../lib/errors.ts';
import type { Workbook } from '../../../lib/workbook.ts';
import { fileIdentity, fileIdentityNow, fingerprint, identityNeedsHash, isMissing, watchFile } from '../../durable/disk.ts';
import type { ReadOptions } from '../source.ts';
import { decodeWorkbook } from './codec.ts';
import { rowsOnly } from './model.ts';
import { LockFileNotice } from './lock-files.ts';
import { describe, type FileSourceConfig, type FileState } from './state.ts';

/** The longest a read goes without looking at the file when no watcher event says it changed. */
export const LOOK_EVERY_MS = 100;

/** A version of the file saved by another program, decoded to rows (model.ts). */
export interface OutsideVersion {
  readonly workbook: Workbook;
  readonly fingerprint: string;
  readonly identity: string;
}

export class Freshness {
  readonly #config: FileSourceConfig;
  readonly #state: FileState;
  /** Takes an outside version in (holding state.io): the journaled writes are re-applied on it. */
  readonly #adopt: (version: OutsideVersion) => Promise<void>;
  #missing = false;
  /** Orders arrivals and file checks: under load one stat serves every write queued before it began. */
  #clock = 0;
  /** The clock when the last check that found the file unchanged began. */
  #checkedAt = 0;
  /** Watches the file's folder so reads need not stat the file; null where watching fails. */
  readonly #watcher: { close(): void } | null;
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

  constructor(config: FileSourceConfig, state: FileState, adopt: (version: OutsideVersion) => Promise<void>) {
    this.#config = config;
    this.#state = state;
    this.#adopt = adopt;
    const locks = new LockFileNotice(config.path, config.log);
    this.#watcher = watchFile(
      config.path,
      () => {
        this.#maybeChanged = true;
      },
      (file) => void locks.changed(file),
    );
  }

  /** The file was missing at the last look (requests get 503). */
  get missing(): boolean {
    return this.#missing;
  }

  /** The file changed outside the server into a version that cannot be read: writes wait. */
  get unreadable(): boolean {
    return this.#unreadable !== null;
  }

  /** Whether a read must look at the file first (see FileSource.read). */
  mustLook(options: ReadOptions): boolean {
    return options.fresh === true || this.#maybeChanged || this.#lookDue || this.#missing;
  }

  /** A write arrives: its place on the clock that orders arrivals and looks. */
  arrive(): number {
    return ++this.#clock;
  }

  /** Whether a look begun after `arrival` found the file unchanged: it saw any change made before it. */
  lookedSince(arrival: number): boolean {
    return this.#checkedAt > arrival;
  }

  /** Cheap check before reads and every write: a stat, and a re-read only when it changed. */
  async refresh(): Promise<void> {
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
    if (identity !== null && identity === this.#state.identity && !this.#missing && !identityNeedsHash(identity)) {
      this.#checkedAt = Math.max(this.#checkedAt, started);
      return;
    }
    await this.#state.io.run(async () => {
      if (!(await this.adoptIfChanged())) throw unavailable();
    });
  }

  /** Picks up a change made outside the server (holding state.io); false when the file is gone. */
  async adoptIfChanged(): Promise<boolean> {
    const { path, log, tabName, format } = this.#config;
    const state = this.#state;
    let identity: string | null;
    let bytes: Uint8Array;
    try {
      identity = await fileIdentity(path);
      if (identity !== null && identity === state.identity && !this.#missing && !identityNeedsHash(identity)) return true;
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
    if (this.#missing) log(`sheetrest: ${path} is back`, 'info');
    this.#missing = false;
    const print = fingerprint(bytes);
    if (print === state.fingerprint) {
      state.identity = identity;
      this.#unreadable = null;
      return true;
    }
    let decoded: Workbook;
    try {
      const { workbook, csvStyle, cannotWrite, readOnlyTabs } = decodeWorkbook(bytes, format, tabName);
      decoded = rowsOnly(workbook, format);
      state.csvStyle = csvStyle;
      state.cannotWrite = cannotWrite;
      state.readOnlyTabs = readOnlyTabs;
    } catch (error) {
      // Caught half-way through another program's save, or a file that cannot be served (too
      // big, damaged, hostile): reads keep the last good version, writes wait (503) until the
      // file can be read again, and the log says why, once per version.
      const why = describe(error);
      if (this.#unreadable?.why !== why) log(`sheetrest: ${path} changed but cannot be read (${why}); serving the last version read until it can be, and refusing writes meanwhile`);
      this.#unreadable = { identity, why };
      return true;
    }
    if (this.#unreadable !== null) log(`sheetrest: ${path} can be read again`, 'info');
    this.#unreadable = null;
    await this.#adopt({ workbook: decoded, fingerprint: print, identity });
    return true;
  }

  /** Stops watching: the file source is closing. */
  stop(): void {
    clearTimeout(this.#lookTimer);
    this.#watcher?.close();
  }
}

function unavailable(): ApiError {
  return apiError('upstream_unavailable', 'The spreadsheet file is not available right now; try again shortly.', { 'Retry-After': '5' });
}
