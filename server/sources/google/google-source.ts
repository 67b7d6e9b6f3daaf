// A Google spreadsheet as a source. Reads come from an in-memory snapshot of the whole
// spreadsheet, refreshed by one `spreadsheets.get` once it is older than the freshness window
// (concurrent reads share that request). Writes run under the spreadsheet's write lock: a fresh
// read, the engine's plan, one request carrying it, then the snapshot takes the plan, so the
// next read sees the write without asking Google again. A POST plans on the snapshot and costs
// one `values.append`: appends do not depend on where the other rows are.
// `GET /sheets/crm` twice within 5 s -> one upstream request; `DELETE /sheets/crm/Status/done`
// -> spreadsheets.get, then one atomic spreadsheets.batchUpdate removing the rows bottom-up.
// With Redis (several instances, server/shared/spreadsheet.ts), a read also asks for the
// spreadsheet's shared version and drops a snapshot older than it, and a write runs under the
// spreadsheet's lease and bumps the version before it answers.
import { applyPlan, isEmptyPlan, type WritePlan } from '../../../lib/apply-plan.ts';
import { apiError, isApiError } from '../../../lib/errors.ts';
import { headerRowIndex, type Workbook } from '../../../lib/workbook.ts';
import type { Planned, ReadOptions, Source } from '../source.ts';
import type { SheetsApi } from './client.ts';
import { appendedValues, deleteRequests, hasFormula, quoteSheetName, replacedRanges, sheetRowOf } from './encode-plan.ts';
import { readSpreadsheet } from './read-grid.ts';
import { callUpstream, type CallSettings, type Repeatable, type RetryPolicy } from './upstream.ts';
import { underWriteLock, writesSettled } from './write-lock.ts';
import type { SpreadsheetCoordination } from '../../shared/spreadsheet.ts';

export interface GoogleSourceSettings {
  readonly spreadsheetId: string;
  /** Identifies the spreadsheet across connections (root URL + id), for the shared write lock. */
  readonly lockKey: string;
  readonly api: SheetsApi;
  readonly writable: boolean;
  readonly freshnessMs: number;
  readonly timeoutMs: number;
  readonly retry: RetryPolicy;
  readonly log: (message: string) => void;
  /** Called once by close(), after the last write: releases the transport. */
  readonly release: () => Promise<void>;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Shared with other instances through Redis; left out: this instance alone. */
  readonly shared?: SpreadsheetCoordination;
}

/** A snapshot's shared version when none is known (no Redis, or Redis could not say). */
const UNKNOWN_VERSION = -1;

/** The spreadsheet as last read or written, and what writes need to address its tabs. */
interface Snapshot {
  readonly workbook: Workbook;
  readonly sheetIds: ReadonlyMap<string, number>;
  /** When the read it comes from was sent; a write carries its basis's time over. */
  readonly readAt: number;
  /** The shared version when its read began (UNKNOWN_VERSION without Redis). */
  readonly version: number;
}

interface Fetch {
  readonly promise: Promise<Snapshot>;
  /** The write generation the read began in: a read begun before a write may not show it. */
  readonly generation: number;
  readonly version: number;
}

export class GoogleSource implements Source {
  readonly description: string;
  readonly writable: boolean;
  readonly #settings: GoogleSourceSettings;
  readonly #now: () => number;
  #snapshot: Snapshot | null = null;
  /** Bumped whenever a write reaches Google (or may have): older reads may not become the snapshot. */
  #generation = 0;
  #inflight: Fetch | null = null;
  #closing: Promise<void> | null = null;

  constructor(settings: GoogleSourceSettings) {
    this.#settings = settings;
    this.#now = settings.now ?? (() => performance.now());
    this.description = `google spreadsheet ${settings.spreadsheetId}`;
    this.writable = settings.writable;
  }

  async read(options: ReadOptions = {}): Promise<Workbook> {
    // Another instance's write moves the shared version: the snapshot is then older than it.
    // Redis unable to say (null): what is cached is served, within the freshness window.
    const version = this.#settings.shared === undefined ? UNKNOWN_VERSION : ((await this.#settings.shared.version()) ?? UNKNOWN_VERSION);
    const snapshot = this.#snapshot;
    const current = snapshot !== null && (version === UNKNOWN_VERSION || snapshot.version === version);
    if (options.fresh !== true && current && this.#now() - snapshot.readAt < this.#settings.freshnessMs) return snapshot.workbook;
    return (await this.#fetch(options.fresh === true, version)).workbook;
  }

  write<T>(plan: (workbook: Workbook) => Planned<T>): Promise<T> {
    if (!this.writable) return Promise.reject(apiError('write_error', 'This connection can only read its Google spreadsheet (read-only, or an API key); nothing was written.'));
    if (this.#closing !== null) return Promise.reject(apiError('write_error', 'The server is shutting down; send the write again once it is back.'));
    const shared = this.#settings.shared;
    // The local queue first, so that this instance's writes do not compete for the lease among themselves.
    if (shared === undefined) return underWriteLock(this.#settings.lockKey, () => this.#write(plan, null));
    return underWriteLock(this.#settings.lockKey, () => shared.underLease((fence) => this.#write(plan, fence)));
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await writesSettled(this.#settings.lockKey);
      await this.#inflight?.promise.catch(() => undefined);
      await this.#settings.release();
    })();
    return this.#closing;
  }

  /** One read of the whole spreadsheet, shared by every reader that may use it. */
  #fetch(fresh: boolean, version: number): Promise<Snapshot> {
    const inflight = this.#inflight;
    // A client's no-cache asks for a read begun after it asked, so it never joins one in flight.
    if (!fresh && inflight !== null && inflight.generation === this.#generation && inflight.version === version) return inflight.promise;
    const generation = this.#generation;
    const readAt = this.#now();
    const promise = this.#call('read', 'idempotent', (signal) => this.#settings.api.getSpreadsheet(signal)).then((data) => {
      const { workbook, sheetIds } = readSpreadsheet(data);
      const snapshot: Snapshot = { workbook, sheetIds, readAt, version };
      const current = this.#snapshot;
      if (generation === this.#generation && (current === null || current.readAt <= readAt)) this.#snapshot = snapshot;
      return snapshot;
    });
    const entry: Fetch = { promise, generation, version };
    this.#inflight = entry;
    const clear = () => {
      if (this.#inflight === entry) this.#inflight = null;
    };
    promise.then(clear, clear);
    return promise;
  }

  /** `fence`: under the shared lease, checks it is still held; null without Redis. */
  async #write<T>(plan: (workbook: Workbook) => Planned<T>, fence: (() => Promise<void>) | null): Promise<T> {
    // Under the lease no other instance writes meanwhile, so the version read now stays true until the send.
    const version = this.#settings.shared === undefined ? UNKNOWN_VERSION : ((await this.#settings.shared.version()) ?? UNKNOWN_VERSION);
    const snapshot = this.#snapshot;
    // A snapshot from before another instance's write would plan on rows that have moved.
    if (snapshot !== null && (this.#settings.shared === undefined || (version !== UNKNOWN_VERSION && snapshot.version === version))) {
      const planned = plan(snapshot.workbook);
      // An append lands after whatever is there when Google applies it: no fresh read needed.
      if (isAppendOnly(planned.plan)) {
        try {
          return await this.#send(snapshot, planned.plan, planned.result, fence);
        } catch (error) {
          // The tab went away since the snapshot: plan again on a fresh read, which says so.
          if (!isApiError(error) || error.code !== 'tab_not_found') throw error;
        }
      }
    }
    const fresh = await this.#fetch(true, version);
    const planned = plan(fresh.workbook);
    if (planned.plan === null || isEmptyPlan(planned.plan)) return planned.result;
    return this.#send(fresh, planned.plan, planned.result, fence);
  }

  /** Carries a plan out upstream, then lets the snapshot take it. */
  async #send<T>(basis: Snapshot, plan: WritePlan, result: T, fence: (() => Promise<void>) | null): Promise<T> {
    const { api } = this.#settings;
    let landedElsewhere = false;
    // Data rows start below the header row, which is lower down in a tab starting with empty rows.
    const basisTab = basis.workbook.tabs.find((tab) => tab.name === plan.tab);
    const headerRow = basisTab === undefined ? 0 : headerRowIndex(basisTab.rows);
    try {
      if (plan.replaced.length > 0) {
        const ranges = replacedRanges(plan.tab, plan.replaced, headerRow);
        await fence?.();
        await this.#call('write', 'idempotent', (signal) => api.updateValues(ranges, signal));
      }
      if (plan.removed.length > 0) {
        const sheetId = basis.sheetIds.get(plan.tab);
        if (sheetId === undefined) throw apiError('tab_not_found', `The tab "${plan.tab}" no longer exists.`);
        const requests = deleteRequests(sheetId, plan.removed, headerRow);
        await fence?.();
        await this.#call('write', 'once', (signal) => api.batchUpdate(requests, signal));
      }
      if (plan.appended !== null && plan.appended.rows.length > 0) {
        const expectedRow = sheetRowOf(plan.appended.start, headerRow);
        const values = appendedValues(plan.appended.rows);
        // Google looks for a table from this row down and appends after it: normally the row
        // is empty and the rows land exactly there; rows someone added meanwhile are kept.
        const range = `${quoteSheetName(plan.tab)}!A${expectedRow}`;
        await fence?.();
        const updated = await this.#call('write', 'once', (signal) => api.append(range, values, signal));
        landedElsewhere = updated !== null && firstRowOf(updated) !== expectedRow;
      }
    } catch (error) {
      // Part of it, or all of it, may have reached Google: the next read asks Google again, here
      // and (told through the shared version) on every other instance.
      this.#forget();
      await this.#settings.shared?.changed();
      throw error;
    }
    this.#generation++;
    // Before the answer: the other instances' next reads see this write.
    const version = this.#settings.shared === undefined ? UNKNOWN_VERSION : await this.#settings.shared.changed();
    // The basis plus this plan is the spreadsheet at the new version when the basis was the one before it.
    const after = version !== null && version !== UNKNOWN_VERSION && basis.version === version - 1 ? version : UNKNOWN_VERSION;
    // A formula's result, or rows placed where the snapshot did not expect them, are only known upstream.
    if (hasFormula(plan) || landedElsewhere) this.#snapshot = null;
    else this.#snapshot = { workbook: applyPlan(basis.workbook, plan), sheetIds: basis.sheetIds, readAt: basis.readAt, version: after };
    if (landedElsewhere) this.#settings.log(`sheetrest: rows appended to ${this.description} landed below rows added by someone else; the snapshot was dropped`);
    return result;
  }

  #forget(): void {
    this.#generation++;
    this.#snapshot = null;
  }

  #call<T>(purpose: 'read' | 'write', repeatable: Repeatable, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const { timeoutMs, retry, sleep } = this.#settings;
    const settings: CallSettings = { timeoutMs, retry, purpose, repeatable, what: `spreadsheet ${this.#settings.spreadsheetId}`, sleep };
    return callUpstream(settings, send).catch((error: unknown) => {
      if (isApiError(error)) this.#settings.log(`sheetrest: ${this.description}: ${purpose} failed: ${error.code} (${error.message})`);
      throw error;
    });
  }
}

function isAppendOnly(plan: WritePlan | null): plan is WritePlan {
  return plan !== null && plan.replaced.length === 0 && plan.removed.length === 0 && plan.appended !== null && plan.appended.rows.length > 0;
}

/** `'People'!A5:C7` -> 5. */
function firstRowOf(range: string): number | null {
  const match = /!\$?[A-Za-z]*\$?(\d+)/.exec(range);
  return match === null ? null : Number(match[1]);
}
