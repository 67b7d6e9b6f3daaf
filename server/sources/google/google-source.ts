// A Google spreadsheet as a source. Reads come from an in-memory snapshot of the whole
// spreadsheet, refreshed by one `spreadsheets.get` once it is older than the freshness window
// (concurrent reads share that request). Writes run under the spreadsheet's write lock: a fresh
// read, the engine's plan, one request carrying it, then the snapshot takes the plan, so the
// next read sees the write without asking Google again. A POST plans on the snapshot and costs
// one `values.append`: appends do not depend on where the other rows are.
// `GET /sheets/crm` twice within 5 s -> one upstream request; `DELETE /sheets/crm/Status/done`
// -> spreadsheets.get, then one atomic spreadsheets.batchUpdate removing the rows bottom-up.
import { applyPlan, isEmptyPlan, type WritePlan } from '../../../lib/apply-plan.ts';
import { apiError, isApiError } from '../../../lib/errors.ts';
import { headerRowIndex, type Workbook } from '../../../lib/workbook.ts';
import type { Planned, ReadOptions, Source } from '../source.ts';
import type { SheetsApi } from './client.ts';
import { appendedValues, deleteRequests, hasFormula, quoteSheetName, replacedRanges, sheetRowOf } from './encode-plan.ts';
import { readSpreadsheet } from './read-grid.ts';
import { callUpstream, type CallSettings, type Repeatable, type RetryPolicy } from './upstream.ts';
import { underWriteLock, writesSettled } from './write-lock.ts';

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
}

/** The spreadsheet as last read or written, and what writes need to address its tabs. */
interface Snapshot {
  readonly workbook: Workbook;
  readonly sheetIds: ReadonlyMap<string, number>;
  /** When the read it comes from was sent; a write carries its basis's time over. */
  readonly readAt: number;
}

interface Fetch {
  readonly promise: Promise<Snapshot>;
  /** The write generation the read began in: a read begun before a write may not show it. */
  readonly generation: number;
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
    const snapshot = this.#snapshot;
    if (options.fresh !== true && snapshot !== null && this.#now() - snapshot.readAt < this.#settings.freshnessMs) return snapshot.workbook;
    return (await this.#fetch(options.fresh === true)).workbook;
  }

  write<T>(plan: (workbook: Workbook) => Planned<T>): Promise<T> {
    if (!this.writable) return Promise.reject(apiError('write_error', 'This connection can only read its Google spreadsheet (read-only, or an API key); nothing was written.'));
    if (this.#closing !== null) return Promise.reject(apiError('write_error', 'The server is shutting down; send the write again once it is back.'));
    return underWriteLock(this.#settings.lockKey, () => this.#write(plan));
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
  #fetch(fresh: boolean): Promise<Snapshot> {
    const inflight = this.#inflight;
    // A client's no-cache asks for a read begun after it asked, so it never joins one in flight.
    if (!fresh && inflight !== null && inflight.generation === this.#generation) return inflight.promise;
    const generation = this.#generation;
    const readAt = this.#now();
    const promise = this.#call('read', 'idempotent', (signal) => this.#settings.api.getSpreadsheet(signal)).then((data) => {
      const { workbook, sheetIds } = readSpreadsheet(data);
      const snapshot: Snapshot = { workbook, sheetIds, readAt };
      const current = this.#snapshot;
      if (generation === this.#generation && (current === null || current.readAt <= readAt)) this.#snapshot = snapshot;
      return snapshot;
    });
    const entry: Fetch = { promise, generation };
    this.#inflight = entry;
    const clear = () => {
      if (this.#inflight === entry) this.#inflight = null;
    };
    promise.then(clear, clear);
    return promise;
  }

  async #write<T>(plan: (workbook: Workbook) => Planned<T>): Promise<T> {
    const snapshot = this.#snapshot;
    if (snapshot !== null) {
      const planned = plan(snapshot.workbook);
      // An append lands after whatever is there when Google applies it: no fresh read needed.
      if (isAppendOnly(planned.plan)) {
        try {
          return await this.#send(snapshot, planned.plan, planned.result);
        } catch (error) {
          // The tab went away since the snapshot: plan again on a fresh read, which says so.
          if (!isApiError(error) || error.code !== 'tab_not_found') throw error;
        }
      }
    }
    const fresh = await this.#fetch(true);
    const planned = plan(fresh.workbook);
    if (planned.plan === null || isEmptyPlan(planned.plan)) return planned.result;
    return this.#send(fresh, planned.plan, planned.result);
  }

  /** Carries a plan out upstream, then lets the snapshot take it. */
  async #send<T>(basis: Snapshot, plan: WritePlan, result: T): Promise<T> {
    const { api } = this.#settings;
    let landedElsewhere = false;
    // Data rows start below the header row, which is lower down in a tab starting with empty rows.
    const basisTab = basis.workbook.tabs.find((tab) => tab.name === plan.tab);
    const headerRow = basisTab === undefined ? 0 : headerRowIndex(basisTab.rows);
    try {
      if (plan.replaced.length > 0) {
        const ranges = replacedRanges(plan.tab, plan.replaced, headerRow);
        await this.#call('write', 'idempotent', (signal) => api.updateValues(ranges, signal));
      }
      if (plan.removed.length > 0) {
        const sheetId = basis.sheetIds.get(plan.tab);
        if (sheetId === undefined) throw apiError('tab_not_found', `The tab "${plan.tab}" no longer exists.`);
        const requests = deleteRequests(sheetId, plan.removed, headerRow);
        await this.#call('write', 'once', (signal) => api.batchUpdate(requests, signal));
      }
      if (plan.appended !== null && plan.appended.rows.length > 0) {
        const expectedRow = sheetRowOf(plan.appended.start, headerRow);
        const values = appendedValues(plan.appended.rows);
        // Google looks for a table from this row down and appends after it: normally the row
        // is empty and the rows land exactly there; rows someone added meanwhile are kept.
        const range = `${quoteSheetName(plan.tab)}!A${expectedRow}`;
        const updated = await this.#call('write', 'once', (signal) => api.append(range, values, signal));
        landedElsewhere = updated !== null && firstRowOf(updated) !== expectedRow;
      }
    } catch (error) {
      // Part of it, or all of it, may have reached Google: the next read asks Google again.
      this.#forget();
      throw error;
    }
    this.#generation++;
    // A formula's result, or rows placed where the snapshot did not expect them, are only known upstream.
    if (hasFormula(plan) || landedElsewhere) this.#snapshot = null;
    else this.#snapshot = { workbook: applyPlan(basis.workbook, plan), sheetIds: basis.sheetIds, readAt: basis.readAt };
    if (landedElsewhere) this.#settings.log(`sheetrest: rows appended to ${this.description} landed below rows added by someone else; the snapshot was dropped`);
    return result;
  }

  #forget(): void {
    this.#generation++;
    this.#snapshot = null;
  }

  #call<T>(purpose: 'read' | 'write', repeatable: Repeatable, send: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const { timeoutMs, retry, sleep } = this.#settings;
    const settings: CallSettings = { timeoutMs, retry, purpose, repeatable, what: `spreadsheet ${this.#settings.spreadsheetId}`, signIn: this.#settings.api.signIn, sleep };
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
