// A tab seen through the contract's header rules: the header row (row 1, or the first row holding
// text when the tab starts with empty rows: `headerRowIndex`) names the columns, an empty header hides
// its column, the first of two equal headers wins, cells right of the last header are ignored,
// and data rows run to the last row holding any value (blank rows in between stay data rows).
// A table also keeps the work that depends only on the tab (case folding, serialized rows,
// column indexes), so reading an unchanged tab again does not redo it; a write's next table
// keeps the column indexes of the one before (column-text.ts).
import type { WritePlan } from './write-plan.ts';
import { ColumnText, DEFAULT_TEXT_INDEX_BYTES } from './column-text.ts';
import { numericText } from './compare.ts';
import { fold } from './match.ts';
import type { RowDelta } from './row-delta.ts';
import { CHUNK_BITS, CHUNK_ROWS, gridRows, headerRowOf, newChunks, type Chunk, type Rows } from './rows.ts';
import { cellText, EMPTY_ROW, headerBlock, isSheetDate, rowHasValue, type SheetRow, type Tab, type TypedValue } from './workbook.ts';

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
  readonly #grid: Rows;
  readonly #byName: Map<string, Column>;
  readonly #texts = new Map<number, ColumnText>();
  readonly #values = new Map<number, TypedValue[]>();
  readonly #numbers = new Map<number, Float64Array>();
  /** Other work on one column, by what it is and the column's position (`columnWork`). */
  readonly #columnWork = new Map<string, unknown>();
  /** Answers to requests over this table (`keep`), oldest first, with their weights. */
  readonly #kept = new Map<string, { readonly value: unknown; readonly weight: number }>();
  #keptWeight = 0;
  /**
   * Heap this table's `*text*` indexes may still grow by, set by the engine for each request
   * from its `textIndexBytes` option and what the workbook's other indexes take. A function:
   * it is worked out only when a `*text*` search is about to index, not on every request.
   */
  textIndexRoom: () => number = () => DEFAULT_TEXT_INDEX_BYTES;
  /**
   * Each row's UTF-8 JSON, kept per chunk of rows (rows.ts) and shared with the tables a write
   * derives from this one: a whole-tab read after a write encodes only the chunks the write made.
   */
  #rowBytes: RowBytes = { text: new WeakMap(), raw: new WeakMap() };
  /** The caches of `#rowBytes` for this table's chunks, by chunk index, as they are asked for. */
  readonly #chunkBytes: ((Uint8Array | undefined)[] | undefined)[] = [];
  /**
   * The same bytes by data-row index, for this table alone (text at 0, raw at 1): a sorted read
   * of the whole tab asks rows in any order, and one lookup in one array costs a third less than
   * going through each row's chunk (a cache miss fewer per row). Made by the first read of many
   * rows (`rowsBytes`), never for a write's few rows, so a write still costs what it changes.
   */
  readonly #flatBytes: [(Uint8Array | undefined)[] | undefined, (Uint8Array | undefined)[] | undefined] = [undefined, undefined];
  readonly #answers = new Map<string, Uint8Array>();

  /** `rowCount`: the data rows, when they are known (an aggregate's answer rows, which may all be empty). */
  constructor(tab: Tab, rowCount?: number) {
    this.name = tab.name;
    const rows = gridRows(tab);
    this.#grid = rows;
    this.headerRow = headerRowOf(rows);
    // A header block (merged headers over rows 1-2) is named by its first row.
    const header = rows.at(headerBlock(rows).first) ?? EMPTY_ROW;
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
    let last = rows.length - 1;
    while (last > this.headerRow && !rowHasValue(rows.at(last)!, width)) last--;
    this.rowCount = rowCount ?? Math.max(last - this.headerRow, 0);
  }

  column(name: string): Column | undefined {
    return this.#byName.get(name);
  }

  /** Data row `index` (zero-based): the row `index + 1` rows below the header row. */
  row(index: number): SheetRow {
    return this.#grid.at(this.headerRow + 1 + index) ?? EMPTY_ROW;
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
    if (next.headerRow !== this.headerRow || next.#grid.at(next.headerRow) !== this.#grid.at(this.headerRow)) return next;
    // The same columns: a chunk both tables hold encodes to the same bytes in each, and a chunk
    // the write made takes the bytes of the rows it kept (a read after a write encodes only the
    // rows the write touched).
    next.#rowBytes = this.#rowBytes;
    const removed = plan.removed.map((index) => this.headerRow + 1 + index);
    for (const { chunk, origins } of newChunks(this.#grid, next.#grid, removed)) {
      for (const kept of [this.#rowBytes.text, this.#rowBytes.raw]) {
        if (kept.has(chunk)) continue;
        let bytes: (Uint8Array | undefined)[] | undefined;
        // Rows come in runs from one chunk: its kept bytes are looked up once per run.
        let fromChunk: Chunk | undefined;
        let fromBytes: (Uint8Array | undefined)[] | undefined;
        for (let index = 0; index < chunk.length; index++) {
          const old = origins[index];
          if (old === -1) continue;
          if (this.#grid.chunks[old >>> CHUNK_BITS] !== fromChunk) {
            fromChunk = this.#grid.chunks[old >>> CHUNK_BITS];
            fromBytes = kept.get(fromChunk);
          }
          const from = fromBytes?.[old & (CHUNK_ROWS - 1)];
          if (from !== undefined) (bytes ??= [])[index] = from;
        }
        if (bytes !== undefined) kept.set(chunk, bytes);
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

  /**
   * The number of each data row of one column, NaN where there is none: a number cell's value,
   * or numeric text (`503.60` from a CSV file) read as `__gt(100)` reads it. Worked out once per
   * table, so aggregates parse no text per request.
   */
  numbers(column: Column): Float64Array {
    return once(this.#numbers, column, () => {
      const numbers = new Float64Array(this.rowCount);
      for (let index = 0; index < this.rowCount; index++) {
        const value = this.row(index).value[column.position];
        const number = typeof value === 'number' ? value : typeof value === 'string' ? numericText(value) : null;
        numbers[index] = number === null ? NaN : number;
      }
      return numbers;
    });
  }

  /** Work on one column that is not the table's own (an aggregate's group codes), built once per table. */
  columnWork<T>(kind: string, column: Column, build: () => T): T {
    const key = `${kind}\n${column.position}`;
    if (this.#columnWork.has(key)) return this.#columnWork.get(key) as T;
    const built = build();
    this.#columnWork.set(key, built);
    return built;
  }

  /**
   * A request's answer over this table (an aggregate by its calls, groups and conditions), built
   * once while the table is served: a repeated request costs a lookup. `build` gives the
   * answer's weight (an aggregate's answer rows), null for an answer not to keep (an error);
   * at most `KEPT_ANSWERS` answers weighing `KEPT_WEIGHT` in all are kept, the oldest dropped first.
   */
  keep<T>(key: string, build: () => { readonly value: T; readonly weight: number | null }): T {
    const kept = this.#kept.get(key);
    if (kept !== undefined) return kept.value as T;
    const { value, weight } = build();
    if (weight === null || weight > KEPT_WEIGHT) return value;
    while (this.#kept.size >= KEPT_ANSWERS || this.#keptWeight + weight > KEPT_WEIGHT) {
      const [oldest, { weight: dropped }] = this.#kept.entries().next().value as [string, { weight: number }];
      this.#kept.delete(oldest);
      this.#keptWeight -= dropped;
    }
    this.#kept.set(key, { value, weight });
    this.#keptWeight += weight;
    return value;
  }

  /** One data row as UTF-8 JSON, `{"Name":"Ann","Age":"30"}`, kept for the next read. */
  rowBytes(index: number, raw: boolean): Uint8Array {
    const grid = this.headerRow + 1 + index;
    // This table's own list of its chunks' caches (text at 2c, raw at 2c + 1): a sorted read asks
    // rows in any order, and an array index per row costs less than a WeakMap lookup. Kept small
    // so that it inlines into the loop of a whole-tab read; the rest is in #bytesOf.
    const cache = this.#chunkBytes[(grid >>> CHUNK_BITS) * 2 + (raw ? 1 : 0)];
    const bytes = cache?.[grid & (CHUNK_ROWS - 1)];
    return bytes ?? this.#bytesOf(index, grid, raw);
  }

  /** `rowBytes` of each of `indexes`, in order (a read of few rows: `rowsBytesByIndex` is null). */
  rowsBytes(indexes: readonly number[], raw: boolean): Uint8Array[] {
    const rows = new Array<Uint8Array>(indexes.length);
    for (let i = 0; i < indexes.length; i++) rows[i] = this.rowBytes(indexes[i], raw);
    return rows;
  }

  /**
   * For a read of many rows, this table's bytes by data-row index, every one of `indexes`
   * filled; null for fewer than `FLAT_FROM_ROWS` rows (`rowsBytes`).
   */
  rowsBytesByIndex(indexes: readonly number[], raw: boolean): readonly (Uint8Array | undefined)[] | null {
    const kind = raw ? 1 : 0;
    let flat = this.#flatBytes[kind];
    if (flat === undefined) {
      if (indexes.length < FLAT_FROM_ROWS) return null;
      flat = this.#flatBytes[kind] = new Array<Uint8Array | undefined>(this.rowCount);
    }
    let wanted: Uint8Array | null = null;
    for (let i = 0; i < indexes.length; i++) {
      const index = indexes[i];
      if (flat[index] === undefined) (wanted ??= new Uint8Array(this.rowCount))[index] = 1;
    }
    if (wanted !== null) this.#fillInOrder(wanted, flat, raw);
    return flat;
  }

  /**
   * Fills `flat` with the bytes of the rows `wanted` marks, in the tab's order, not the read's: a
   * sorted read of a new table would otherwise visit its rows (and their chunks' caches) at
   * random. The rows of a chunk not encoded yet are encoded together, into one buffer that each
   * row's bytes are a view of (`encodeAll`), not one buffer per row: a first read of 1M rows
   * makes 1M typed arrays either way, but not 1M buffers for the collector to track and free.
   */
  #fillInOrder(wanted: Uint8Array, flat: (Uint8Array | undefined)[], raw: boolean): void {
    const first = this.headerRow + 1;
    const texts: string[] = [];
    const targets: number[] = [];
    let chunk = -1;
    let cache: (Uint8Array | undefined)[] | undefined;
    const flush = (): void => {
      if (texts.length === 0) return;
      const views = encodeAll(texts);
      for (let i = 0; i < views.length; i++) {
        const index = targets[i];
        flat[index] = views[i];
        if (cache !== undefined) cache[(first + index) & (CHUNK_ROWS - 1)] = views[i];
      }
      texts.length = 0;
      targets.length = 0;
    };
    for (let index = wanted.indexOf(1); index !== -1 && index < wanted.length; index++) {
      if (wanted[index] !== 1) continue;
      const grid = first + index;
      if (grid >>> CHUNK_BITS !== chunk) {
        flush();
        chunk = grid >>> CHUNK_BITS;
        cache = this.#chunkCache(chunk, raw);
      }
      const kept = cache?.[grid & (CHUNK_ROWS - 1)];
      if (kept !== undefined) flat[index] = kept;
      else {
        texts.push(this.rowJson(index, raw));
        targets.push(index);
      }
    }
    flush();
  }

  /** This table's cache of chunk `chunk`'s row bytes (found or made the first time); undefined past the rows. */
  #chunkCache(chunk: number, raw: boolean): (Uint8Array | undefined)[] | undefined {
    const slot = chunk * 2 + (raw ? 1 : 0);
    let cache = this.#chunkBytes[slot];
    if (cache === undefined) {
      const rows = this.#grid.chunks[chunk];
      if (rows === undefined) return undefined;
      const kept = raw ? this.#rowBytes.raw : this.#rowBytes.text;
      cache = kept.get(rows);
      if (cache === undefined) {
        cache = [];
        kept.set(rows, cache);
      }
      this.#chunkBytes[slot] = cache;
    }
    return cache;
  }

  /** Encodes a row not encoded yet (and finds its chunk's cache the first time). */
  #bytesOf(index: number, grid: number, raw: boolean): Uint8Array {
    const cache = this.#chunkCache(grid >>> CHUNK_BITS, raw);
    if (cache === undefined) return encoder.encode(this.rowJson(index, raw));
    const at = grid & (CHUNK_ROWS - 1);
    let bytes = cache[at];
    if (bytes === undefined) {
      bytes = encoder.encode(this.rowJson(index, raw));
      cache[at] = bytes;
    }
    return bytes;
  }

  /** One data row as a JSON object text. */
  rowJson(index: number, raw: boolean): string {
    return objectJson(this.columns, this.row(index), raw);
  }
}

/** The scratch buffer `encodeAll` keeps between calls, at most this big (a bigger one is made for the call). */
const SCRATCH_KEPT_BYTES = 1 << 20;
let scratch = new Uint8Array(64 * 1024);

/** `texts` as UTF-8, each a view of one buffer holding them all, in order. */
function encodeAll(texts: readonly string[]): Uint8Array[] {
  let bound = 0;
  for (let i = 0; i < texts.length; i++) bound += texts[i].length * 3;
  let buffer = scratch;
  if (buffer.length < bound) {
    buffer = new Uint8Array(bound);
    if (bound <= SCRATCH_KEPT_BYTES) scratch = buffer;
  }
  const ends = new Array<number>(texts.length);
  let used = 0;
  for (let i = 0; i < texts.length; i++) {
    used += encoder.encodeInto(texts[i], buffer.subarray(used)).written;
    ends[i] = used;
  }
  const bytes = buffer.slice(0, used);
  const views = new Array<Uint8Array>(texts.length);
  let start = 0;
  for (let i = 0; i < texts.length; i++) {
    views[i] = bytes.subarray(start, ends[i]);
    start = ends[i];
  }
  return views;
}

/** Rows a read must ask for before its table keeps row bytes by index as well as by chunk. */
const FLAT_FROM_ROWS = 4096;

interface RowBytes {
  readonly text: WeakMap<Chunk, (Uint8Array | undefined)[]>;
  readonly raw: WeakMap<Chunk, (Uint8Array | undefined)[]>;
}

/** The per-column work of a table, done on first use and kept with it. */
function once<T>(cache: Map<number, T>, column: Column, build: () => T): T {
  if (cache.has(column.position)) return cache.get(column.position) as T;
  const built = build();
  cache.set(column.position, built);
  return built;
}

/** Answers `Table.keep` holds per table: a dashboard's handful of aggregates, with room to spare. */
const KEPT_ANSWERS = 32;
/** Their weight in all (an aggregate's: its answer rows), so that large answers cannot pile up. */
const KEPT_WEIGHT = 100_000;

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
