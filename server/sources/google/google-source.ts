// A Google spreadsheet as a source: reads through the tab reader (tab-reader.ts: what is kept,
// tab by tab, and how it is refreshed), writes through group commit (group-commit.ts: writes
// queued while one is in flight go together, planned in order on the kept tabs, one request per
// segment, each client answered with its own result). Every Sheets API request first takes a
// slot of the shared quota budget (budget.ts).
// 40 concurrent `POST /sheets/crm` -> one values.append, then one more of the 39 queued meanwhile;
// `DELETE /sheets/crm/Status/done` -> a fresh read of the tab (once per batch), then one atomic
// spreadsheets.batchUpdate removing the rows bottom-up.
// With Redis (several instances, server/sources/google/shared-spreadsheet.ts), a read first looks at the
// spreadsheet's shared version (kept in memory, told of changes; one GET while it cannot be
// trusted) and reads again the tabs kept from an older one; a batch
// of writes runs under the spreadsheet's lease (after this instance's write lock), checks the
// lease's fence before each request to Google, and bumps the version before it answers.
import { apiError, isApiError } from '../../../lib/errors.ts';
import type { Workbook } from '../../../lib/workbook.ts';
import type { Planned, ReadOptions, Source, TabChange, WriteOptions } from '../source.ts';
import { OutsideChangeListeners } from '../changed-tabs.ts';
import { admit, DEFAULT_QUOTA, SHARED_BUDGETS, windowKeys, type Admission, type Budgets, type QuotaLimits, type SharedBudget } from './budget.ts';
import type { SheetsApi } from './client.ts';
import { GroupCommit } from './group-commit.ts';
import { UNKNOWN_VERSION } from './tab-cache.ts';
import { TabReader, type Scope } from './tab-reader.ts';
import { callUpstream, type CallSettings, type Repeatable, type RetryPolicy } from './upstream.ts';
import { writesSettled } from './write-lock.ts';
import type { SpreadsheetCoordination } from './shared-spreadsheet.ts';

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

export class GoogleSource implements Source {
  readonly description: string;
  readonly writable: boolean;
  readonly #settings: GoogleSourceSettings;
  readonly #now: () => number;
  readonly #reader: TabReader;
  readonly #commits: GroupCommit;
  #closing: Promise<void> | null = null;
  readonly #outsideChanges = new OutsideChangeListeners();

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
      outsideChanged: (changes) => this.#outsideChanges.tell(changes),
    });
    this.description = `google spreadsheet ${settings.spreadsheetId}`;
    this.writable = settings.writable;
    this.#commits = new GroupCommit({
      reader: this.#reader,
      api: settings.api,
      lockKey: settings.lockKey,
      ...(settings.shared === undefined ? {} : { shared: settings.shared }),
      description: this.description,
      log: settings.log,
      resends: settings.retry.retries,
      call: (purpose, repeatable, send) => this.#call(purpose, repeatable, send),
      now: this.#now,
      freshnessMs: settings.freshnessMs,
      // Only with the revision check (Drive's API enabled and its scope granted).
      ...(settings.revisionCheck ? { modifiedTime: () => this.#call('read', 'idempotent', (signal) => settings.api.getModifiedTime(signal), false).catch(() => null) } : {}),
    });
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
    return this.#commits.write(plan, scope);
  }

  watchOutsideChanges(listener: (changes: readonly TabChange[]) => void): () => void {
    return this.#outsideChanges.add(listener);
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#commits.settled();
      await writesSettled(this.#settings.lockKey);
      await this.#reader.settled();
      await this.#settings.release();
    })();
    return this.#closing;
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
