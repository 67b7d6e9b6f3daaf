// What the Google source holds of a spreadsheet between requests: the list of tabs (metadata)
// and each tab's rows, every part with the time it was read, so a read of one tab asks Google
// for that tab only and `/tabs` for the list only. The workbook handed to the engine is built
// from them and kept while nothing changes; a tab read again with the same content keeps its
// object, so answers and ETags built from it stay valid (server/http/answer-cache.ts). With Redis
// (several instances, server/sources/google/shared-spreadsheet.ts) each tab also remembers the spreadsheet's
// shared version its read began at: a tab from before another instance's write is stale.
// `People` read at t=0, `Orders` at t=3 s: at t=6 s with a 5 s window, People is stale, Orders is not.
import { tabVersion } from '../../../lib/version.ts';
import type { Tab, Workbook } from '../../../lib/workbook.ts';

/** A tab's shared version when none is known: no Redis, Redis could not say, or after a write here that did not follow the version just before. */
export const UNKNOWN_VERSION = -1;

/** One tab as the metadata lists it. */
export interface SheetMeta {
  readonly name: string;
  readonly sheetId: number;
  readonly hidden: boolean;
}

interface Dated<T> {
  readonly value: T;
  /** When it was last known current: its read was sent, or a revision check found the file unchanged since. */
  readonly readAt: number;
  /** When the request it comes from was sent (a revision check does not move it). */
  readonly fetchedAt: number;
  /** Drive's modifiedTime seen before that request was sent; undefined when unknown (or after a write here). */
  readonly modifiedTime?: string;
  /** The shared version when its read began (UNKNOWN_VERSION without Redis). */
  readonly version: number;
}

export class TabCache {
  // The list is not versioned: writes change rows, never which tabs there are.
  #meta: Dated<readonly SheetMeta[]> | null = null;
  readonly #tabs = new Map<string, Dated<Tab>>();
  /** Stand-ins for tabs listed but not read yet: empty, one object per name. Never answered from. */
  readonly #unread = new Map<string, Tab>();
  #workbook: Workbook | null = null;

  get meta(): readonly SheetMeta[] | null {
    return this.#meta?.value ?? null;
  }

  metaFresh(now: number, windowMs: number): boolean {
    return this.#meta !== null && now - this.#meta.readAt < windowMs;
  }

  tabFresh(name: string, now: number, windowMs: number): boolean {
    const entry = this.#tabs.get(name);
    return entry !== undefined && now - entry.readAt < windowMs;
  }

  has(name: string): boolean {
    return this.#tabs.has(name);
  }

  readAtOf(name: string): number | undefined {
    return this.#tabs.get(name)?.readAt;
  }

  /** The tab as kept, at any age. */
  tabOf(name: string): Tab | undefined {
    return this.#tabs.get(name)?.value;
  }

  versionOf(name: string): number | undefined {
    return this.#tabs.get(name)?.version;
  }

  /**
   * Whether a kept tab may be served for a read that saw the shared `version`: any tab when the
   * version is unknown (no Redis, or Redis could not say: serve what is kept, within the window),
   * else only one read (or written) at that very version.
   */
  atVersion(name: string, version: number): boolean {
    const entry = this.#tabs.get(name);
    return entry !== undefined && (version === UNKNOWN_VERSION || entry.version === version);
  }

  /** Whether the list was read from Google (at any age), not only grown from single tabs' reads. */
  listRead(): boolean {
    return this.#meta !== null && this.#meta.fetchedAt !== Number.NEGATIVE_INFINITY;
  }

  allRead(): boolean {
    return this.meta?.every((sheet) => this.#tabs.has(sheet.name)) ?? false;
  }

  setMeta(sheets: readonly SheetMeta[], readAt: number, modifiedTime?: string): void {
    const before = this.#meta?.value;
    this.#meta = { value: sheets, readAt, fetchedAt: readAt, modifiedTime, version: UNKNOWN_VERSION };
    if (before === undefined || !sameMeta(before, sheets)) this.#workbook = null;
    for (const [name, entry] of this.#tabs) {
      const sheet = sheets.find((candidate) => candidate.name === name);
      // Tabs no longer listed are gone (deleted or renamed in Google Sheets); one hidden or shown since is a changed tab.
      if (sheet === undefined) this.drop(name);
      else if ((entry.value.visibility === 'hidden') !== sheet.hidden) this.setTab(withVisibility(entry.value, sheet.hidden), entry.readAt, entry.modifiedTime, entry.version);
    }
  }

  /**
   * A tab's id and visibility as its own read gave them (newer than the list, maybe). A tab the
   * list does not have yet joins it at the end: a read of one tab does not need the whole list.
   */
  setSheet(sheet: SheetMeta): void {
    const sheets = this.#meta?.value ?? [];
    const at = sheets.findIndex((candidate) => candidate.name === sheet.name);
    const before = at < 0 ? undefined : sheets[at];
    if (before !== undefined && before.sheetId === sheet.sheetId && before.hidden === sheet.hidden) return;
    const value = at < 0 ? [...sheets, sheet] : sheets.map((candidate, i) => (i === at ? sheet : candidate));
    // A list grown this way is not a list read from Google: it stays stale.
    const stale = Number.NEGATIVE_INFINITY;
    this.#meta = { value, readAt: this.#meta?.readAt ?? stale, fetchedAt: this.#meta?.fetchedAt ?? stale, modifiedTime: this.#meta?.modifiedTime, version: UNKNOWN_VERSION };
    this.#workbook = null;
  }

  /** Keeps a tab as read (at the shared `version`, when known); the old object stays when the content is the same. */
  setTab(tab: Tab, readAt: number, modifiedTime?: string, version: number = UNKNOWN_VERSION): void {
    const before = this.#tabs.get(tab.name)?.value;
    const kept = before !== undefined && before.visibility === tab.visibility && tabVersion(before) === tabVersion(tab) ? before : tab;
    this.#tabs.set(tab.name, { value: kept, readAt, fetchedAt: readAt, modifiedTime, version });
    if (kept !== before) this.#workbook = null;
  }

  /**
   * The revision check found the file unchanged (`modifiedTime`) since the tab (or, with no name,
   * the list) was read: it counts as read now, unless it was fetched longer than `maxAgeMs` ago.
   */
  renew(name: string | null, modifiedTime: string, now: number, maxAgeMs: number): boolean {
    const entry = name === null ? this.#meta : this.#tabs.get(name);
    if (entry === null || entry === undefined || entry.modifiedTime !== modifiedTime || now - entry.fetchedAt >= maxAgeMs) return false;
    if (name === null) this.#meta = { ...(entry as Dated<readonly SheetMeta[]>), readAt: now };
    else this.#tabs.set(name, { ...(entry as Dated<Tab>), readAt: now });
    return true;
  }

  drop(name: string): void {
    if (this.#tabs.delete(name)) this.#workbook = null;
  }

  clear(): void {
    this.#meta = null;
    this.#tabs.clear();
    this.#workbook = null;
  }

  /** The tabs the metadata lists, in order: each as read (at any age), or an empty stand-in. */
  workbook(): Workbook {
    if (this.#workbook !== null) return this.#workbook;
    const tabs = (this.meta ?? []).map((sheet) => this.#tabs.get(sheet.name)?.value ?? this.#standIn(sheet));
    this.#workbook = { tabs };
    return this.#workbook;
  }

  sheetIds(): ReadonlyMap<string, number> {
    return new Map((this.meta ?? []).map((sheet) => [sheet.name, sheet.sheetId]));
  }

  /** The tabs a read of "the first tab" may need: the first, and the first visible one when it is hidden. */
  firstTabs(): string[] {
    const meta = this.meta ?? [];
    const first = meta[0];
    if (first === undefined) return [];
    const visible = meta.find((sheet) => !sheet.hidden);
    return visible === undefined || visible === first ? [first.name] : [first.name, visible.name];
  }

  #standIn(sheet: SheetMeta): Tab {
    let tab = this.#unread.get(sheet.name);
    if (tab === undefined || (tab.visibility === 'hidden') !== sheet.hidden) {
      tab = sheet.hidden ? { name: sheet.name, rows: [], visibility: 'hidden' } : { name: sheet.name, rows: [] };
      this.#unread.set(sheet.name, tab);
    }
    return tab;
  }
}

function withVisibility(tab: Tab, hidden: boolean): Tab {
  return hidden ? { name: tab.name, rows: tab.rows, visibility: 'hidden' } : { name: tab.name, rows: tab.rows };
}

function sameMeta(a: readonly SheetMeta[], b: readonly SheetMeta[]): boolean {
  return a.length === b.length && a.every((sheet, i) => sheet.name === b[i].name && sheet.sheetId === b[i].sheetId && sheet.hidden === b[i].hidden);
}
