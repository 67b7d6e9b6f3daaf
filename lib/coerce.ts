// Values read as if a person typed them: `"42"` is a number, `"007"` stays text, `"true"` is a
// boolean, `"2024-03-01"` a date. Used for written values and for CSV fields, so both agree.
import { sheetDate, type SheetDate, type TypedValue } from './workbook.ts';

/** A canonical number reads back unchanged and has no exponent: `42`, `-3.5`; not `007`, `3.50`, `1e3`. */
const CANONICAL_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d*[1-9])?$/;
/**
 * ISO 8601 date or local date-time (no zone): `2024-03-01`, `2024-03-01T09:30`, `2024-03-01T09:30:00.5`,
 * or with a space for the `T` (RFC 3339 allows it): `2024-03-01 09:30:00`, which is how a
 * date-time cell shows (`displayText`) and so how a .csv file holds one written through the API.
 * Read back, it is the same date-time again, whatever the year.
 */
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?$/;

export function parseCanonicalNumber(text: string): number | null {
  if (!CANONICAL_NUMBER.test(text)) return null;
  const number = Number(text);
  return String(number) === text ? number : null;
}

/** An ISO date or date-time as a SheetDate in normal form (`T`, and seconds always written when there is a time). */
export function parseIsoDate(text: string): SheetDate | null {
  const match = ISO_DATE.exec(text);
  if (match === null) return null;
  const [, year, month, day, hour, minute, second = '00', fraction = ''] = match;
  const days = daysInMonth(Number(year), Number(month));
  if (Number(month) < 1 || Number(month) > 12 || Number(day) < 1 || Number(day) > days) return null;
  if (hour === undefined) return sheetDate(`${year}-${month}-${day}`);
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59) return null;
  return sheetDate(`${year}-${month}-${day}T${hour}:${minute}:${second}${fraction}`);
}

// Counted here rather than with Date.UTC, which reads years 0-99 as 1900-1999 (so 0000-02-29,
// a leap day in the proleptic Gregorian calendar ISO 8601 uses, would be refused).
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1] ?? 0;
}

/** The typed value of a field typed as text (a CSV field, a written string). */
export function coerceText(text: string): TypedValue {
  if (text === '') return null;
  const number = parseCanonicalNumber(text);
  if (number !== null) return number;
  const lower = text.toLowerCase();
  if (lower === 'true') return true;
  if (lower === 'false') return false;
  return parseIsoDate(text) ?? text;
}

/** What a spreadsheet shows for a written value: numbers as JavaScript writes them, booleans in capitals. */
export function displayText(value: TypedValue): string {
  if (value === null) return '';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return value;
  return value.iso.replace('T', ' ');
}

export interface WrittenCell {
  readonly text: string;
  readonly value: TypedValue;
  readonly formula?: string;
}

/** A JSON value from a write body as the cell it becomes. */
export function coerceWritten(input: string | number | boolean | null, formulas: boolean): WrittenCell {
  if (input === null) return { text: '', value: null };
  if (typeof input === 'number') {
    const value = Object.is(input, -0) ? 0 : input;
    return { text: displayText(value), value };
  }
  if (typeof input === 'boolean') return { text: displayText(input), value: input };
  // Without formulas a leading `=` is just text; with them, the source computes the value.
  if (formulas && input.startsWith('=') && input.length > 1) return { text: input, value: input, formula: input };
  const value = coerceText(input);
  return { text: displayText(value), value };
}
