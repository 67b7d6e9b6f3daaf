// The per-column indexes behind exact and `*text*` filters answer exactly what a scan answers:
// GET /sheets/t/Name/*ab* and /search?Name=abc&City=*x* against a naive filter over random text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { handle } from '../lib/mod.ts';
import type { SheetRow, Workbook } from '../lib/workbook.ts';

// A small alphabet, so that runs repeat within and across rows; `É` folds to `é`, `𝒜` is astral.
const letter = fc.constantFrom('a', 'b', 'A', 'B', ' ', 'É', 'é', '𝒜');
const text = fc.array(letter, { maxLength: 8 }).map((letters) => letters.join(''));

function workbookOf(names: readonly string[], cities: readonly string[]): Workbook {
  const row = (cells: string[]): SheetRow => ({ text: cells, value: cells.map((cell) => (cell === '' ? null : cell)) });
  const rows = [row(['Name', 'City']), ...names.map((name, i) => row([name, cities[i] ?? '']))];
  // A trailing row with a value keeps every generated row a data row, even an empty one.
  rows.push(row(['end', 'end']));
  return { tabs: [{ name: 't', rows }] };
}

function names(workbook: Workbook, path: string): string[] {
  const result = handle(workbook, { method: 'GET', url: path });
  assert.equal(result.status, 200, result.body);
  return (JSON.parse(result.body) as { Name: string }[]).map((row) => row.Name);
}

test('*text* filters answer what a scan answers', () => {
  fc.assert(
    fc.property(fc.array(text, { maxLength: 30 }), text, (values, needle) => {
      const workbook = workbookOf(values, []);
      const folded = needle.toLowerCase();
      const expected = [...values, 'end'].filter((value) => value.toLowerCase().includes(folded));
      assert.deepEqual(names(workbook, `/sheets/x/Name/*${encodeURIComponent(needle)}*`), expected);
    }),
    { numRuns: 300 },
  );
});

test('exact and *text* conditions together answer what a scan answers', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(text, text), { maxLength: 30 }), text, text, (pairs, name, city) => {
      const workbook = workbookOf(pairs.map(([n]) => n), pairs.map(([, c]) => c));
      const expected = pairs
        .filter(([n, c]) => n.toLowerCase() === name.toLowerCase() && c.toLowerCase().includes(city.toLowerCase()))
        .map(([n]) => n);
      const query = `Name=${encodeURIComponent(name)}&City=*${encodeURIComponent(city)}*`;
      const found = names(workbook, `/sheets/x/search?${query}`);
      // The trailing `end` row matches only when both conditions allow it.
      const end = 'end' === name.toLowerCase() && 'end'.includes(city.toLowerCase()) ? ['end'] : [];
      assert.deepEqual(found, [...expected, ...end]);
    }),
    { numRuns: 300 },
  );
});
