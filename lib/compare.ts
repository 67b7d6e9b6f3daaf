// Ordering shared by `_sort` and the `/query` comparisons: numbers and dates by value, text by
// code point after Unicode lower-casing.
import { parseIsoDate } from './coerce.ts';
import type { SheetDate } from './workbook.ts';

/** Code point order (JavaScript's `<` compares UTF-16 units, which misplaces astral characters). */
export function compareCodePoints(a: string, b: string): number {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xSurrogate = x >= 0xd800 && x <= 0xdfff;
    const ySurrogate = y >= 0xd800 && y <= 0xdfff;
    // A surrogate stands for a code point above U+FFFF, so it sorts after any other unit.
    if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

/** A date's ISO text with a time part, so that dates and date-times compare as text. */
export function dateKey(date: SheetDate): string {
  return date.iso.length === 10 ? date.iso + 'T00:00:00' : date.iso;
}

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A query operand as a number, if it is a decimal literal (`100`, `-3.5`, `1e3`, `007`). */
export function operandNumber(operand: string): number | null {
  const trimmed = operand.trim();
  return DECIMAL.test(trimmed) ? Number(trimmed) : null;
}

/**
 * A text cell's number for an order comparison with a number operand: text that is exactly a
 * decimal literal (`503.60` from a CSV file, `007`, `1e3`); null for other text, including
 * padded text (` 42 `), which a write deliberately kept as text.
 */
export function numericText(text: string): number | null {
  return DECIMAL.test(text) ? Number(text) : null;
}

/** A query operand as a date key, if it is an ISO date or local date-time. */
export function operandDate(operand: string): string | null {
  const date = parseIsoDate(operand.trim());
  return date === null ? null : dateKey(date);
}
