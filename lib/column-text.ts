// GET /sheets/demo/City/Lisbon and /sheets/demo/Name/*ann* -> one column's case-folded text and
// the indexes built on it: the rows of each folded value (exact filters) and of each
// three-character run (`*text*` filters). A write's next table keeps them: the indexes stay
// those of the table they were first built on (the origin), and a row delta (row-delta.ts)
// maps the origin's rows onto the rows of now. Nothing shared is changed, so the table before
// the write keeps answering from them too.
import type { WritePlan } from './write-plan.ts';
import { carryRows, composeDelta, deltaRows, deltaSize, emptyDelta, type RowDelta } from './row-delta.ts';
import { BYTES_PER_RUN, countRuns, TrigramIndex } from './trigram-index.ts';

/** Default of the engine option `textIndexBytes`: 64 MiB, some 4 million runs of text. */
export const DEFAULT_TEXT_INDEX_BYTES = 64 * 1024 * 1024;
/** A delta is patched until it names this many rows, or 1/32 of the rows if more; then the column starts afresh. */
const MIN_DELTA_ROWS = 256;

/** The folded text of one row of the table a ColumnText belongs to. */
export type FoldRow = (row: number) => string;

/** What the indexes were built on; shared by every table derived from the origin. */
interface ColumnOrigin {
  readonly folded: readonly string[];
  exact?: Map<string, number[]>;
  /** null: the `*text*` index did not fit in the room it was given; the column is scanned. */
  trigrams?: TrigramIndex | null;
}

const NO_ROWS: readonly number[] = [];

export class ColumnText {
  readonly #origin: ColumnOrigin;
  /** How this table's rows map onto the origin's; null when this table is the origin. */
  readonly #delta: RowDelta | null;
  readonly #rowCount: number;
  readonly #foldRow: FoldRow;
  #folded: string[] | undefined;

  private constructor(origin: ColumnOrigin, delta: RowDelta | null, rowCount: number, foldRow: FoldRow, folded?: string[]) {
    this.#origin = origin;
    this.#delta = delta;
    this.#rowCount = rowCount;
    this.#foldRow = foldRow;
    this.#folded = folded;
  }

  /** A column folded from its own rows, the origin of its indexes. */
  static of(rowCount: number, foldRow: FoldRow): ColumnText {
    const folded = new Array<string>(rowCount);
    for (let row = 0; row < rowCount; row++) folded[row] = foldRow(row);
    return new ColumnText({ folded }, null, rowCount, foldRow, folded);
  }

  /** Every data row's folded text. After a write, copied from the origin but for the rows written since. */
  folded(): readonly string[] {
    return (this.#folded ??= carryRows(this.#delta!, this.#origin.folded, this.#rowCount, this.#foldRow));
  }

  /** The rows whose folded text is `value`, ascending. */
  exactRows(value: string): readonly number[] {
    const origin = this.#origin;
    origin.exact ??= exactIndex(origin.folded);
    const rows = origin.exact.get(value) ?? NO_ROWS;
    if (this.#delta === null) return rows;
    // Rows unchanged since the origin are as the index says; the others are checked.
    return deltaRows(this.#delta, rows, this.#rowCount, (row, from) => from !== -1 || this.#textAt(row) === value);
  }

  /**
   * The rows whose folded text contains `needle` (three characters or more), ascending; null
   * when the index is not ready (the caller scans). The first such search starts an index if
   * it fits in `room()` bytes (asked only then); each search after indexes a step more.
   */
  containingRows(needle: string, room: () => number): readonly number[] | null {
    const origin = this.#origin;
    if (origin.trigrams === undefined) {
      const runs = countRuns(origin.folded);
      origin.trigrams = runs * BYTES_PER_RUN <= room() ? new TrigramIndex(origin.folded, runs) : null;
    }
    const index = origin.trigrams;
    if (index === null) return null;
    if (!index.complete) {
      index.step();
      return null;
    }
    const rows = index.rarest(needle);
    // The rows of the rarest run may lack the others: each is checked, unchanged rows by their origin text.
    if (this.#delta === null) return rows.filter((row) => origin.folded[row].includes(needle));
    return deltaRows(this.#delta, rows, this.#rowCount, (row, from) => (from === -1 ? this.#textAt(row) : origin.folded[from]).includes(needle));
  }

  /**
   * The rows whose folded text `keep` accepts, by a scan of the origin's text through the row
   * delta; null when this column has its own folded text (test that instead). After a write it
   * spares copying the whole column for a scan.
   */
  scanRows(keep: (folded: string) => boolean): readonly number[] | null {
    if (this.#folded !== undefined) return null;
    const origin = this.#origin.folded;
    return deltaRows(this.#delta!, null, this.#rowCount, (row, from) => keep(from === -1 ? this.#textAt(row) : origin[from]));
  }

  /** Heap set aside for the `*text*` index this column uses (shared with the tables derived from its origin). */
  get textIndexBytes(): number {
    return this.#origin.trigrams?.bytes ?? 0;
  }

  /**
   * This column in the table `plan` leads to (`rowCount` rows, `foldRow` reading them), keeping
   * the origin's indexes; null once the delta has grown too large to be worth patching.
   * `composed` shares one delta among the columns of a table that had the same one.
   */
  derive(plan: WritePlan, rowCount: number, foldRow: FoldRow, composed: Map<RowDelta, RowDelta>): ColumnText | null {
    const before = this.#delta ?? emptyDelta(this.#origin.folded.length);
    let delta = composed.get(before);
    if (delta === undefined) {
      delta = composeDelta(before, plan, rowCount);
      composed.set(before, delta);
    }
    if (deltaSize(delta) > Math.max(MIN_DELTA_ROWS, rowCount >> 5)) return null;
    return new ColumnText(this.#origin, delta, rowCount, foldRow);
  }

  #textAt(row: number): string {
    return this.#folded?.[row] ?? this.#foldRow(row);
  }
}

function exactIndex(folded: readonly string[]): Map<string, number[]> {
  const index = new Map<string, number[]>();
  for (let row = 0; row < folded.length; row++) {
    const rows = index.get(folded[row]);
    if (rows === undefined) index.set(folded[row], [row]);
    else rows.push(row);
  }
  return index;
}
