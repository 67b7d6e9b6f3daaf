// How typed text becomes a value, for the cases the golden fixtures do not reach: dates in the
// first centuries, where Date.UTC would read the year 0-99 as 1900-1999.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { coerceText } from '../lib/coerce.ts';
import { sheetDate, type TypedValue } from '../lib/workbook.ts';

const cases: [string, TypedValue][] = [
  ['0000-02-29', sheetDate('0000-02-29')],
  ['0004-02-29', sheetDate('0004-02-29')],
  ['0001-02-29', '0001-02-29'],
  ['0100-02-29', '0100-02-29'],
  ['0400-02-29', sheetDate('0400-02-29')],
  ['1900-02-29', '1900-02-29'],
  ['2000-02-29', sheetDate('2000-02-29')],
  ['0099-12-31T23:59:59', sheetDate('0099-12-31T23:59:59')],
  ['0050-04-31', '0050-04-31'],
  ['2024-13-01', '2024-13-01'],
  ['2024-00-10', '2024-00-10'],
];

test('coerceText: calendar days in every century', async (t) => {
  for (const [text, expected] of cases) {
    await t.test(text, () => assert.deepEqual(coerceText(text), expected));
  }
});
