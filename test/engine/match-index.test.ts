// The per-column indexes behind exact and `*text*` filters answer exactly what a scan answers:
// GET /sheets/t/Name/*ab* and /search?Name=abc&City=*x* against a naive filter over random text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyPlan, handle, tableOf } from '../../lib/mod.ts';
import type { EngineOptions } from '../../lib/mod.ts';
import type { SheetRow, Workbook } from '../../lib/workbook.ts';

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

function names(workbook: Workbook, path: string, options: EngineOptions = {}): string[] {
  const result = handle(workbook, { method: 'GET', url: path }, options);
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

// ---------------------------------------------------------------------------------------------
// After writes: a write's next table keeps the indexes of the one before (patched by a row
// delta), and the `*text*` index is built a step per search. Whatever the path, every answer
// must be what a scan of the same workbook answers.

type Step =
  | { readonly kind: 'post'; readonly rows: readonly (readonly [string, string])[] }
  | { readonly kind: 'patch' | 'put'; readonly at: number; readonly name: string }
  | { readonly kind: 'delete'; readonly at: number }
  | { readonly kind: 'patchMatch' | 'deleteMatch'; readonly pattern: string; readonly name: string }
  | { readonly kind: 'search'; readonly needle: string; readonly city: string; readonly old: boolean };

const word = fc.array(fc.constantFrom('a', 'b', 'A', 'É', 'é', ' '), { minLength: 0, maxLength: 6 }).map((letters) => letters.join(''));
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.array(fc.tuple(word, word), { minLength: 1, maxLength: 3 }).map((rows) => ({ kind: 'post' as const, rows })) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('patch' as const, 'put' as const), at: fc.nat({ max: 40 }), name: word }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat({ max: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('patchMatch' as const, 'deleteMatch' as const), pattern: word.map((w) => `*${w}*`), name: word }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('search' as const), needle: word, city: word, old: fc.boolean() }) },
);

const JSON_HEADERS = { 'Content-Type': 'application/json' };

function write(workbook: Workbook, step: Exclude<Step, { kind: 'search' }>, options: EngineOptions): Workbook {
  const request = ((): { method: string; url: string; body?: string } => {
    switch (step.kind) {
      case 'post':
        return { method: 'POST', url: '/sheets/x', body: JSON.stringify(step.rows.map(([Name, City]) => ({ Name, City }))) };
      case 'patch':
      case 'put':
        return { method: step.kind.toUpperCase(), url: `/sheets/x/${step.at}`, body: JSON.stringify({ Name: step.name }) };
      case 'delete':
        return { method: 'DELETE', url: `/sheets/x/${step.at}` };
      case 'patchMatch':
        return { method: 'PATCH', url: `/sheets/x/City/${encodeURIComponent(step.pattern)}`, body: JSON.stringify({ Name: step.name }) };
      case 'deleteMatch':
        return { method: 'DELETE', url: `/sheets/x/Name/${encodeURIComponent(step.pattern)}` };
    }
  })();
  return handle(workbook, { ...request, headers: JSON_HEADERS }, options).workbook;
}

/** `_sort` on text: case-insensitive by code point, stable, empty cells last. */
function byFolded(a: string, b: string): number {
  if ((a === '') !== (b === '')) return a === '' ? 1 : -1;
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Index answers against a scan: the rows of the whole read that pass the same conditions, in order. */
function checkSearches(workbook: Workbook, needle: string, city: string, options: EngineOptions): void {
  const all = (JSON.parse(handle(workbook, { method: 'GET', url: '/sheets/x' }, options).body) as { Name: string; City: string }[]).map(({ Name, City }) => [Name, City] as const);
  const n = needle.toLowerCase();
  const c = city.toLowerCase();
  const searches: [path: string, expected: string[]][] = [
    [`/sheets/x/Name/*${encodeURIComponent(needle)}*`, all.filter(([name]) => name.toLowerCase().includes(n)).map(([name]) => name)],
    [`/sheets/x/Name/${encodeURIComponent(needle)}`, all.filter(([name]) => name.toLowerCase() === n).map(([name]) => name)],
    [
      `/sheets/x/search?City=*${encodeURIComponent(city)}*&Name=*${encodeURIComponent(needle)}*`,
      all.filter(([name, town]) => name.toLowerCase().includes(n) && town.toLowerCase().includes(c)).map(([name]) => name),
    ],
    [`/sheets/x/search?City=${encodeURIComponent(city)}`, all.filter(([, town]) => town.toLowerCase() === c).map(([name]) => name)],
    [`/sheets/x/Name/${encodeURIComponent(needle)}*`, all.filter(([name]) => name.toLowerCase().startsWith(n)).map(([name]) => name)],
    [`/sheets/x/Name/*${encodeURIComponent(needle)}*?_sort=Name`, all.filter(([name]) => name.toLowerCase().includes(n)).map(([name]) => name).sort(byFolded)],
  ];
  for (const [path, expected] of searches) {
    // `/Name/` with no value is no path at all.
    if (path.endsWith('/')) continue;
    // Asked three times: the first may scan while the index is built, later ones use it.
    for (let i = 0; i < 3; i++) assert.deepEqual(names(workbook, path, options), expected, path);
  }
}

test('after random writes, indexed filters answer what a scan answers', () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(word, word), { maxLength: 30 }),
      fc.array(stepArb, { minLength: 1, maxLength: 25 }),
      fc.constantFrom<EngineOptions>({}, { textIndexBytes: 0 }, { textIndexBytes: 3000 }),
      (start, steps, options) => {
        let workbook = workbookOf(start.map(([n]) => n), start.map(([, c]) => c));
        let previous = workbook;
        for (const step of steps) {
          if (step.kind === 'search') {
            checkSearches(step.old ? previous : workbook, step.needle, step.city, options);
            continue;
          }
          previous = workbook;
          workbook = write(workbook, step, options);
        }
        checkSearches(workbook, 'ab', 'a', options);
      },
    ),
    { numRuns: 200 },
  );
});

test('a write keeps the column indexes: the next table answers from them at once', async (t) => {
  const rowCount = 2000;
  const values = Array.from({ length: rowCount }, (_, i) => `name ${i} ${i % 7 === 0 ? 'hannah' : 'bob'}`);
  const base = workbookOf(values, values.map((_, i) => `city ${i % 10}`));
  // Built step by step on the searches before the write.
  for (let i = 0; i < 20; i++) names(base, '/sheets/x/Name/*hannah*');
  const name = tableOf(base.tabs[0]).column('Name')!;
  assert.notEqual(tableOf(base.tabs[0]).containingRows(name, 'hannah'), null, 'the index is built before the write');
  const writes: [string, { method: string; url: string; body?: string }][] = [
    ['POST', { method: 'POST', url: '/sheets/x', body: '{"Name": "new hannah"}' }],
    ['PATCH', { method: 'PATCH', url: '/sheets/x/3', body: '{"Name": "patched hannah"}' }],
    ['DELETE', { method: 'DELETE', url: '/sheets/x/0' }],
  ];
  for (const [label, request] of writes) {
    await t.test(label, () => {
      const next = handle(base, { ...request, headers: JSON_HEADERS }).workbook;
      const table = tableOf(next.tabs[0]);
      const rows = table.containingRows(table.column('Name')!, 'hannah');
      assert.notEqual(rows, null, 'the first search after the write would have to scan');
      const folded = table.folded(table.column('Name')!);
      assert.deepEqual(rows, folded.flatMap((text, row) => (text.includes('hannah') ? [row] : [])));
    });
  }
});

test('textIndexBytes caps the indexes across columns and tabs: past it, filters scan', () => {
  const values = Array.from({ length: 500 }, (_, i) => `text number ${i}`);
  const workbook: Workbook = { tabs: [workbookOf(values, values).tabs[0], { ...workbookOf(values, values).tabs[0], name: 'u' }] };
  const runs = values.reduce((sum, text) => sum + text.length - 2, 0) + 1;
  // Room for exactly one column's index (16 bytes a run, see trigram-index.ts).
  const options: EngineOptions = { textIndexBytes: runs * 16 };
  for (let i = 0; i < 5; i++) handle(workbook, { method: 'GET', url: '/sheets/x/Name/*number 1*' }, options);
  for (let i = 0; i < 5; i++) handle(workbook, { method: 'GET', url: '/sheets/x/City/*number 1*' }, options);
  for (let i = 0; i < 5; i++) handle(workbook, { method: 'GET', url: '/sheets/x/tabs/u/Name/*number 1*' }, options);
  const [first, second] = workbook.tabs.map((tab) => tableOf(tab));
  assert.notEqual(first.containingRows(first.column('Name')!, 'number 1'), null, 'the first index fits');
  assert.equal(first.containingRows(first.column('City')!, 'number 1'), null, 'a second column does not');
  assert.equal(second.containingRows(second.column('Name')!, 'number 1'), null, 'nor a column of another tab');
  assert.equal(first.textIndexBytes() + second.textIndexBytes(), runs * 16);
  const expected = values.filter((text) => text.includes('number 1'));
  assert.deepEqual(names(workbook, '/sheets/x/City/*number 1*', options).length, expected.length);
  assert.deepEqual(names(workbook, '/sheets/x/tabs/u/Name/*number 1*', options), expected);
});

test('a plan that appends past blank rows below the table: those rows are found too', () => {
  // As the file source's rebase may shift an append: the rows between are blank data rows now.
  const base = workbookOf(['ann', 'bob'], ['x', 'y']);
  for (let i = 0; i < 3; i++) names(base, '/sheets/x/search?Name=&City=*y*');
  const row = (cells: string[]): SheetRow => ({ text: cells, value: cells });
  const next = applyPlan(base, { tab: 't', replaced: [], removed: [], appended: { start: 5, rows: [row(['cy', 'z'])] } });
  assert.deepEqual(names(next, '/sheets/x/Name/*'), ['ann', 'bob', 'end', '', '', 'cy']);
  assert.deepEqual(names(next, '/sheets/x/search?Name='), ['', '']);
  assert.deepEqual(names(next, '/sheets/x/Name/cy'), ['cy']);
});

test('a write that leaves blank rows last: they are no longer data rows, and no index lists them', () => {
  const base = workbookOf(['ann', '', ''], ['x', '', '']);
  for (let i = 0; i < 3; i++) names(base, '/sheets/x/search?Name=&City=*x*');
  // Deleting the trailing `end` row leaves two blank rows last: the tab ends at `ann`.
  const next = handle(base, { method: 'DELETE', url: '/sheets/x/3' }).workbook;
  assert.deepEqual(names(next, '/sheets/x/Name/*'), ['ann']);
  assert.deepEqual(names(next, '/sheets/x/search?Name='), []);
  assert.deepEqual(names(next, '/sheets/x/search?City='), []);
  assert.deepEqual(names(next, '/sheets/x/Name/ann'), ['ann']);
});

// Issue 20, part 13: a write's next table keeps the UTF-8 of the rows it did not touch, so a
// whole-tab read after each write encodes the written rows only, not a new buffer per row.

/** The same workbook as new tab objects: tables built afresh, sharing nothing with earlier versions. */
function fresh(workbook: Workbook): Workbook {
  return { tabs: workbook.tabs.map((tab) => ({ ...tab, rows: tab.rows.slice() })) };
}

function wholeTab(workbook: Workbook, query = ''): string {
  const result = handle(workbook, { method: 'GET', url: `/sheets/x${query}` });
  assert.equal(result.status, 200, result.body);
  return result.body;
}

test('after random writes, the rows a table kept encoded from earlier versions answer what a fresh table answers', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(word, word), { maxLength: 30 }), fc.array(stepArb, { minLength: 1, maxLength: 25 }), (start, steps) => {
      let workbook = workbookOf(start.map(([n]) => n), start.map(([, c]) => c));
      for (const step of steps) {
        // Every version is read whole (plain and raw) before the next write, so each carries rows on.
        if (step.kind === 'search') continue;
        wholeTab(workbook);
        wholeTab(workbook, '?_raw=1');
        workbook = write(workbook, step, {});
        assert.equal(wholeTab(workbook), wholeTab(fresh(workbook)));
        assert.equal(wholeTab(workbook, '?_raw=1'), wholeTab(fresh(workbook), '?_raw=1'));
      }
    }),
    { numRuns: 200 },
  );
});

test('a write keeps the encoded rows it did not touch: the next table encodes only the written rows', async (t) => {
  const values = Array.from({ length: 50 }, (_, i) => `name ${i}`);
  const base = workbookOf(values, values.map((_, i) => `city ${i % 10}`));
  wholeTab(base);
  const before = tableOf(base.tabs[0]);
  // [label, request, where each row of the next table was in the base (-1: written by the request)]
  const cases: [string, { method: string; url: string; body?: string }, (row: number) => number][] = [
    ['POST', { method: 'POST', url: '/sheets/x', body: '{"Name": "new"}' }, (row) => (row < 51 ? row : -1)],
    ['PATCH', { method: 'PATCH', url: '/sheets/x/3', body: '{"Name": "patched"}' }, (row) => (row === 3 ? -1 : row)],
    ['DELETE', { method: 'DELETE', url: '/sheets/x/0' }, (row) => row + 1],
  ];
  for (const [label, request, origin] of cases) {
    await t.test(label, () => {
      const next = handle(base, { ...request, headers: JSON_HEADERS }).workbook;
      const after = tableOf(next.tabs[0]);
      for (let row = 0; row < after.rowCount; row++) {
        const from = origin(row);
        if (from === -1) assert.notEqual(after.rowBytes(row, false), before.rowBytes(row, false), `row ${row} was written`);
        else assert.equal(after.rowBytes(row, false), before.rowBytes(from, false), `row ${row} is base row ${from}, unchanged`);
      }
      assert.equal(wholeTab(next), wholeTab(fresh(next)));
    });
  }
});

test('the records answer built from kept rows is exact UTF-8: accents, CJK, astral characters, lone surrogates', () => {
  const names = ['Chloé', 'Zürich 東京', '𝒜 and 😀', 'lone \ud800 high', 'lone \udc00 low', 'pair at end 😀', '', 'a"quote\\back\nline', '\u007f\u0080\u07ff\u0800\uffff'];
  const workbook = workbookOf(names, names.map(() => 'x'));
  for (const query of ['', '?_raw=1', '/Name/*o*', '?_limit=3&_offset=2']) {
    const result = handle(workbook, { method: 'GET', url: `/sheets/x${query}` });
    assert.ok(result.bytes !== undefined, `${query}: answered as bytes`);
    const text = new TextDecoder('utf-8', { fatal: true }).decode(result.bytes);
    const expected = query.startsWith('/Name') ? names.filter((name) => name.toLowerCase().includes('o')) : query.startsWith('?_limit') ? names.slice(2, 5) : [...names, 'end'];
    assert.deepEqual((JSON.parse(text) as { Name: string | null }[]).map((row) => row.Name ?? ''), expected, query);
    assert.equal(result.bytes.byteLength, new TextEncoder().encode(text).byteLength, `${query}: no byte left over`);
  }
});
