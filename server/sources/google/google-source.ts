// A Google spreadsheet as a source: reads through the tab reader (tab-reader.ts: what is kept,
// tab by tab, and how it is refreshed), writes here. Writes run under the spreadsheet's write
// lock: a fresh read of the tab they address, the engine's plan, one request carrying it, then
// the kept tab takes the plan, so the next read sees the write without asking Google again. A
// POST plans on the kept tab and costs one `values.append`. Every Sheets API request first takes
// a slot of the shared quota budget (budget.ts).
// `PATCH /sheets/crm/tabs/Orders/Name/Ann` -> `spreadsheets.get?ranges='Orders'!1:10000`, then
// one values.batchUpdate; `DELETE /sheets/crm/Status/done` -> the tab list (which tab is first?)
// when stale, a fresh read of that tab, then one atomic spreadsheets.batchUpdate removing the
// rows bottom-up.
// With Redis (several instances, server/shared/spreadsheet.ts), a read first looks at the
// spreadsheet's shared version (kept in memory, told of changes; one GET while it cannot be
// trusted) and reads again the tabs kept from an older one; a write
// runs under the spreadsheet's lease (after this instance's write lock), checks the lease's fence
// before each request to Google, and bumps the version before it answers.
import { applyPlanToTab, isEmptyPlan, type WritePlan } from '../../../lib/apply-plan.ts';
import { apiError, isApiError } from '../../../lib/errors.ts';
import { headerRowIndex, type Workbook } from '../../../lib/workbook.ts';
import type { Planned, ReadOptions, Source, WriteOptions } from '../source.ts';
import { admit, DEFAULT_QUOTA, SHARED_BUDGETS, windowKeys, type Admission, type Budgets, type QuotaLimits, type SharedBudget } from './budget.ts';
import type { SheetsApi } from './client.ts';
import { appendedValues, deleteRequests, hasFormula, quoteSheetName, replacedRanges, sheetRowOf } from './encode-plan.ts';
import { UNKNOWN_VERSION } from './tab-cache.ts';
import { TabReader, type Scope } from './tab-reader.ts';
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
  /** Several instances: the budget kept in Redis for all of them; `budgets` serves while Redis cannot answer. */
  readonly sharedBudget?: SharedBudget;
  /** Called once by close(), after the last write: releases the transport. */
  readonly release: () => Promise<void>;
  readonly now?: () => number;
  /** For tests: how large one answer holding every tab may grow before the read goes tab by tab (read-pages.ts). */
  readonly maxAnswerBytes?: number;
  /** For tests and benchmarks: how many cells one answer holding every tab may have, as estimated from the tabs' sizes (read-pages.ts). */
  readonly maxAnswerCells?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Shared with other instances through Redis; left out: this instance alone. */
  readonly shared?: SpreadsheetCoordination;
}

/** What a write plans against: the workbook, and the sheet ids its requests address. */
interface Basis {
  readonly workbook: Workbook;
  readonly sheetIds: ReadonlyMap<string, number>;
}

/** A write under the shared lease: the version read once the lease was held, and the fence. */
interface Leased {
  /** Stays true until this write bumps it, since no other instance writes meanwhile (UNKNOWN_VERSION: Redis could not say). */
  readonly version: number;
  /** Throws when the lease was lost; called right before each request to Google. */
  readonly fence: () => Promise<void>;
  readonly shared: SpreadsheetCoordination;
}

export class GoogleSource implements Source {
  readonly description: string;
  readonly writable: boolean;
  readonly #settings: GoogleSourceSettings;
  readonly #now: () => number;
  readonly #reader: TabReader;
  #closing: Promise<void> | null = null;

  constructor(settings: GoogleSourceSettings) {
    this.#settings = settings;
    this.#now = settings.now ?? (() => performance.now());
    this.#reader = new TabReader({
      api: settings.api,
      description: `google spreadsheet ${settings.spreadsheetId}`,
      freshnessMs: settings.freshnessMs,
      revisionCheck: settings.revisionCheck,
      log: settings.log,
      now: this.#now,
      ...(settings.maxAnswerBytes === undefined ? {} : { maxAnswerBytes: settings.maxAnswerBytes }),
      ...(settings.maxAnswerCells === undefined ? {} : { maxAnswerCells: settings.maxAnswerCells }),
      call: (purpose, repeatable, send, counted) => this.#call(purpose, repeatable, send, counted),
    });
    this.description = `google spreadsheet ${settings.spreadsheetId}`;
    this.writable = settings.writable;
  }

  read(options: ReadOptions = {}): Promise<Workbook> {
    const scope: Scope = 'tab' in options ? options.tab : undefined;
    const fresh = options.fresh === true;
    const shared = this.#settings.shared;
    if (shared === undefined) return this.#reader.read(scope, fresh);
    // Another instance's write moved the shared version: tabs kept from before it are read again.
    // Redis unable to say (null): what is kept is served, within the freshness window. Kept in
    // memory (a plain number): no wait at all.
    const version = shared.version();
    if (version instanceof Promise) return version.then((known) => this.#reader.read(scope, fresh, known ?? UNKNOWN_VERSION));
    return this.#reader.read(scope, fresh, version ?? UNKNOWN_VERSION);
  }

  write<T>(plan: (workbook: Workbook) => Planned<T>, options: WriteOptions = {}): Promise<T> {
    if (!this.writable) return Promise.reject(apiError('write_error', 'This connection can only read its Google spreadsheet (read-only, or an API key); nothing was written.'));
    if (this.#closing !== null) return Promise.reject(apiError('write_error', 'The server is shutting down; send the write again once it is back.'));
    const scope: Scope = 'tab' in options ? options.tab : undefined;
    const shared = this.#settings.shared;
    if (shared === undefined) return underWriteLock(this.#settings.lockKey, () => this.#write(plan, scope, null));
    // The local queue first, so that this instance's writes do not compete for the lease among themselves.
    return underWriteLock(this.#settings.lockKey, () =>
      shared.underLease(async (fence) => this.#write(plan, scope, { version: (await shared.version()) ?? UNKNOWN_VERSION, fence, shared })),
    );
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await writesSettled(this.#settings.lockKey);
      await this.#reader.settled();
      await this.#settings.release();
    })();
    return this.#closing;
  }

  /** `leased`: under the shared lease (Redis); null for this instance alone. */
  async #write<T>(plan: (workbook: Workbook) => Planned<T>, scope: Scope, leased: Leased | null): Promise<T> {
    const cache = this.#reader.cache;
    const target = scope === undefined ? null : scope === null ? (cache.firstTabs()[0] ?? null) : scope;
    // Planning on what is kept needs the tab; a write naming no tab (or the first) needs the list
    // as Google gave it, not one grown from reads of other tabs, to know which tab it is.
    const known = scope === undefined ? cache.listRead() && cache.allRead() : scope === null ? cache.listRead() && target !== null && cache.has(target) : cache.has(scope);
    const planned = known ? plan(cache.workbook()) : null;
    // An append lands after whatever is there when Google applies it: no fresh read needed. With
    // Redis, only on a tab kept at the current version: one from before another instance's write
    // would place the rows (and answer them) where they no longer go.
    if (planned !== null && isAppendOnly(planned.plan) && (leased === null || (leased.version !== UNKNOWN_VERSION && cache.versionOf(planned.plan.tab) === leased.version))) {
      try {
        return await this.#send(this.#basis(), planned.plan, planned.result, leased);
      } catch (error) {
        // The tab went away since it was read: plan again on a fresh read, which says so.
        if (!isApiError(error) || error.code !== 'tab_not_found') throw error;
      }
    }
    const fresh = leased === null ? await this.#reader.read(scope, true) : await this.#reader.read(scope, true, leased.version);
    const replanned = plan(fresh);
    if (replanned.plan === null || isEmptyPlan(replanned.plan)) return replanned.result;
    return this.#send(this.#basis(), replanned.plan, replanned.result, leased);
  }

  #basis(): Basis {
    return { workbook: this.#reader.cache.workbook(), sheetIds: this.#reader.cache.sheetIds() };
  }

  /** Carries a plan out upstream, then lets the cached tab take it. */
  async #send<T>(basis: Basis, plan: WritePlan, result: T, leased: Leased | null): Promise<T> {
    const { api } = this.#settings;
    let landedElsewhere = false;
    // Data rows start below the header row, which is lower down in a tab starting with empty rows.
    const basisTab = basis.workbook.tabs.find((tab) => tab.name === plan.tab);
    const headerRow = basisTab === undefined ? 0 : headerRowIndex(basisTab.rows);
    const basisVersion = this.#reader.cache.versionOf(plan.tab) ?? UNKNOWN_VERSION;
    try {
      if (plan.replaced.length > 0) {
        const ranges = replacedRanges(plan.tab, plan.replaced, headerRow);
        if (leased !== null) await leased.fence();
        await this.#call('write', 'idempotent', (signal) => api.updateValues(ranges, signal));
      }
      if (plan.removed.length > 0) {
        const sheetId = basis.sheetIds.get(plan.tab);
        if (sheetId === undefined) throw apiError('tab_not_found', `The tab "${plan.tab}" no longer exists.`);
        const requests = deleteRequests(sheetId, plan.removed, headerRow);
        if (leased !== null) await leased.fence();
        await this.#call('write', 'once', (signal) => api.batchUpdate(requests, signal));
      }
      if (plan.appended !== null && plan.appended.rows.length > 0) {
        const expectedRow = sheetRowOf(plan.appended.start, headerRow);
        const values = appendedValues(plan.appended.rows);
        // Google looks for a table from this row down and appends after it: normally the row
        // is empty and the rows land exactly there; rows someone added meanwhile are kept.
        const range = `${quoteSheetName(plan.tab)}!A${expectedRow}`;
        if (leased !== null) await leased.fence();
        const updated = await this.#call('write', 'once', (signal) => api.append(range, values, signal));
        landedElsewhere = updated !== null && firstRowOf(updated) !== expectedRow;
      }
    } catch (error) {
      // Part of it, or all of it, may have reached Google: the next read of the tab asks Google
      // again, here and (told through the shared version) on every other instance.
      this.#reader.generation++;
      this.#reader.cache.drop(plan.tab);
      if (leased !== null) await leased.shared.changed();
      throw error;
    }
    this.#reader.generation++;
    // Before the answer: the other instances' next reads see this write.
    const version = leased === null ? UNKNOWN_VERSION : await leased.shared.changed();
    // The basis plus this plan is the tab at the new version only when the basis was at the one
    // just before; otherwise its version is unknown and the next read with Redis reads it again.
    const after = version !== null && version !== UNKNOWN_VERSION && basisVersion === version - 1 ? version : UNKNOWN_VERSION;
    const readAt = this.#reader.cache.readAtOf(plan.tab);
    // A formula's result, or rows placed where the cache did not expect them, are only known upstream.
    if (hasFormula(plan) || landedElsewhere || basisTab === undefined || readAt === undefined) this.#reader.cache.drop(plan.tab);
    else this.#reader.cache.setTab(applyPlanToTab(basisTab, plan), readAt, undefined, after);
    if (landedElsewhere) this.#settings.log(`sheetrest: rows appended to ${this.description} landed below rows added by someone else; the cached tab was dropped`);
    return result;
  }

  /** A slot in the user's and the project's budget for one request: waits for it, or 503 when it is too far off. */
  async #admit(kind: 'read' | 'write'): Promise<void> {
    const { api, budgets = SHARED_BUDGETS, budgetScope = '', sharedBudget } = this.#settings;
    const limits = this.#settings.quota ?? DEFAULT_QUOTA;
    if (api.identity === undefined) return;
    const { user, project } = await api.identity();
    const [userKey, projectKey] = [`${budgetScope} ${user}`, `${budgetScope} ${project}`];
    // With Redis, every instance's requests count in one budget; Redis unable to answer (null): this process's.
    const shared = sharedBudget === undefined ? null : await sharedBudget.admit(windowKeys(kind, userKey, projectKey, limits), limits.maxWaitMs);
    const admission: Admission = shared ?? admit(budgets.windowsFor(kind, userKey, projectKey, limits), this.#now(), limits.maxWaitMs);
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
