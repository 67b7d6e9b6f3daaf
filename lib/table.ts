// A tab seen through the contract's header rules: row 1 names the columns, an empty header hides
// its column, the first of two equal headers wins, cells right of the last header are ignored,
// and data rows run to the last row holding any value (blank rows in between stay data rows).
// A table also keeps the work that depends only on the tab (case folding, serialized rows),
// so reading an unchanged tab again does not redo it.
import { fold } from './match.ts';
import { cellText, EMPTY_ROW, isSheetDate, rowHasValue, type SheetRow, type Tab, type TypedValue } from './workbook.ts';

export interface Column {
  readonly name: string;
  /** Sheet column (0 is column A). */
  readonly position: number;
}

const encoder = new TextEncoder();

export class Table {
  readonly name: string;
  readonly columns: readonly Column[];
  /** Sheet columns up to and including the last header; cells beyond are ignored. */
  readonly width: number;
  /** Number of data rows. */
  readonly rowCount: number;
  readonly #grid: readonly SheetRow[];
  readonly #byName: Map<string, Column>;
  readonly #folded = new Map<number, string[]>();
  readonly #values = new Map<number, TypedValue[]>();
  readonly #exact = new Map<number, Map<string, number[]>>();
  readonly #trigrams = new Map<number, Map<string, number[]> | null>();
  readonly #rowBytes: { text?: (Uint8Array | undefined)[]; raw?: (Uint8Array | undefined)[] } = {};
  readonly #answers = new Map<string, Uint8Array>();

  constructor(tab: Tab) {
    this.name = tab.name;
    this.#grid = tab.rows;
    const header = tab.rows[0] ?? EMPTY_ROW;
    const columns: Column[] = [];
    const byName = new Map<string, Column>();
    let width = 0;
    for (let position = 0; position < header.text.length; position++) {
      const name = cellText(header, position);
      if (name.trim() === '') continue;
      width = position + 1;
      if (byName.has(name)) continue;
      const column = { name, position };
      columns.push(column);
      byName.set(name, column);
    }
    this.columns = columns;
    this.width = width;
    this.#byName = byName;
    let last = tab.rows.length - 1;
    while (last >= 1 && !rowHasValue(tab.rows[last], width)) last--;
    this.rowCount = Math.max(last, 0);
  }

  column(name: string): Column | undefined {
    return this.#byName.get(name);
  }

  /** Data row `index` (zero-based): sheet row index + 2. */
  row(index: number): SheetRow {
    return this.#grid[index + 1] ?? EMPTY_ROW;
  }

  /** The case-folded displayed text of one column, for every data row; computed once per table. */
  folded(column: Column): readonly string[] {
    return once(this.#folded, column, () => {
      const folded = new Array<string>(this.rowCount);
      for (let index = 0; index < this.rowCount; index++) folded[index] = fold(cellText(this.row(index), column.position));
      return folded;
    });
  }

  /** An answer that depends only on this table (the whole tab in one format), built once, as UTF-8. */
  remember(key: string, build: () => string | Uint8Array): Uint8Array {
    let answer = this.#answers.get(key);
    if (answer === undefined) {
      const built = build();
      answer = typeof built === 'string' ? encoder.encode(built) : built;
      this.#answers.set(key, answer);
    }
    return answer;
  }

  /**
   * The data rows of each folded value of one column, ascending: an exact filter looks its rows
   * up instead of scanning the tab. Built on the first exact filter on the column.
   */
  exactIndex(column: Column): ReadonlyMap<string, readonly number[]> {
    return once(this.#exact, column, () => {
      const index = new Map<string, number[]>();
      const folded = this.folded(column);
      for (let row = 0; row < folded.length; row++) {
        const rows = index.get(folded[row]);
        if (rows === undefined) index.set(folded[row], [row]);
        else rows.push(row);
      }
      return index;
    });
  }

  /**
   * The data rows holding each three-character run of one column's folded text, ascending: a
   * `*text*` filter checks only the rows of its rarest run instead of every row. Built on the
   * first such filter on the column; null for a column too large to index (it is scanned).
   */
  trigramIndex(column: Column): ReadonlyMap<string, readonly number[]> | null {
    return once(this.#trigrams, column, () => buildTrigramIndex(this.folded(column)));
  }

  /** The typed values of one column, for every data row; computed once per table. */
  values(column: Column): readonly TypedValue[] {
    return once(this.#values, column, () => {
      const values = new Array<TypedValue>(this.rowCount);
      for (let index = 0; index < this.rowCount; index++) values[index] = this.row(index).value[column.position] ?? null;
      return values;
    });
  }

  /** One data row as UTF-8 JSON, `{"Name":"Ann","Age":"30"}`, kept for the next read. */
  rowBytes(index: number, raw: boolean): Uint8Array {
    const cache = raw ? (this.#rowBytes.raw ??= new Array(this.rowCount)) : (this.#rowBytes.text ??= new Array(this.rowCount));
    let bytes = cache[index];
    if (bytes === undefined) {
      bytes = encoder.encode(this.rowJson(index, raw));
      cache[index] = bytes;
    }
    return bytes;
  }

  /** One data row as a JSON object text. */
  rowJson(index: number, raw: boolean): string {
    return objectJson(this.columns, this.row(index), raw);
  }
}

/** The per-column work of a table, done on first use and kept with it. */
function once<T>(cache: Map<number, T>, column: Column, build: () => T): T {
  if (cache.has(column.position)) return cache.get(column.position) as T;
  const built = build();
  cache.set(column.position, built);
  return built;
}

/** Runs to index at most: about 8 characters a row over a million rows, some 100 MB. */
const TRIGRAM_BUDGET = 8_000_000;

function buildTrigramIndex(folded: readonly string[]): Map<string, number[]> | null {
  let runs = 0;
  for (const text of folded) runs += Math.max(text.length - 2, 0);
  if (runs > TRIGRAM_BUDGET) return null;
  const index = new Map<string, number[]>();
  for (let row = 0; row < folded.length; row++) {
    const text = folded[row];
    for (let at = 0; at + 3 <= text.length; at++) {
      const run = text.slice(at, at + 3);
      const rows = index.get(run);
      if (rows === undefined) index.set(run, [row]);
      // A run repeated within one text is listed once for its row.
      else if (rows[rows.length - 1] !== row) rows.push(row);
    }
  }
  return index;
}

const tables = new WeakMap<Tab, Table>();

/** The table of a tab, built once per tab object (a write makes a new tab object). */
export function tableOf(tab: Tab): Table {
  let table = tables.get(tab);
  if (table === undefined) {
    table = new Table(tab);
    tables.set(tab, table);
  }
  return table;
}

/** A cell as JSON: its displayed text, or with `raw` its typed value (dates as ISO 8601). */
export function cellJson(row: SheetRow, position: number, raw: boolean): string {
  return raw ? JSON.stringify(rawValue(row.value[position] ?? null)) : JSON.stringify(cellText(row, position));
}

export function rawValue(value: TypedValue): string | number | boolean | null {
  if (isSheetDate(value)) return value.iso;
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  return value;
}

export function objectJson(columns: readonly Column[], row: SheetRow, raw: boolean): string {
  let json = '{';
  for (let i = 0; i < columns.length; i++) {
    const column = columns[i];
    json += (i === 0 ? '' : ',') + JSON.stringify(column.name) + ':' + cellJson(row, column.position, raw);
  }
  return json + '}';
}
