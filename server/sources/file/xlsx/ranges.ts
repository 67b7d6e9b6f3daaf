// How a DELETE moves the rows below it, applied to a sheet's own ranges: with row 3 deleted,
// a merge `A5:B6` becomes `A4:B5`, a validation on `C2:C10` covers `C2:C9`, and a merge that
// lay wholly on row 3 is gone. Rows past the data (formatting only) keep their numbers.
import { attribute, withAttribute } from '../xml/attributes.ts';

export class RowShift {
  /** Old row numbers (1-based, ascending) no written row stands in any more. */
  readonly #removed: readonly number[];
  readonly #oldRowCount: number;

  private constructor(removed: readonly number[], oldRowCount: number) {
    this.#removed = removed;
    this.#oldRowCount = oldRowCount;
  }

  static of(slots: readonly { readonly origin: number | null }[], oldRowCount: number): RowShift {
    const kept = new Uint8Array(oldRowCount + 1);
    for (const slot of slots) if (slot.origin !== null && slot.origin <= oldRowCount) kept[slot.origin] = 1;
    const removed: number[] = [];
    for (let row = 1; row <= oldRowCount; row++) if (kept[row] === 0) removed.push(row);
    return new RowShift(removed, oldRowCount);
  }

  get removesRows(): boolean {
    return this.#removed.length > 0;
  }

  /** The new number of an old row; null when it was removed. */
  map(row: number): number | null {
    if (row > this.#oldRowCount) return row;
    const before = this.#countBelow(row);
    return this.#removed[before] === row ? null : row - before;
  }

  /** `A5:B6` -> `A4:B5`; null when every row of it was removed. Whole columns (`A:A`) stay. */
  shiftRef(ref: string): string | null {
    const match = /^(\$?[A-Za-z]{1,3}\$?)(\d+)(?::(\$?[A-Za-z]{1,3}\$?)(\d+))?$/.exec(ref);
    if (match === null) return ref;
    const [, startColumn, startRow, endColumn = startColumn, endRow = startRow] = match;
    let first = Number(startRow);
    let last = Number(endRow);
    while (first <= last && this.map(first) === null) first++;
    while (last >= first && this.map(last) === null) last--;
    if (first > last) return null;
    const start = `${startColumn}${this.map(first)}`;
    return match[3] === undefined && first === last ? start : `${start}:${endColumn}${this.map(last)}`;
  }

  /** A space-separated list of refs (`sqref`); empty when all were removed. */
  shiftList(list: string): string {
    return list.split(/\s+/).filter(Boolean).map((ref) => this.shiftRef(ref)).filter((ref) => ref !== null).join(' ');
  }

  /** The part of a sheet after `<sheetData>`: merges, validations, conditional formats and hyperlinks moved. */
  shiftRanges(xml: string): string {
    // Attributes in either quote (`ref='A5:B6'`), each rewritten where it stood.
    let out = xml.replace(/<(?:\w+:)?(?:mergeCell|hyperlink)\b(?:[^>"']|"[^"]*"|'[^']*')*?\/>/g, (tag) => {
      const ref = attribute(tag, 'ref');
      if (ref === null) return tag;
      const shifted = this.shiftRef(ref);
      return shifted === null ? '' : withAttribute(tag, 'ref', shifted);
    });
    out = out.replace(/<((?:\w+:)?(?:dataValidation|conditionalFormatting))\b((?:[^>"']|"[^"]*"|'[^']*')*?)(\/>|>[\s\S]*?<\/\1>)/g, (element, name: string, attributes: string) => {
      const start = `<${name}${attributes}>`;
      const sqref = attribute(start, 'sqref');
      if (sqref === null) return element;
      const shifted = this.shiftList(sqref);
      return shifted === '' ? '' : withAttribute(start, 'sqref', shifted).slice(0, -1) + element.slice(start.length - 1);
    });
    // Counts follow the elements that are left.
    out = out.replace(/(<((?:\w+:)?(?:mergeCells|dataValidations|hyperlinks))\b[^>]*>)([\s\S]*?)(<\/\2>)/g, (_all, open: string, name: string, inner: string, close: string) => {
      const child = name.replace(/s$/, '').replace(/^\w+:/, '');
      const count = (inner.match(new RegExp(`<(?:\\w+:)?${child}\\b`, 'g')) ?? []).length;
      if (count === 0) return '';
      return `${attribute(open, 'count') === null ? open : withAttribute(open, 'count', String(count))}${inner}${close}`;
    });
    return out;
  }

  #countBelow(row: number): number {
    let low = 0;
    let high = this.#removed.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.#removed[middle] < row) low = middle + 1;
      else high = middle;
    }
    return low;
  }
}
