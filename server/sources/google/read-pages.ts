// Reads that would be one huge answer, done in bounded ones: a tab in pages of whole rows
// (`'People'!1:10000`, then `'People'!10001:60000`...), and every tab in one request only when
// the grids' sizes say that answer stays small (MAX_ANSWER_CELLS), else the list, small tabs in
// batches and large tabs in pages. A 200,000-row tab: the list, then 5 answers of at most 20 MB
// instead of one of 78 MB. What is read is handed back; keeping it is the tab reader's (tab-reader.ts).
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
/**
 * Every tab in one request only while their cells, as estimated, are at most this many. A filled
 * cell is about 80 bytes of Google's JSON with the fields read here (formattedValue,
 * effectiveValue, number format type: the 200,000 x 5 bench tab is 82 MB for 1,000,005 cells),
 * so 20 MB (MAX_ANSWER_BYTES) holds about 250,000: the same bound as a page (PAGE_CELLS).
 */
export const MAX_ANSWER_CELLS = PAGE_CELLS;

export interface PageDeps {
  readonly api: SheetsApi;
  /** For tests: MAX_ANSWER_BYTES. */
  readonly maxAnswerBytes?: number;
  /** For tests and benchmarks: MAX_ANSWER_CELLS (0: every tab is read tab by tab, in batches and pages). */
  readonly maxAnswerCells?: number;
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

/**
 * Reads of every tab of one spreadsheet, deciding from the tabs' sizes whether one answer holds
 * them all. Grid sizes (rows x columns allocated, filled or not) are an upper bound of a tab's
 * cells, known from the list or any answer; a tab once read is estimated by what its rows held
 * then (usedCells: rows x widest row, plus its text's length), since a new Google tab is
 * 1,000 x 26 however little is filled.
 */
export class EveryTab {
  /** Each tab's grid size (cells) as Google last listed it; null until a list or a read of every tab says. */
  gridCells: ReadonlyMap<string, number> | null = null;
  /** The cells each tab held when last read here (usedCells), and its grid then. */
  readonly #usedCells = new Map<string, { readonly cells: number; readonly grid: number | undefined }>();
  readonly #deps: PageDeps;

  constructor(deps: PageDeps) {
    this.#deps = deps;
  }

  /**
   * Every tab. With nothing known of the grids (the first read of every tab here), the list first
   * (a few hundred bytes: names and grid sizes; kept as the list). Estimated at most
   * MAX_ANSWER_CELLS in all: one request, read through a fetch that abandons it past
   * MAX_ANSWER_BYTES (a tab grown since it was last read, or cells of long texts). Else, or once
   * abandoned, the list (unless just read), then whole tabs in batches of up to PAGE_CELLS grid
   * cells, one request each, and a tab larger than that alone, in pages (readTabInPages). Batches
   * count grid cells, empty ones included, so none holds more than a page's cells.
   */
  async read(sink: EveryTabSink): Promise<void> {
    const { api } = this.#deps;
    const keepTabs = (tabs: readonly Tab[]) => {
      for (const tab of tabs) this.#usedCells.set(tab.name, { cells: usedCells(tab), grid: this.gridCells?.get(tab.name) });
      sink.keepTabs(tabs);
    };
    let listed = this.gridCells === null ? await sink.list() : null;
    if (this.#estimate() <= (this.#deps.maxAnswerCells ?? MAX_ANSWER_CELLS)) {
      const data = await this.#deps.call('read', 'idempotent', (signal) => api.getSpreadsheet(signal, this.#deps.maxAnswerBytes ?? MAX_ANSWER_BYTES));
      if (data !== null) {
        this.gridCells = gridCells(data);
        const { workbook, sheetIds } = readSpreadsheet(data);
        sink.keepMeta(workbook.tabs.map((tab) => ({ name: tab.name, sheetId: sheetIds.get(tab.name) ?? 0, hidden: tab.visibility === 'hidden' })));
        keepTabs(workbook.tabs);
        return;
      }
      // Larger than estimated: what was known of the tabs is not current, or their cells are long.
      this.#usedCells.clear();
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
      keepTabs(readSpreadsheet(await this.#deps.call('read', 'idempotent', (signal) => api.getTabs(names, signal))).workbook.tabs);
    };
    for (const sheet of listed) {
      const size = sizes.get(sheet.name) ?? 0;
      if (size > PAGE_CELLS) {
        const read = await readTabInPages(this.#deps, sheet.name);
        if (read !== null) keepTabs([read.tab]);
        continue;
      }
      if (cells + size > PAGE_CELLS) await flush();
      batch.push(sheet.name);
      cells += size;
    }
    await flush();
  }

  /**
   * The cells one answer of every tab would hold: each tab as last read here while its grid is
   * the same since (a grid Google lists larger has had rows or columns added), else its grid.
   */
  #estimate(): number {
    let total = 0;
    for (const [name, grid] of this.gridCells ?? []) {
      const used = this.#usedCells.get(name);
      total += used !== undefined && used.grid === grid ? used.cells : grid;
    }
    return total;
  }
}

/** Characters of text Google's JSON holds in the bytes of one short cell: the text comes twice (formatted and effective). */
const CHARACTERS_PER_CELL = 40;

/**
 * The cells an answer holding the tab would have: its rows times its widest row, each
 * CHARACTERS_PER_CELL characters of text counting one more (a tab of long texts is larger than
 * its cells say).
 */
function usedCells(tab: Tab): number {
  let widest = 0;
  let characters = 0;
  for (const row of tab.rows) {
    widest = Math.max(widest, row.text.length);
    for (const text of row.text) characters += text.length;
  }
  return tab.rows.length * widest + Math.ceil(characters / CHARACTERS_PER_CELL);
}
