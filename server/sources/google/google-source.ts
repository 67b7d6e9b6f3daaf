// A Google spreadsheet as a source. Reads come from memory (tab-cache.ts): the list of tabs and
// each tab's rows, each refreshed once older than the freshness window, so a read of one tab
// asks Google for that tab only (`spreadsheets.get` with `ranges='People'`), plus the list of
// tabs when that is stale; concurrent reads share each request. A read that names no tab (the
// engine's `read()` without a hint) refreshes everything in one request, as before. Writes run
// under the spreadsheet's write lock: a fresh read of the tab, the engine's plan, one request
// carrying it, then the cached tab takes the plan, so the next read sees the write without
// asking Google again. A POST plans on the cached tab and costs one `values.append`.
// `GET /sheets/crm/tabs/Orders` cold -> the tab list and Orders' cells, in parallel;
// `DELETE /sheets/crm/Status/done` -> a fresh read of the first tab, then one atomic
// spreadsheets.batchUpdate removing the rows bottom-up.
import { applyPlanToTab, isEmptyPlan, type WritePlan } from '../../../lib/apply-plan.ts';
import { apiError, isApiError } from '../../../lib/errors.ts';
import { createInterner, headerRowIndex, type SheetRow, type Tab, type Workbook } from '../../../lib/workbook.ts';
import type { Planned, ReadOptions, Source, WriteOptions } from '../source.ts';
import type { SheetsApi } from './client.ts';
import { appendedValues, deleteRequests, hasFormula, quoteSheetName, replacedRanges, sheetRowOf } from './encode-plan.ts';
import { readPage, readSpreadsheet, type GoogleSpreadsheet } from './read-grid.ts';
import { TabCache, type SheetMeta } from './tab-cache.ts';
import { admit, DEFAULT_QUOTA, SHARED_BUDGETS, type Budgets, type QuotaLimits } from './budget.ts';
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
  /**
   * The revision check: a stale tab is first checked against Drive's modifiedTime and counts as
   * fresh again when the file is unchanged, unless fetched longer than `maxAgeMs` ago. null: off.
   */
  readonly revisionCheck?: { readonly maxAgeMs: number } | null;
  /** Google's per-minute limits, shared by every source signed in as the same user (budget.ts). */
  readonly quota?: QuotaLimits;
  /** Where the shared windows live (default: the process's); tests pass their own, with short windows. */
  readonly budgets?: Budgets;
  /** Sets budgets apart by the server they count for (the root URL): an emulator is not Google. */
  readonly budgetScope?: string;
  /** Called once by close(), after the last write: releases the transport. */
  readonly release: () => Promise<void>;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** What a write plans against: the workbook, and the sheet ids its requests address. */
interface Basis {
  readonly workbook: Workbook;
  readonly sheetIds: ReadonlyMap<string, number>;
}

const NONE: ReadonlySet<string | null> = new Set();

/** A tab's first request asks for this many rows; most tabs end within it. */
export const FIRST_PAGE_ROWS = 10_000;
/** Later pages hold about this many cells (a 5-column tab: 50,000 rows, about 20 MB of Google's JSON). */
export const PAGE_CELLS = 250_000;
const MAX_PAGE_ROWS = 100_000;

/** A read's scope: every tab (undefined), the first tab (null), or one tab by name. */
type Scope = string | null | undefined;

export class GoogleSource implements Source {
  readonly description: string;
  readonly writable: boolean;
  readonly #settings: GoogleSourceSettings;
  readonly #now: () => number;
  readonly #cache = new TabCache();
  /** Bumped whenever a write reaches Google (or may have): reads begun before may not be kept. */
  #generation = 0;
  /** Requests in flight, by what they fetch ('all', 'meta', 'tab:People'), for readers to share. */
  readonly #inflight = new Map<string, { readonly promise: Promise<void>; readonly generation: number }>();
  #closing: Promise<void> | null = null;
  /** Drive's modifiedTime as last seen; a read begun after seeing it holds rows at least that new. */
  #seenModified: string | undefined;
  #checking: Promise<string | undefined> | null = null;

  constructor(settings: GoogleSourceSettings) {
    this.#settings = settings;
    this.#now = settings.now ?? (() => performance.now());
    this.description = `google spreadsheet ${settings.spreadsheetId}`;
    this.writable = settings.writable;
  }

  read(options: ReadOptions = {}): Promise<Workbook> {
    return this.#read('tab' in options ? options.tab : undefined, options.fresh === true);
  }

  write<T>(plan: (workbook: Workbook) => Planned<T>, options: WriteOptions = {}): Promise<T> {
    if (!this.writable) return Promise.reject(apiError('write_error', 'This connection can only read its Google spreadsheet (read-only, or an API key); nothing was written.'));
    if (this.#closing !== null) return Promise.reject(apiError('write_error', 'The server is shutting down; send the write again once it is back.'));
    const scope: Scope = 'tab' in options ? options.tab : undefined;
    return underWriteLock(this.#settings.lockKey, () => this.#write(plan, scope));
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await writesSettled(this.#settings.lockKey);
      await Promise.all([...this.#inflight.values()].map((entry) => entry.promise.catch(() => undefined)));
      await this.#settings.release();
    })();
    return this.#closing;
  }

  /** The workbook with at least the scope's tabs fresh (all of them when the scope is undefined). */
  async #read(scope: Scope, fresh: boolean): Promise<Workbook> {
    const cache = this.#cache;
    const window = fresh ? -1 : this.#settings.freshnessMs;
    // Parts the revision check found unchanged count as fresh for this read, whatever the window (even 0).
    const renewed = !fresh && this.#settings.revisionCheck ? await this.#renewUnchanged(scope, this.#settings.revisionCheck.maxAgeMs) : NONE;
    const now = this.#now();
    const tabFresh = (name: string) => renewed.has(name) || cache.tabFresh(name, now, window);
    const listFresh = () => renewed.has(null) || cache.metaFresh(now, this.#settings.freshnessMs);
    if (scope === undefined) {
      if (!(listFresh() && cache.allRead() && (cache.meta ?? []).every((sheet) => tabFresh(sheet.name)))) await this.#fetch('all', fresh);
      return cache.workbook();
    }
    if (scope === null) {
      // Which tab is first is only known from the list, read once per window (a no-cache read
      // asks for the tab again, not the list).
      if (!listFresh()) await this.#fetch('meta', false);
      for (const name of cache.firstTabs()) if (!tabFresh(name)) await this.#fetch(`tab:${name}`, fresh);
      return cache.workbook();
    }
    // A named tab needs only itself: its read brings its sheet id and visibility.
    if (tabFresh(scope)) return cache.workbook();
    try {
      await this.#fetch(`tab:${scope}`, fresh);
    } catch (error) {
      // A tab Google does not know: the engine answers tab_not_found, naming the tabs there are,
      // from a list read now.
      if (!isApiError(error) || error.code !== 'tab_not_found') throw error;
      await this.#fetch('meta', true);
      if (cache.meta?.some((sheet) => sheet.name === scope) === true) throw error;
    }
    return cache.workbook();
  }

  /**
   * The revision check: when what the scope needs is stale, one Drive request for the file's
   * modifiedTime; each stale part read when the file had that same time counts as fresh again.
   * A check that fails leaves everything stale (the read then asks Sheets, as without the check).
   */
  async #renewUnchanged(scope: Scope, maxAgeMs: number): Promise<ReadonlySet<string | null>> {
    const cache = this.#cache;
    const { freshnessMs } = this.#settings;
    const now = this.#now();
    const names = scope === undefined ? (cache.meta ?? []).map((sheet) => sheet.name) : scope === null ? cache.firstTabs() : [scope];
    const stale = names.filter((name) => cache.has(name) && !cache.tabFresh(name, now, freshnessMs));
    const listStale = scope !== undefined && scope !== null ? false : cache.meta !== null && !cache.metaFresh(now, freshnessMs);
    if (stale.length === 0 && !listStale) return NONE;
    const modified = await this.#checkModified();
    if (modified === undefined) return NONE;
    const at = this.#now();
    const renewed = new Set<string | null>();
    if (listStale && cache.renew(null, modified, at, maxAgeMs)) renewed.add(null);
    for (const name of stale) if (cache.renew(name, modified, at, maxAgeMs)) renewed.add(name);
    return renewed;
  }

  /** Drive's modifiedTime, one request shared by concurrent readers; undefined when the check fails. */
  #checkModified(): Promise<string | undefined> {
    this.#checking ??= this.#call('read', 'idempotent', (signal) => this.#settings.api.getModifiedTime(signal), false)
      .then((modified) => {
        this.#seenModified = modified ?? undefined;
        return this.#seenModified;
      })
      .catch((error: unknown) => {
        this.#settings.log(`sheetrest: ${this.description}: the revision check (Drive's modifiedTime) failed (${isApiError(error) ? error.code : 'error'}); reading the rows instead`);
        return undefined;
      })
      .finally(() => {
        this.#checking = null;
      });
    return this.#checking;
  }

  /** One request, shared by every reader that may use it; what it reads goes into the cache. */
  #fetch(what: string, fresh: boolean): Promise<void> {
    const inflight = this.#inflight.get(what);
    // A client's no-cache asks for a read begun after it asked, so it never joins one in flight.
    if (!fresh && inflight !== undefined && inflight.generation === this.#generation) return inflight.promise;
    const generation = this.#generation;
    const readAt = this.#now();
    // Seen before this request is sent: what it reads is at least that new.
    const modified = this.#seenModified;
    const { api } = this.#settings;
    const keep = (apply: () => void) => {
      if (generation === this.#generation) apply();
    };
    let promise: Promise<void>;
    if (what === 'all') {
      promise = this.#call('read', 'idempotent', (signal) => api.getSpreadsheet(signal)).then((data) =>
        keep(() => {
          const { workbook, sheetIds } = readSpreadsheet(data);
          this.#cache.setMeta(metaOf(workbook, sheetIds), readAt, modified);
          for (const tab of workbook.tabs) this.#cache.setTab(tab, readAt, modified);
        }),
      );
    } else if (what === 'meta') {
      promise = this.#call('read', 'idempotent', (signal) => api.getMetadata(signal)).then((data) => keep(() => this.#cache.setMeta(metaOf(...parts(data)), readAt, modified)));
    } else {
      const name = what.slice('tab:'.length);
      promise = this.#readTab(name).then((read) =>
        keep(() => {
          if (read === null) return;
          this.#cache.setSheet({ name, sheetId: read.sheetId, hidden: read.tab.visibility === 'hidden' });
          this.#cache.setTab(read.tab, readAt, modified);
        }),
      );
    }
    const entry = { promise, generation };
    this.#inflight.set(what, entry);
    const clear = () => {
      if (this.#inflight.get(what) === entry) this.#inflight.delete(what);
    };
    promise.then(clear, clear);
    return promise;
  }

  /**
   * One tab, in pages of whole rows: the first of FIRST_PAGE_ROWS rows says how many rows the
   * grid has; the rest follow in pages of about PAGE_CELLS cells (by the columns the first page
   * used), one request each, each page's JSON dropped once its rows are taken. A tab within the
   * first page, the usual case, is one request. null: Google gave no such tab.
   */
  async #readTab(name: string): Promise<{ tab: Tab; sheetId: number } | null> {
    const { api } = this.#settings;
    const interner = createInterner();
    const rows: SheetRow[] = [];
    const first = readPage(rows, await this.#call('read', 'idempotent', (signal) => api.getTabPage(name, 0, FIRST_PAGE_ROWS, signal)), name, interner);
    if (first === null) return null;
    const columns = Math.max(1, ...rows.slice(0, 100).map((row) => row.text.length));
    const pageRows = Math.min(MAX_PAGE_ROWS, Math.max(FIRST_PAGE_ROWS, Math.floor(PAGE_CELLS / columns)));
    for (let start = FIRST_PAGE_ROWS; start < first.rowCount; start += pageRows) {
      const end = Math.min(first.rowCount, start + pageRows);
      readPage(rows, await this.#call('read', 'idempotent', (signal) => api.getTabPage(name, start, end, signal)), name, interner);
    }
    const tab: Tab = first.hidden ? { name, rows, visibility: 'hidden' } : { name, rows };
    return { tab, sheetId: first.sheetId };
  }

  async #write<T>(plan: (workbook: Workbook) => Planned<T>, scope: Scope): Promise<T> {
    const cache = this.#cache;
    const target = scope === undefined ? null : scope === null ? (cache.firstTabs()[0] ?? null) : scope;
    // Planning on what is kept needs the tab; a write naming no tab (or the first) needs the list
    // as Google gave it, not one grown from reads of other tabs, to know which tab it is.
    const known = scope === undefined ? cache.listRead() && cache.allRead() : scope === null ? cache.listRead() && target !== null && cache.has(target) : cache.has(scope);
    const planned = known ? plan(cache.workbook()) : null;
    // An append lands after whatever is there when Google applies it: no fresh read needed.
    if (planned !== null && isAppendOnly(planned.plan)) {
      try {
        return await this.#send(this.#basis(), planned.plan, planned.result);
      } catch (error) {
        // The tab went away since it was read: plan again on a fresh read, which says so.
        if (!isApiError(error) || error.code !== 'tab_not_found') throw error;
      }
    }
    const fresh = await this.#read(scope, true);
    const replanned = plan(fresh);
    if (replanned.plan === null || isEmptyPlan(replanned.plan)) return replanned.result;
    return this.#send(this.#basis(), replanned.plan, replanned.result);
  }

  #basis(): Basis {
    return { workbook: this.#cache.workbook(), sheetIds: this.#cache.sheetIds() };
  }

  /** Carries a plan out upstream, then lets the cached tab take it. */
  async #send<T>(basis: Basis, plan: WritePlan, result: T): Promise<T> {
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
      // Part of it, or all of it, may have reached Google: the next read of the tab asks Google again.
      this.#generation++;
      this.#cache.drop(plan.tab);
      throw error;
    }
    this.#generation++;
    const readAt = this.#cache.readAtOf(plan.tab);
    // A formula's result, or rows placed where the cache did not expect them, are only known upstream.
    if (hasFormula(plan) || landedElsewhere || basisTab === undefined || readAt === undefined) this.#cache.drop(plan.tab);
    else this.#cache.setTab(applyPlanToTab(basisTab, plan), readAt);
    if (landedElsewhere) this.#settings.log(`sheetrest: rows appended to ${this.description} landed below rows added by someone else; the cached tab was dropped`);
    return result;
  }

  /** A slot in the user's and the project's budget for one request: waits for it, or 503 when it is too far off. */
  async #admit(kind: 'read' | 'write'): Promise<void> {
    const { api, budgets = SHARED_BUDGETS, budgetScope = '' } = this.#settings;
    const limits = this.#settings.quota ?? DEFAULT_QUOTA;
    if (api.identity === undefined) return;
    const { user, project } = await api.identity();
    const admission = admit(budgets.windowsFor(kind, `${budgetScope} ${user}`, `${budgetScope} ${project}`, limits), this.#now(), limits.maxWaitMs);
    if ('refusedForMs' in admission) {
      const perMinute = kind === 'read' ? limits.readsPerMinutePerUser : limits.writesPerMinutePerUser;
      const written = kind === 'write' ? ' Nothing was written.' : '';
      throw apiError('upstream_unavailable', `Google Sheets' request quota for this server's credentials is used up for now (${perMinute} ${kind}s a minute); sheetrest did not send the request.${written}`, {
        'Retry-After': String(seconds(admission.refusedForMs)),
      });
    }
    if (admission.waitMs > 0) await (this.#settings.sleep ?? wait)(admission.waitMs);
  }

  /** One upstream call; `counted`: a Sheets API request, which takes a slot of the budget (Drive's do not). */
  #call<T>(purpose: 'read' | 'write', repeatable: Repeatable, send: (signal: AbortSignal) => Promise<T>, counted = true): Promise<T> {
    const { timeoutMs, retry, sleep } = this.#settings;
    const settings: CallSettings = { timeoutMs, retry, purpose, repeatable, what: `spreadsheet ${this.#settings.spreadsheetId}`, signIn: this.#settings.api.signIn, sleep, ...(counted ? { admit: () => this.#admit(purpose) } : {}) };
    return callUpstream(settings, send).catch((error: unknown) => {
      if (isApiError(error)) this.#settings.log(`sheetrest: ${this.description}: ${purpose} failed: ${error.code} (${error.message})`);
      throw error;
    });
  }
}

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Seconds in Retry-After: at least 1. */
function seconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

function isAppendOnly(plan: WritePlan | null): plan is WritePlan {
  return plan !== null && plan.replaced.length === 0 && plan.removed.length === 0 && plan.appended !== null && plan.appended.rows.length > 0;
}

/** `'People'!A5:C7` -> 5. */
function firstRowOf(range: string): number | null {
  const match = /!\$?[A-Za-z]*\$?(\d+)/.exec(range);
  return match === null ? null : Number(match[1]);
}

/** The tab list of a spreadsheet read with or without cells. */
function metaOf(workbook: Workbook, sheetIds: ReadonlyMap<string, number>): SheetMeta[] {
  return workbook.tabs.map((tab) => ({ name: tab.name, sheetId: sheetIds.get(tab.name) ?? 0, hidden: tab.visibility === 'hidden' }));
}

function parts(data: GoogleSpreadsheet): [Workbook, ReadonlyMap<string, number>] {
  const { workbook, sheetIds } = readSpreadsheet(data);
  return [workbook, sheetIds];
}
