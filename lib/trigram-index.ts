// GET /sheets/demo/Name/*hannah r* -> only the rows holding "hannah r"'s rarest three-character
// run are checked, not every row. The index of one column's runs is built a step at a time,
// each step on a `*text*` search that is answered by a plain scan meanwhile, so no one request
// pays for indexing a whole large column (100k rows took ~0.1-2 s in one go).

/** Runs indexed per step: some 1,500 rows of names, a few milliseconds (up to ~20 ms on a loaded machine). */
export const STEP_RUNS = 16_384;

/**
 * Heap set aside per run of text for the memory cap. Measured at about 10 bytes per run once
 * built (node --expose-gc, 100k rows: names 9.4 MiB for 1.0M runs, longer unique notes
 * 36.5 MiB for 3.8M runs); 16 leaves room for the arrays' spare capacity while building.
 */
export const BYTES_PER_RUN = 16;

/** Three-character runs in a column's folded text: the index's size and build time both follow it. */
export function countRuns(folded: readonly string[]): number {
  let runs = 0;
  for (const text of folded) runs += Math.max(text.length - 2, 0);
  return runs;
}

export class TrigramIndex {
  readonly #folded: readonly string[];
  readonly #lists = new Map<string, number[]>();
  /** Rows indexed so far: [0, built). */
  #built = 0;
  /** Heap set aside for the whole index, from its run count (see BYTES_PER_RUN). */
  readonly bytes: number;

  /** An empty index over `folded` (the origin's texts; never changed afterwards). */
  constructor(folded: readonly string[], runs: number) {
    this.#folded = folded;
    this.bytes = runs * BYTES_PER_RUN;
  }

  get complete(): boolean {
    return this.#built === this.#folded.length;
  }

  /** Indexes the next rows, about `runs` runs of text (at least one row). */
  step(runs = STEP_RUNS): void {
    const folded = this.#folded;
    const lists = this.#lists;
    let done = 0;
    while (this.#built < folded.length && done < runs) {
      const row = this.#built++;
      const text = folded[row];
      for (let at = 0; at + 3 <= text.length; at++) {
        const run = text.slice(at, at + 3);
        const list = lists.get(run);
        if (list === undefined) lists.set(run, [row]);
        // A run repeated within one text is listed once for its row.
        else if (list[list.length - 1] !== row) list.push(row);
      }
      done += Math.max(text.length - 2, 1);
    }
  }

  /**
   * The rows (of the origin, ascending) holding the rarest three-character run of `needle`
   * (three characters or more): every row containing the needle is among them.
   */
  rarest(needle: string): readonly number[] {
    let rarest: readonly number[] | undefined;
    for (let at = 0; at + 3 <= needle.length; at++) {
      const rows = this.#lists.get(needle.slice(at, at + 3)) ?? NO_ROWS;
      if (rarest === undefined || rows.length < rarest.length) rarest = rows;
    }
    return rarest ?? NO_ROWS;
  }
}

const NO_ROWS: readonly number[] = [];
