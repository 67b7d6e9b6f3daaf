// Reads that would be one huge answer, done in bounded ones: a tab in pages of whole rows
// (`'People'!1:10000`, then `'People'!10001:60000`...), and every tab in one request only while
// that answer stays under MAX_ANSWER_BYTES, else the list, small tabs in batches and large tabs
// in pages. A 200,000-row tab: 5 answers of at most 20 MB instead of one of 78 MB. What is read
// is handed back; keeping it is the tab reader's (tab-reader.ts).
import { createInterner, type SheetRow, type Tab } from '../../../lib/workbook.ts';
import type { SheetsApi } from './client.ts';
import { gridCells, readPage, readSpreadsheet } from './read-grid.ts';
import type { SheetMeta } from './tab-cache.ts';
import type { Repeatable } from './upstream.ts';

/** A tab's first request asks for this many rows; most tabs end within it. */
export const FIRST_PAGE_ROWS = 10_000;
/** Later pages hold about this many cells (a 5-column tab: 50,000 rows, about 20 MB of Google's JSON). */
export const PAGE_CELLS = 250_000;
const MAX_PAGE_ROWS = 100_000;
/** A read of every tab in one request is abandoned once its answer passes this (about a page of a 5-column tab). */
export const MAX_ANSWER_BYTES = 20 * 1024 * 1024;

export interface PageDeps {
  readonly api: SheetsApi;
  /** For tests: MAX_ANSWER_BYTES. */
  readonly maxAnswerBytes?: number;
  call<T>(purpose: 'read' | 'write', repeatable: Repeatable, send: (signal: AbortSignal) => Promise<T>): Promise<T>;
}

/**
 * One tab, in pages of whole rows: the first of FIRST_PAGE_ROWS rows says how many rows the
 * grid has; the rest follow in pages of about PAGE_CELLS cells (by the columns the first page
 * used), one request each, each page's JSON dropped once its rows are taken. A tab within the
 * first page, the usual case, is one request. null: Google gave no such tab.
 */
export async function readTabInPages(deps: PageDeps, name: string): Promise<{ tab: Tab; sheetId: number } | null> {
  const { api } = deps;
  const interner = createInterner();
  const rows: SheetRow[] = [];
  const first = readPage(rows, await deps.call('read', 'idempotent', (signal) => api.getTabPage(name, 0, FIRST_PAGE_ROWS, signal)), name, interner);
  if (first === null) return null;
  const columns = Math.max(1, ...rows.slice(0, 100).map((row) => row.text.length));
  const pageRows = Math.min(MAX_PAGE_ROWS, Math.max(FIRST_PAGE_ROWS, Math.floor(PAGE_CELLS / columns)));
  for (let start = FIRST_PAGE_ROWS; start < first.rowCount; start += pageRows) {
    const end = Math.min(first.rowCount, start + pageRows);
    readPage(rows, await deps.call('read', 'idempotent', (signal) => api.getTabPage(name, start, end, signal)), name, interner);
  }
  const tab: Tab = first.hidden ? { name, rows, visibility: 'hidden' } : { name, rows };
  return { tab, sheetId: first.sheetId };
}

/** What a read of every tab hands back as it goes: the list (as Google gave it) and tabs. */
export interface EveryTabSink {
  /** Reads the list of tabs (names and grid sizes) and keeps it; answers it. */
  list(): Promise<SheetMeta[]>;
  keepMeta(meta: SheetMeta[]): void;
  keepTabs(tabs: readonly Tab[]): void;
}

/** Reads of every tab of one spreadsheet, remembering whether it fits in one answer. */
export class EveryTab {
  /** Each tab's grid size (cells) as Google last listed it; null until a list or a read of every tab says. */
  gridCells: ReadonlyMap<string, number> | null = null;
  /** The last read of every tab did not fit in one answer: the next asks for the list first. */
  #tooLarge = false;
  readonly #deps: PageDeps;

  constructor(deps: PageDeps) {
    this.#deps = deps;
  }

  /**
   * Every tab. One request, abandoned once its answer passes MAX_ANSWER_BYTES; when it was, or
   * the last one was, the list (a few hundred bytes: names and grid sizes), then whole tabs in
   * batches of up to PAGE_CELLS grid cells, one request each, and a tab larger than that alone, in
   * pages (readTabInPages). Grid sizes count empty cells too, so no answer holds more than a
   * page's cells. Once the list shows grids small enough for one answer, one request again.
   */
  async read(sink: EveryTabSink): Promise<void> {
    const { api } = this.#deps;
    let listed: SheetMeta[] | null = null;
    if (this.#tooLarge) {
      listed = await sink.list();
      if (sum(this.gridCells) <= PAGE_CELLS) this.#tooLarge = false;
    }
    if (!this.#tooLarge) {
      const data = await this.#deps.call('read', 'idempotent', (signal) => api.getSpreadsheet(signal, this.#deps.maxAnswerBytes ?? MAX_ANSWER_BYTES));
      if (data !== null) {
        this.gridCells = gridCells(data);
        const { workbook, sheetIds } = readSpreadsheet(data);
        sink.keepMeta(workbook.tabs.map((tab) => ({ name: tab.name, sheetId: sheetIds.get(tab.name) ?? 0, hidden: tab.visibility === 'hidden' })));
        sink.keepTabs(workbook.tabs);
        return;
      }
      this.#tooLarge = true;
    }
    listed ??= await sink.list();
    const sizes = this.gridCells ?? new Map<string, number>();
    let batch: string[] = [];
    let cells = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const names = batch;
      batch = [];
      cells = 0;
      sink.keepTabs(readSpreadsheet(await this.#deps.call('read', 'idempotent', (signal) => api.getTabs(names, signal))).workbook.tabs);
    };
    for (const sheet of listed) {
      const size = sizes.get(sheet.name) ?? 0;
      if (size > PAGE_CELLS) {
        const read = await readTabInPages(this.#deps, sheet.name);
        if (read !== null) sink.keepTabs([read.tab]);
        continue;
      }
      if (cells + size > PAGE_CELLS) await flush();
      batch.push(sheet.name);
      cells += size;
    }
    await flush();
  }
}

function sum(cells: ReadonlyMap<string, number> | null): number {
  let total = 0;
  for (const size of cells?.values() ?? []) total += size;
  return total;
}
