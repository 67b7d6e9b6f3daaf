// A tab seen through the contract's header rules: the header row (row 1, or the first row holding
// text when the tab starts with empty rows: `headerRowIndex`) names the columns, an empty header hides
// its column, the first of two equal headers wins, cells right of the last header are ignored,
// and data rows run to the last row holding any value (blank rows in between stay data rows).
// A table also keeps the work that depends only on the tab (case folding, serialized rows,
// column indexes), so reading an unchanged tab again does not redo it; a write's next table
// keeps the column indexes of the one before (column-text.ts).
import type { WritePlan } from './write-plan.ts';
import { ColumnText, DEFAULT_TEXT_INDEX_BYTES } from './column-text.ts';
import { fold } from './match.ts';
import { carryRows, composeDelta, emptyDelta, type RowDelta } from './row-delta.ts';
import { cellText, EMPTY_ROW, headerBlock, headerRowIndex, isSheetDate, rowHasValue, type SheetRow, type Tab, type TypedValue } from './workbook.ts';

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
  /** The header (block's last) row's index in the tab's rows (0: sheet row 1); data row n is grid row headerRow + 1 + n. */
  readonly headerRow: number;
  readonly #grid: readonly SheetRow[];
  readonly #byName: Map<string, Column>;
  readonly #texts = new Map<number, ColumnText>();
  readonly #values = new Map<number, TypedValue[]>();
  /**
   * Heap this table's `*text*` indexes may still grow by, set by the engine for each request
   * from its `textIndexBytes` option and what the workbook's other indexes take. A function:
   * it is worked out only when a `*text*` search is about to index, not on every request.
   */
  textIndexRoom: () => number = () => DEFAULT_TEXT_INDEX_BYTES;
  readonly #rowBytes: { text?: (Uint8Array | undefined)[]; raw?: (Uint8Array | undefined)[] } = {};
  readonly #answers = new Map<string, Uint8Array>();

  constructor(tab: Tab) {
    this.name = tab.name;
    this.#grid = tab.rows;
    this.headerRow = headerRowIndex(tab.rows);
    // A header block (merged headers over rows 1-2) is named by its first row.
    const header = tab.rows[headerBlock(tab.rows).first] ?? EMPTY_ROW;
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
    while (last > this.headerRow && !rowHasValue(tab.rows[last], width)) last--;
    this.rowCount = Math.max(last - this.headerRow, 0);
  }

  column(name: string): Column | undefined {
    return this.#byName.get(name);
  }

  /** Data row `index` (zero-based): the row `index + 1` rows below the header row. */
  row(index: number): SheetRow {
    return this.#grid[this.headerRow + 1 + index] ?? EMPTY_ROW;
  }

  /** The case-folded displayed text of one column, for every data row; computed once per table. */
  folded(column: Column): readonly string[] {
    return this.#text(column).folded();
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

  /** The data rows whose folded text is `value`, ascending: an exact filter looks them up instead of scanning. */
  exactRows(column: Column, value: string): readonly number[] {
    return this.#text(column).exactRows(value);
  }

  /**
   * The data rows whose folded text contains `needle` (three characters or more), ascending;
   * null when the column's index is not ready (the caller scans). A search on a column with no
   * index starts one if it fits in `textIndexRoom`, and each search after indexes a step more,
   * so no single request builds it all.
   */
  containingRows(column: Column, needle: string): readonly number[] | null {
    return this.#text(column).containingRows(needle, this.textIndexRoom);
  }

  /** The data rows whose folded text `keep` accepts, when a scan can spare copying the column's text after a write; else null. */
  scanRows(column: Column, keep: (folded: string) => boolean): readonly number[] | null {
    return this.#text(column).scanRows(keep);
  }

  /** Heap the `*text*` indexes of this table's columns take (or have set aside to finish building). */
  textIndexBytes(): number {
    let bytes = 0;
    for (const text of this.#texts.values()) bytes += text.textIndexBytes;
    return bytes;
  }

  /**
   * The table of `tab`, the result of applying `plan` to this table's tab: its columns keep
   * the indexes built so far, with the plan's rows in their row delta.
   */
  derive(tab: Tab, plan: WritePlan): Table {
    const next = new Table(tab);
    // A plan never changes the header row; a tab with other headers shares nothing.
    if (next.headerRow !== this.headerRow || tab.rows[next.headerRow] !== this.#grid[this.headerRow]) return next;
    // Each row's kept UTF-8 goes with it: a whole-tab read after a write encodes only the rows
    // the write touched, instead of making a new small buffer for every row of every version.
    const kinds = ['text', 'raw'] as const;
    if (this.#rowBytes.text !== undefined || this.#rowBytes.raw !== undefined) {
      const delta = composeDelta(emptyDelta(this.rowCount), plan, next.rowCount);
      for (const kind of kinds) {
        const kept = this.#rowBytes[kind];
        if (kept !== undefined) next.#rowBytes[kind] = carryRows<Uint8Array | undefined>(delta, kept, next.rowCount, () => undefined);
      }
    }
    const composed = new Map<RowDelta, RowDelta>();
    for (const [position, text] of this.#texts) {
      const derived = text.derive(plan, next.rowCount, next.#foldRow(position), composed);
      if (derived !== null) next.#texts.set(position, derived);
    }
    return next;
  }

  #text(column: Column): ColumnText {
    let text = this.#texts.get(column.position);
    if (text === undefined) {
      text = ColumnText.of(this.rowCount, this.#foldRow(column.position));
      this.#texts.set(column.position, text);
    }
    return text;
  }

  #foldRow(position: number): (row: number) => string {
    return (row) => fold(cellText(this.row(row), position));
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

/** The table of a tab if one was built; no work otherwise. */
export function builtTable(tab: Tab): Table | undefined {
  return tables.get(tab);
}

/** `next` is `tab` with `plan` applied: its table, if `tab` has one, keeps the column indexes built so far. */
export function deriveTable(tab: Tab, next: Tab, plan: WritePlan): void {
  const table = tables.get(tab);
  if (table !== undefined && !tables.has(next)) tables.set(next, table.derive(next, plan));
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
