// A tab's rows in chunks of 1,024 grid rows (rows 0-1023, 1024-2047, ...): `POST /sheets/demo`
// on a 100k-row tab copies the chunk it appends to and the list of chunks (98 entries), not the
// 100k rows. A chunk is never changed once its edit is done, so the versions of a tab share every
// chunk a write did not touch, and what is worked out per chunk (row hashes, version.ts; rows
// encoded as JSON, table.ts) is kept by the chunk's identity and reused by later versions.
// `Tab.rows` stays a plain array for every reader: a tab a write makes builds it on first use
// (`tabWithRows`), which the engine's own paths never ask for.
import { headerRowIndex, type SheetRow, type Tab } from './workbook.ts';

export const CHUNK_BITS = 10;
/** Grid rows per chunk: every chunk but the last holds exactly this many. */
export const CHUNK_ROWS = 1 << CHUNK_BITS;
const CHUNK_MASK = CHUNK_ROWS - 1;

export type Chunk = readonly SheetRow[];

export class Rows {
  readonly chunks: readonly Chunk[];
  /** Grid rows, the header row and any rows above it included. */
  readonly length: number;

  constructor(chunks: readonly Chunk[]) {
    this.chunks = chunks;
    this.length = chunks.length === 0 ? 0 : (chunks.length - 1) * CHUNK_ROWS + chunks[chunks.length - 1].length;
  }

  /** The rows of an array, cut into chunks (the array is left as it is). */
  static of(rows: readonly SheetRow[]): Rows {
    const chunks: Chunk[] = [];
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) chunks.push(rows.slice(start, start + CHUNK_ROWS));
    return new Rows(chunks);
  }

  /** Grid row `grid` (0-based), undefined past the end. */
  at(grid: number): SheetRow | undefined {
    return this.chunks[grid >>> CHUNK_BITS]?.[grid & CHUNK_MASK];
  }

  toArray(): SheetRow[] {
    const rows = new Array<SheetRow>(this.length);
    let position = 0;
    for (const chunk of this.chunks) for (let index = 0; index < chunk.length; index++) rows[position++] = chunk[index];
    return rows;
  }

  /** An edit of these rows: the rows themselves are left as they are. */
  edit(): RowsEdit {
    return new RowsEdit(this.chunks);
  }
}

/**
 * Replaces, removes and appends rows, copying only the chunks it changes (and, for a removal,
 * every chunk from the first removed row on, as the rows below move up).
 */
export class RowsEdit {
  readonly #chunks: SheetRow[][];
  /** The chunks this edit made: changed in place until `done`. */
  readonly #own = new Set<SheetRow[]>();

  constructor(chunks: readonly Chunk[]) {
    this.#chunks = chunks.slice() as SheetRow[][];
  }

  get length(): number {
    const chunks = this.#chunks;
    return chunks.length === 0 ? 0 : (chunks.length - 1) * CHUNK_ROWS + chunks[chunks.length - 1].length;
  }

  at(grid: number): SheetRow | undefined {
    return this.#chunks[grid >>> CHUNK_BITS]?.[grid & CHUNK_MASK];
  }

  /** Sets grid row `grid`, which exists. */
  set(grid: number, row: SheetRow): void {
    this.#writable(grid >>> CHUNK_BITS)[grid & CHUNK_MASK] = row;
  }

  push(row: SheetRow): void {
    const chunks = this.#chunks;
    const last = chunks.length - 1;
    if (last < 0 || chunks[last].length === CHUNK_ROWS) {
      const chunk = [row];
      this.#own.add(chunk);
      chunks.push(chunk);
    } else this.#writable(last).push(row);
  }

  /** Removes grid rows `sorted` (ascending, each existing); the rows below move up. */
  remove(sorted: readonly number[]): void {
    if (sorted.length === 0) return;
    const from = sorted[0] >>> CHUNK_BITS;
    const chunks = this.#chunks;
    const rows: SheetRow[] = [];
    let next = 0;
    for (let c = from; c < chunks.length; c++) {
      const chunk = chunks[c];
      for (let index = 0; index < chunk.length; index++) {
        const grid = c * CHUNK_ROWS + index;
        if (next < sorted.length && sorted[next] === grid) next++;
        else rows.push(chunk[index]);
      }
    }
    chunks.length = from;
    for (let start = 0; start < rows.length; start += CHUNK_ROWS) {
      const chunk = rows.slice(start, start + CHUNK_ROWS);
      this.#own.add(chunk);
      chunks.push(chunk);
    }
  }

  done(): Rows {
    return new Rows(this.#chunks);
  }

  #writable(index: number): SheetRow[] {
    let chunk = this.#chunks[index];
    if (!this.#own.has(chunk)) {
      chunk = chunk.slice();
      this.#own.add(chunk);
      this.#chunks[index] = chunk;
    }
    return chunk;
  }
}

const rowsByTab = new WeakMap<Tab, Rows>();

/** A tab's rows in chunks: those a write made it with, or its array's cut once (and kept). */
export function gridRows(tab: Tab): Rows {
  let rows = rowsByTab.get(tab);
  if (rows === undefined) {
    rows = Rows.of(tab.rows);
    rowsByTab.set(tab, rows);
  }
  return rows;
}

/**
 * A tab holding `rows`: its `rows` property is an ordinary array (enumerable, so a spread or
 * JSON.stringify sees it), built on first read and kept.
 */
export function tabWithRows(name: string, rows: Rows, visibility: Tab['visibility']): Tab {
  let array: SheetRow[] | undefined;
  const tab = { name } as { name: string; rows: readonly SheetRow[]; visibility?: Tab['visibility'] };
  Object.defineProperty(tab, 'rows', { get: () => (array ??= rows.toArray()), enumerable: true });
  if (visibility !== undefined) tab.visibility = visibility;
  rowsByTab.set(tab, rows);
  return tab;
}

/**
 * `headerRowIndex` of these rows (the last row of the header block), read through `at`, so a
 * write never builds the array.
 */
export function headerRowOf(rows: Rows): number {
  return headerRowIndex(rows);
}

/** Chunks `after` begins with that are the very chunks `before` begins with. */
export function sharedChunks(before: Rows, after: Rows): number {
  const limit = Math.min(before.chunks.length, after.chunks.length);
  let same = 0;
  while (same < limit && after.chunks[same] === before.chunks[same]) same++;
  return same;
}

/** A chunk a write made, with where each of its rows was before the write. */
export interface NewChunk {
  /** Index of the chunk in the rows after. */
  readonly index: number;
  readonly chunk: Chunk;
  /** Per row of the chunk, its grid row before the write when it is the very same row object there, else -1. */
  readonly origins: Int32Array;
}

/**
 * The chunks of `after` (`before` with a write applied, the grid rows `removed` taken out,
 * ascending) that `before` does not hold at the same place, each with where its rows were: what
 * was worked out per row for `before` carries over to the rows the write did not touch.
 */
export function newChunks(before: Rows, after: Rows, removed: readonly number[]): NewChunk[] {
  const chunks: NewChunk[] = [];
  const same = sharedChunks(before, after);
  let old = same * CHUNK_ROWS;
  let gone = 0;
  for (let c = same; c < after.chunks.length; c++) {
    const chunk = after.chunks[c];
    const kept = chunk === before.chunks[c];
    const origins = kept ? null : new Int32Array(chunk.length);
    for (let index = 0; index < chunk.length; index++, old++) {
      // Rows below a removed row moved up by one each: step over the removed rows.
      while (gone < removed.length && removed[gone] <= old) {
        if (removed[gone] === old) old++;
        gone++;
      }
      if (origins !== null) origins[index] = before.at(old) === chunk[index] ? old : -1;
    }
    if (origins !== null) chunks.push({ index: c, chunk, origins });
  }
  return chunks;
}
