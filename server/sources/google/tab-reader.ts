// The read side of the Google source: what is kept (tab-cache.ts) and how it is refreshed. A
// read of one tab asks for that tab only, in pages of whole rows when it is large; a read of the
// first tab needs the list of tabs; a read of every tab is one request when the tabs' sizes say
// its answer stays small (about 20 MB), else the list, then tabs in batches and pages (read-pages.ts);
// the first read of every tab asks for the list (the sizes) before. Concurrent readers share
// each request; a read begun before a write (the generation) is not kept. With the revision
// check, a stale part is first checked against Drive's modifiedTime. With Redis, a read passes
// the spreadsheet's shared version: a tab kept from an older version is stale, whatever its age.
// `read('Orders', false)` cold -> `spreadsheets.get?ranges='Orders'!1:10000`; again within the
// window -> nothing upstream.
import { isApiError } from '../../../lib/errors.ts';
import { tableOf } from '../../../lib/table.ts';
import type { Tab, Workbook } from '../../../lib/workbook.ts';
import type { TabChange } from '../source.ts';
import type { SheetsApi } from './client.ts';
import { gridCells, readSpreadsheet, type GoogleSpreadsheet } from './read-grid.ts';
import { EveryTab, readTabInPages } from './read-pages.ts';
import { TabCache, UNKNOWN_VERSION, type SheetMeta } from './tab-cache.ts';
import type { Repeatable } from './upstream.ts';

/** A read's scope: every tab (undefined), the first tab (null), or one tab by name. */
export type Scope = string | null | undefined;

export interface ReaderDeps {
  readonly api: SheetsApi;
  readonly description: string;
  readonly freshnessMs: number;
  readonly revisionCheck?: { readonly maxAgeMs: number } | null;
  readonly log: (message: string) => void;
  readonly now: () => number;
  /** For tests: MAX_ANSWER_BYTES. */
  readonly maxAnswerBytes?: number;
  /** For tests and benchmarks: MAX_ANSWER_CELLS. */
  readonly maxAnswerCells?: number;
  /** Told of the tabs a read found changed since they were kept, at the same shared version: edited outside the server. */
  readonly outsideChanged?: (changes: readonly TabChange[]) => void;
  /** One upstream call (retries, timeouts, errors); `counted`: it takes a slot of the Sheets quota budget. */
  call<T>(purpose: 'read' | 'write', repeatable: Repeatable, send: (signal: AbortSignal) => Promise<T>, counted?: boolean): Promise<T>;
}

const NONE: ReadonlySet<string | null> = new Set();

export class TabReader {
  readonly cache = new TabCache();
  /** Bumped whenever a write reaches Google (or may have): reads begun before may not be kept. */
  generation = 0;
  readonly #deps: ReaderDeps;
  /** Requests in flight, by what they fetch ('all', 'meta', 'tab:People'), for readers to share. */
  readonly #inflight = new Map<string, { readonly promise: Promise<void>; readonly generation: number; readonly version: number }>();
  /** Drive's modifiedTime as last seen; a read begun after seeing it holds rows at least that new. */
  #seenModified: string | undefined;
  #checking: Promise<string | undefined> | null = null;
  /** Reads of every tab, and whether they fit in one answer. */
  readonly #everyTab: EveryTab;

  constructor(deps: ReaderDeps) {
    this.#deps = deps;
    this.#everyTab = new EveryTab(deps);
  }

  /** Resolves once the reads in flight have settled. */
  async settled(): Promise<void> {
    await Promise.all([...this.#inflight.values()].map((entry) => entry.promise.catch(() => undefined)));
  }

  /**
   * The workbook with at least the scope's tabs fresh (all of them when the scope is undefined).
   * `version`: the spreadsheet's shared version (Redis) seen before this read; tabs kept from
   * another version are read again, and what is read now is kept at it.
   */
  async read(scope: Scope, fresh: boolean, version: number = UNKNOWN_VERSION): Promise<Workbook> {
    const cache = this.cache;
    const window = fresh ? -1 : this.#deps.freshnessMs;
    // Parts the revision check found unchanged count as fresh for this read, whatever the window (even 0).
    const renewed = !fresh && this.#deps.revisionCheck ? await this.#renewUnchanged(scope, this.#deps.revisionCheck.maxAgeMs, version) : NONE;
    const now = this.#deps.now();
    const tabFresh = (name: string) => cache.atVersion(name, version) && (renewed.has(name) || cache.tabFresh(name, now, window));
    const listFresh = () => renewed.has(null) || cache.metaFresh(now, this.#deps.freshnessMs);
    if (scope === undefined) {
      if (!(listFresh() && cache.allRead() && (cache.meta ?? []).every((sheet) => tabFresh(sheet.name)))) await this.#fetch('all', fresh, version);
      return cache.workbook();
    }
    if (scope === null) {
      // Which tab is first is only known from the list, read once per window (a no-cache read
      // asks for the tab again, not the list).
      if (!listFresh()) await this.#fetch('meta', false, version);
      for (const name of cache.firstTabs()) if (!tabFresh(name)) await this.#fetch(`tab:${name}`, fresh, version);
      return cache.workbook();
    }
    // A named tab needs only itself: its read brings its sheet id and visibility.
    if (tabFresh(scope)) return cache.workbook();
    try {
      await this.#fetch(`tab:${scope}`, fresh, version);
    } catch (error) {
      // A tab Google does not know: the engine answers tab_not_found, naming the tabs there are,
      // from a list read now.
      if (!isApiError(error) || error.code !== 'tab_not_found') throw error;
      await this.#fetch('meta', true, version);
      if (cache.meta?.some((sheet) => sheet.name === scope) === true) throw error;
    }
    return cache.workbook();
  }

  /**
   * The revision check: when what the scope needs is stale, one Drive request for the file's
   * modifiedTime; each stale part read when the file had that same time counts as fresh again.
   * A check that fails leaves everything stale (the read then asks Sheets, as without the check).
   */
  async #renewUnchanged(scope: Scope, maxAgeMs: number, version: number): Promise<ReadonlySet<string | null>> {
    const cache = this.cache;
    const { freshnessMs } = this.#deps;
    const now = this.#deps.now();
    const names = scope === undefined ? (cache.meta ?? []).map((sheet) => sheet.name) : scope === null ? cache.firstTabs() : [scope];
    // A tab from before another instance's write has changed, whatever Drive says yet: not checked.
    const stale = names.filter((name) => cache.atVersion(name, version) && !cache.tabFresh(name, now, freshnessMs));
    const listStale = scope !== undefined && scope !== null ? false : cache.meta !== null && !cache.metaFresh(now, freshnessMs);
    if (stale.length === 0 && !listStale) return NONE;
    const modified = await this.#checkModified();
    if (modified === undefined) return NONE;
    const at = this.#deps.now();
    const renewed = new Set<string | null>();
    if (listStale && cache.renew(null, modified, at, maxAgeMs)) renewed.add(null);
    for (const name of stale) if (cache.renew(name, modified, at, maxAgeMs)) renewed.add(name);
    return renewed;
  }

  /** Drive's modifiedTime, one request shared by concurrent readers; undefined when the check fails. */
  #checkModified(): Promise<string | undefined> {
    this.#checking ??= this.#deps.call('read', 'idempotent', (signal) => this.#deps.api.getModifiedTime(signal), false)
      .then((modified) => {
        this.#seenModified = modified ?? undefined;
        return this.#seenModified;
      })
      .catch((error: unknown) => {
        this.#deps.log(`sheetrest: ${this.#deps.description}: the revision check (Drive's modifiedTime) failed (${isApiError(error) ? error.code : 'error'}); reading the rows instead`);
        return undefined;
      })
      .finally(() => {
        this.#checking = null;
      });
    return this.#checking;
  }

  #keepTabs(tabs: readonly Tab[], readAt: number, modified: string | undefined, version: number): void {
    keepTabsOf(this, this.#deps, tabs, readAt, modified, version);
  }

  /** One request, shared by every reader that may use it; what it reads goes into the cache, at `version`. */
  #fetch(what: string, fresh: boolean, version: number): Promise<void> {
    const inflight = this.#inflight.get(what);
    // A client's no-cache asks for a read begun after it asked, so it never joins one in flight;
    // nor does a reader that saw a newer shared version than the read's.
    if (!fresh && inflight !== undefined && inflight.generation === this.generation && inflight.version === version) return inflight.promise;
    const generation = this.generation;
    const readAt = this.#deps.now();
    // Seen before this request is sent: what it reads is at least that new.
    const modified = this.#seenModified;
    const { api } = this.#deps;
    const keep = (apply: () => void) => {
      if (generation === this.generation) apply();
    };
    let promise: Promise<void>;
    const keepTabs = (tabs: readonly Tab[]) => keep(() => this.#keepTabs(tabs, readAt, modified, version));
    const list = () =>
      this.#deps.call('read', 'idempotent', (signal) => api.getMetadata(signal)).then((data) => {
        this.#everyTab.gridCells = gridCells(data);
        const meta = metaOf(...parts(data));
        keep(() => this.cache.setMeta(meta, readAt, modified));
        return meta;
      });
    if (what === 'all') {
      promise = this.#everyTab.read({ list, keepTabs, keepMeta: (meta) => keep(() => this.cache.setMeta(meta, readAt, modified)) });
    } else if (what === 'meta') {
      promise = list().then(() => undefined);
    } else {
      const name = what.slice('tab:'.length);
      promise = readTabInPages(this.#deps, name).then((read) =>
        keep(() => {
          if (read === null) return;
          this.cache.setSheet({ name, sheetId: read.sheetId, hidden: read.tab.visibility === 'hidden' });
          this.#keepTabs([read.tab], readAt, modified, version);
        }),
      );
    }
    const entry = { promise, generation, version };
    this.#inflight.set(what, entry);
    const clear = () => {
      if (this.#inflight.get(what) === entry) this.#inflight.delete(what);
    };
    promise.then(clear, clear);
    return promise;
  }
}

/** Keeps tabs as read; one kept before at the same shared version whose rows differ now was edited outside the server. */
function keepTabsOf(reader: TabReader, deps: ReaderDeps, tabs: readonly Tab[], readAt: number, modified: string | undefined, version: number): void {
  const cache = reader.cache;
  const changes: TabChange[] = [];
  for (const tab of tabs) {
    const before = cache.tabOf(tab.name);
    // A tab kept from another version was changed by another instance's write, which is no outside edit.
    const sameVersion = cache.versionOf(tab.name) === version;
    cache.setTab(tab, readAt, modified, version);
    const after = cache.tabOf(tab.name);
    if (before !== undefined && sameVersion && after !== before && deps.outsideChanged !== undefined) changes.push({ tab: tab.name, rowCount: tableOf(after!).rowCount });
  }
  if (changes.length > 0) deps.outsideChanged?.(changes);
}

/** The tab list of a spreadsheet read with or without cells. */
function metaOf(workbook: Workbook, sheetIds: ReadonlyMap<string, number>): SheetMeta[] {
  return workbook.tabs.map((tab) => ({ name: tab.name, sheetId: sheetIds.get(tab.name) ?? 0, hidden: tab.visibility === 'hidden' }));
}

function parts(data: GoogleSpreadsheet): [Workbook, ReadonlyMap<string, number>] {
  const { workbook, sheetIds } = readSpreadsheet(data);
  return [workbook, sheetIds];
}
