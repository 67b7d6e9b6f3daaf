// How typed text becomes a value, for the cases the golden fixtures do not reach: dates in the
// first centuries, where Date.UTC would read the year 0-99 as 1900-1999, and date-times written
// with a space (as they show) reading back as date-times.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { coerceText, displayText } from '../../lib/coerce.ts';
import { sheetDate, type TypedValue } from '../../lib/workbook.ts';

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
  // A space for the T: how a date-time shows, and how a .csv file holds one written through the API.
  ['0099-03-01 09:30:00', sheetDate('0099-03-01T09:30:00')],
  ['2024-03-01 09:30', sheetDate('2024-03-01T09:30:00')],
  ['2024-03-01 09:30:00.25', sheetDate('2024-03-01T09:30:00.25')],
  ['2024-03-01  09:30:00', '2024-03-01  09:30:00'],
  ['2024-03-01 24:00:00', '2024-03-01 24:00:00'],
  ['2024-03-01t09:30:00', '2024-03-01t09:30:00'],
];

test('coerceText: calendar days in every century', async (t) => {
  for (const [text, expected] of cases) {
    await t.test(text, () => assert.deepEqual(coerceText(text), expected));
  }
});

test('coerceText: a date-time\'s shown text reads back as the same date-time, in every century', async (t) => {
  for (const iso of ['0001-01-01T00:00:01', '0099-03-01T09:30:00', '0099-12-31T23:59:59.5', '1899-12-31T09:30:00', '2024-03-01T09:30:00', '9999-12-31T23:59:59']) {
    await t.test(iso, () => {
      const shown = displayText(sheetDate(iso));
      assert.equal(shown, iso.replace('T', ' '));
      assert.deepEqual(coerceText(shown), sheetDate(iso));
    });
  }
});
