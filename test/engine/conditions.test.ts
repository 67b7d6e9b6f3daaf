// The version 2 conditions beyond what the golden fixtures (fixtures/conditions-v2.json) pin:
// which filters an index answers (GET /sheets/t/query?City=__in(a,b) looks rows up, never
// scans), `_case=sensitive` staying exact through the folded indexes and after writes, the
// parsing of `_or`, `_case` and escapes, and properties over generated tabs: `_or` is the
// union of its parts, `__in(a,b)` is `_or=Col=a;Col=b`, `__nin` the complement of `__in`.
// Uses only `test`, `t.test` and `assert`, so the file runs under Node, Deno and Bun alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { handle, isApiError, parseRequest, sheetDate, tableOf } from '../../lib/mod.ts';
import type { SheetRow, Workbook } from '../../lib/workbook.ts';
import { conditionFilters } from '../../lib/query.ts';
import { unionRows } from '../../lib/row-filter.ts';
import { conditionRows } from '../../lib/select.ts';
import { parseConditionSet, splitEscaped, type ConditionSet } from '../../lib/parse-conditions.ts';

const RUNS = 200;

function row(cells: readonly (string | number)[]): SheetRow {
  return { text: cells.map(String), value: cells.map((cell) => (cell === '' ? null : cell)) };
}

function workbookOf(header: readonly string[], data: readonly (readonly (string | number)[])[]): Workbook {
  return { tabs: [{ name: 't', rows: [row(header), ...data.map(row)] }] };
}

/** The data-row indexes a GET answers, in answer order. */
function indexesOf(workbook: Workbook, url: string): number[] {
  const result = handle(workbook, { method: 'GET', url: url + (url.includes('?') ? '&' : '?') + '_format=split' });
  assert.equal(result.status, 200, `${url}: ${result.body}`);
  return (JSON.parse(result.body) as { index: string[] }).index.map(Number);
}

function statusOf(workbook: Workbook, url: string): { status: number; error?: string } {
  const result = handle(workbook, { method: 'GET', url });
  return result.status === 200 ? { status: 200 } : { status: result.status, error: (JSON.parse(result.body) as { error: string }).error };
}

const CITIES = workbookOf(
  ['Name', 'City', 'Age'],
  [
    ['Ann', 'Lisbon', 30],
    ['bob', 'porto', 41],
    ['Cy', 'LISBON', ''],
    ['Dee', 'Madrid', 17],
    ['Eve', 'Porto', 65],
  ],
);

function set(query: string): ConditionSet {
  const parsed = parseConditionSet(new URLSearchParams(query));
  assert.ok(!isApiError(parsed), query);
  return parsed;
}

test('conditions an index answers give their rows without a scan', async (t) => {
  const table = tableOf(CITIES.tabs[0]);
  const cases: [query: string, indexed: boolean][] = [
    ['City=__in(lisbon,porto)', true],
    ['City=__in(lis*,madrid)', false],
    ['City=__empty()', true],
    ['Age=__empty()', true],
    ['_or=City=lisbon;Name=dee', true],
    ['_or=City=lisbon;Name=__ne(dee)', false],
    ['_or=City=__in(lisbon);Name=__in(dee,eve)', true],
    ['City=lisbon&_case=sensitive', true],
    ['City=__in(Lisbon,porto)&_case=sensitive', true],
    ['Age=__gt(20)', false],
  ];
  for (const [query, indexed] of cases) {
    await t.test(query, () => {
      const filters = conditionFilters(table, 'query', set(query));
      assert.ok(!isApiError(filters));
      assert.equal(filters.length, 1);
      const [filter] = filters;
      assert.equal(filter.rows !== undefined, indexed, indexed ? 'answered by an index' : 'a test');
      // Whatever answers, the rows are those the test keeps.
      const tested = [...Array(table.rowCount).keys()].filter((index) => filter.test(index));
      if (filter.rows !== undefined) assert.deepEqual([...filter.rows], tested);
    });
  }
});

test('conditionRows answers a condition set as /query does', async (t) => {
  const table = tableOf(CITIES.tabs[0]);
  const cases: [query: string, rows: number[]][] = [
    ['City=__in(lisbon,porto)', [0, 1, 2, 4]],
    ['City=__in(lisbon,porto)&Age=__filled()', [0, 1, 4]],
    ['_or=City=madrid;Age=__gte(60)', [3, 4]],
    ['_or=City=lisbon;City=madrid&_or=Age=__lt(20);Age=__empty()', [2, 3]],
    ['City=porto&_case=sensitive', [1]],
    ['Name=__between(b,d)', [1, 2]],
  ];
  for (const [query, rows] of cases) {
    await t.test(query, () => {
      assert.deepEqual(conditionRows(table, 'query', set(query)), rows);
      assert.deepEqual(indexesOf(CITIES, `/sheets/t/query?${query}`), rows);
    });
  }
});

test('_case=sensitive stays exact after writes (the folded index gives candidates, the text decides)', () => {
  let workbook = CITIES;
  // Build the City index on the first table, then write through derived tables.
  assert.deepEqual(indexesOf(workbook, '/sheets/t/query?City=lisbon&_case=sensitive'), []);
  const write = (method: string, url: string, body?: unknown) => {
    const result = handle(workbook, { method, url, headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    assert.ok(result.status < 300, result.body);
    workbook = result.workbook;
  };
  write('PATCH', '/sheets/t/1', { City: 'lisbon' });
  assert.deepEqual(indexesOf(workbook, '/sheets/t/query?City=lisbon&_case=sensitive'), [1]);
  assert.deepEqual(indexesOf(workbook, '/sheets/t/query?City=lisbon'), [0, 1, 2]);
  write('POST', '/sheets/t', { Name: 'Fay', City: 'Lisbon' });
  assert.deepEqual(indexesOf(workbook, '/sheets/t/query?City=Lisbon&_case=sensitive'), [0, 5]);
  write('DELETE', '/sheets/t/0');
  assert.deepEqual(indexesOf(workbook, '/sheets/t/query?City=__in(Lisbon,LISBON)&_case=sensitive'), [1, 4]);
  assert.deepEqual(indexesOf(workbook, '/sheets/t/search?_or=City=lisbon;City=Madrid&_case=sensitive'), [0, 2]);
});

test('unionRows: the rows of any list, ascending, each once, whether few (sorted) or many (marked)', async (t) => {
  const cases: [name: string, lists: number[][], rowCount: number, union: number[]][] = [
    ['no lists', [], 10, []],
    ['empty lists', [[], []], 10, []],
    ['one list is itself', [[], [2, 5]], 10, [2, 5]],
    ['few rows of a large tab, overlapping', [[5, 900, 70_000], [5, 6, 99_999], [0]], 100_000, [0, 5, 6, 900, 70_000, 99_999]],
    ['many rows of a small tab, overlapping', [[0, 1, 2, 7], [2, 3, 9], [9]], 10, [0, 1, 2, 3, 7, 9]],
  ];
  for (const [name, lists, rowCount, union] of cases) await t.test(name, () => assert.deepEqual([...unionRows(lists, rowCount)], union));
  await t.test('generated lists, both ways', () => {
    fc.assert(
      fc.property(fc.array(fc.uniqueArray(fc.nat({ max: 4_000 }), { maxLength: 30 }), { maxLength: 5 }), fc.constantFrom(4_001, 1_000_000), (lists, rowCount) => {
        const sorted = lists.map((rows) => [...rows].sort((a, b) => a - b));
        const expected = [...new Set(sorted.flat())].sort((a, b) => a - b);
        assert.deepEqual([...unionRows(sorted, rowCount)], expected);
      }),
      { numRuns: RUNS },
    );
  });
});

test('splitEscaped: a separator after a backslash is part of the item', async (t) => {
  const cases: [text: string, separator: string, items: string[]][] = [
    ['a,b', ',', ['a', 'b']],
    ['a\\,b,c', ',', ['a,b', 'c']],
    ['a\\;b;c', ';', ['a;b', 'c']],
    ['a\\,b;c', ';', ['a\\,b', 'c']],
    ['C:\\data,x', ',', ['C:\\data', 'x']],
    ['', ',', ['']],
    ['a,', ',', ['a', '']],
  ];
  for (const [text, separator, items] of cases) await t.test(`${text} on ${separator}`, () => assert.deepEqual(splitEscaped(text, separator), items));
});

test('parseConditionSet: conditions, _or groups and _case', async (t) => {
  const cases: [query: string, expected: ConditionSet | string][] = [
    ['City=x', { conditions: [{ key: 'City', value: 'x' }], orGroups: [], caseSensitive: false }],
    ['_or=A=1;B=__in(2,3)', { conditions: [], orGroups: [[{ key: 'A', value: '1' }, { key: 'B', value: '__in(2,3)' }]], caseSensitive: false }],
    ['_or=A=x\\;y;B=z&_or=C=1', { conditions: [], orGroups: [[{ key: 'A', value: 'x;y' }, { key: 'B', value: 'z' }], [{ key: 'C', value: '1' }]], caseSensitive: false }],
    ['_or=A=b=c', { conditions: [], orGroups: [[{ key: 'A', value: 'b=c' }]], caseSensitive: false }],
    ['_or=A__gt=1', { conditions: [], orGroups: [[{ key: 'A__gt', value: '1' }]], caseSensitive: false }],
    ['A=1&_case=sensitive&_limit=2', { conditions: [{ key: 'A', value: '1' }], orGroups: [], caseSensitive: true }],
    ['_or=', 'invalid_parameter'],
    ['_or=A=1;', 'invalid_parameter'],
    ['_or=;A=1', 'invalid_parameter'],
    ['_or=A', 'invalid_parameter'],
    ['_or==1', 'invalid_parameter'],
    ['_case=', 'invalid_parameter'],
    ['_case=insensitive', 'invalid_parameter'],
  ];
  for (const [query, expected] of cases) {
    await t.test(query, () => {
      const parsed = parseConditionSet(new URLSearchParams(query));
      if (typeof expected === 'string') {
        assert.ok(isApiError(parsed), 'refused');
        assert.equal(parsed.code, expected);
      } else {
        assert.deepEqual(parsed, expected);
      }
    });
  }
});

test('_or and _case are refused where no conditions are taken, on any method', async (t) => {
  const cases: [method: string, url: string][] = [
    ['GET', '/sheets/t?_or=City=x'],
    ['GET', '/sheets/t/0?_case=sensitive'],
    ['GET', '/sheets/t/City/lisbon?_case=sensitive'],
    ['DELETE', '/sheets/t/City/lisbon?_or=City=porto'],
    ['GET', '/sheets/t/tabs?_or=a=b'],
  ];
  for (const [method, url] of cases) {
    await t.test(`${method} ${url}`, () => {
      const parsed = parseRequest({ method, url });
      assert.ok(isApiError(parsed), 'refused');
      assert.equal(parsed.code, 'invalid_parameter');
      assert.match(parsed.message, /\/search, \/query and \/aggregate/);
    });
  }
  await t.test('a preflight is not refused', () => assert.ok(!isApiError(parseRequest({ method: 'OPTIONS', url: '/sheets/t/0?_case=sensitive' }))));
});

test('typed comparisons: an operand of one kind holds only for cells of that kind', async (t) => {
  const workbook: Workbook = {
    tabs: [
      {
        name: 't',
        rows: [
          { text: ['V'], value: ['V'] },
          { text: ['10'], value: [10] },
          { text: ['010'], value: ['010'] },
          { text: ['n/a'], value: ['n/a'] },
          { text: ['TRUE'], value: [true] },
          { text: ['3/1/2024'], value: [sheetDate('2024-03-01')] },
          { text: ['2024-02-01'], value: ['2024-02-01'] },
          { text: [''], value: [null] },
          { text: ['$1,000'], value: [1000] },
        ],
      },
    ],
  };
  const cases: [query: string, rows: number[]][] = [
    ['V=__gt(5)', [0, 1, 7]],
    ['V=__lte(10)', [0, 1]],
    ['V=__between(9,1000)', [0, 1, 7]],
    ['V=__gte(2024-01-01)', [4, 5]],
    ['V=__lt(2024-02-15)', [5]],
    ['V=__gt(a)', [2]],
    ['V=__lt(a)', [1, 5]],
  ];
  for (const [query, rows] of cases) await t.test(query, () => assert.deepEqual(indexesOf(workbook, `/sheets/t/query?${query}`), rows));
  await t.test('V=__between(0,z): bounds of two kinds are refused', () => {
    assert.deepEqual(statusOf(workbook, '/sheets/t/query?V=__between(0,z)'), { status: 400, error: 'invalid_parameter' });
  });
});

// ---------------------------------------------------------------------------------------------
// Properties

/** Cell texts that meet: case variants, separators, a star, numbers, dates, empty. */
const CELLS = ['ann', 'Ann', 'ANN', 'bob', 'a,b', 'a;b', 'x*y', '12', '3.5', '-1', '2024-03-01', 'n/a', '', ' ann'] as const;
/** Values a condition may name: the cells (bar the empty one, which lists refuse) and patterns. */
const VALUES = [...CELLS.filter((cell) => cell !== ''), 'a*', '*b', '*', 'x*'] as const;
const cellArb = fc.constantFrom(...CELLS);
const valueArb = fc.constantFrom(...VALUES);

const tabArb = fc.array(fc.tuple(cellArb, cellArb), { minLength: 1, maxLength: 25 });

function tabOf(rows: readonly (readonly [string, string])[]): Workbook {
  const typed = (cell: string) => (/^-?\d+(\.\d+)?$/.test(cell) ? Number(cell) : cell);
  // A trailing row with a value keeps every generated row a data row.
  return workbookOf(['A', 'B'], [...rows.map(([a, b]) => [typed(a), typed(b)]), ['end', 'end']]);
}

/** One `/query` condition on A or B, as an `_or` item and as a parameter. */
const conditionArb = fc.oneof(
  fc.tuple(fc.constantFrom('A', 'B'), valueArb).map(([column, value]) => `${column}=${value}`),
  fc.tuple(fc.constantFrom('A', 'B'), fc.constantFrom('ne', 'gt', 'lte', 'contains', 'startswith', 'endswith'), valueArb).map(([column, operator, value]) => `${column}=__${operator}(${value})`),
  fc.tuple(fc.constantFrom('A', 'B'), fc.constantFrom('in', 'nin'), fc.array(valueArb, { minLength: 1, maxLength: 3 })).map(([column, operator, items]) => `${column}=__${operator}(${items.map(escapeItem).join(',')})`),
  fc.tuple(fc.constantFrom('A', 'B'), fc.constantFrom('empty', 'filled')).map(([column, operator]) => `${column}=__${operator}()`),
  // Bounds in order: reversed ones are a 400 (fixtures/conditions-v2.json), not a condition.
  fc.tuple(fc.constantFrom('A', 'B'), fc.integer({ min: -2, max: 5 }), fc.integer({ min: 0, max: 18 })).map(([column, low, width]) => `${column}=__between(${low},${low + width})`),
);

function escapeItem(item: string): string {
  return item.replaceAll(',', '\\,');
}

/** `A=__in(a\,b)` as a parameter of the URL: the name, and the value percent-encoded. */
function parameter(condition: string): string {
  const equals = condition.indexOf('=');
  return `${condition.slice(0, equals)}=${encodeURIComponent(condition.slice(equals + 1))}`;
}

function orParameter(conditions: readonly string[]): string {
  return '_or=' + encodeURIComponent(conditions.map((condition) => condition.replaceAll(';', '\\;')).join(';'));
}

const caseArb = fc.constantFrom('', '&_case=sensitive');

test('_or keeps the union of what its conditions keep', () => {
  fc.assert(
    fc.property(tabArb, fc.array(conditionArb, { minLength: 1, maxLength: 4 }), caseArb, (rows, conditions, caseParameter) => {
      const workbook = tabOf(rows);
      const union = new Set(conditions.flatMap((condition) => indexesOf(workbook, `/sheets/t/query?${parameter(condition)}${caseParameter}`)));
      const expected = [...union].sort((a, b) => a - b);
      assert.deepEqual(indexesOf(workbook, `/sheets/t/query?${orParameter(conditions)}${caseParameter}`), expected);
    }),
    { numRuns: RUNS },
  );
});

test('two _or groups keep what both keep, and a group ANDs with the other conditions', () => {
  fc.assert(
    fc.property(tabArb, fc.array(conditionArb, { minLength: 1, maxLength: 3 }), fc.array(conditionArb, { minLength: 1, maxLength: 3 }), conditionArb, (rows, first, second, plain) => {
      const workbook = tabOf(rows);
      const a = new Set(indexesOf(workbook, `/sheets/t/query?${orParameter(first)}`));
      const b = new Set(indexesOf(workbook, `/sheets/t/query?${orParameter(second)}`));
      const c = new Set(indexesOf(workbook, `/sheets/t/query?${parameter(plain)}`));
      const expected = [...a].filter((index) => b.has(index) && c.has(index)).sort((x, y) => x - y);
      assert.deepEqual(indexesOf(workbook, `/sheets/t/query?${orParameter(first)}&${orParameter(second)}&${parameter(plain)}`), expected);
    }),
    { numRuns: RUNS },
  );
});

test('__in(a,b) keeps what _or=Col=a;Col=b keeps', () => {
  fc.assert(
    fc.property(tabArb, fc.constantFrom('A', 'B'), fc.array(valueArb, { minLength: 1, maxLength: 4 }), caseArb, (rows, column, items, caseParameter) => {
      const workbook = tabOf(rows);
      const listed = indexesOf(workbook, `/sheets/t/query?${column}=${encodeURIComponent(`__in(${items.map(escapeItem).join(',')})`)}${caseParameter}`);
      const ored = indexesOf(workbook, `/sheets/t/query?${orParameter(items.map((item) => `${column}=${item}`))}${caseParameter}`);
      assert.deepEqual(listed, ored);
      // On /search, the same items as patterns: an `_or` of them keeps the same rows.
      assert.deepEqual(indexesOf(workbook, `/sheets/t/search?${orParameter(items.map((item) => `${column}=${item}`))}${caseParameter}`), listed);
    }),
    { numRuns: RUNS },
  );
});

test('__nin keeps exactly the rows __in does not', () => {
  fc.assert(
    fc.property(tabArb, fc.constantFrom('A', 'B'), fc.array(valueArb, { minLength: 1, maxLength: 4 }), caseArb, (rows, column, items, caseParameter) => {
      const workbook = tabOf(rows);
      const list = encodeURIComponent(`(${items.map(escapeItem).join(',')})`);
      const kept = indexesOf(workbook, `/sheets/t/query?${column}=__in${list}${caseParameter}`);
      const left = indexesOf(workbook, `/sheets/t/query?${column}=__nin${list}${caseParameter}`);
      const all = [...Array(rows.length + 1).keys()];
      assert.deepEqual([...kept, ...left].sort((a, b) => a - b), all);
    }),
    { numRuns: RUNS },
  );
});

test('_case=sensitive keeps a subset of what the case-insensitive request keeps, and every text it keeps matches as written', () => {
  fc.assert(
    fc.property(tabArb, valueArb, (rows, value) => {
      const workbook = tabOf(rows);
      const insensitive = new Set(indexesOf(workbook, `/sheets/t/query?A=${encodeURIComponent(value)}`));
      const sensitive = indexesOf(workbook, `/sheets/t/query?A=${encodeURIComponent(value)}&_case=sensitive`);
      for (const index of sensitive) assert.ok(insensitive.has(index));
      if (!value.includes('*')) {
        const texts = [...rows.map(([a]) => a), 'end'];
        assert.deepEqual(sensitive, texts.flatMap((text, index) => (text === value ? [index] : [])));
      }
    }),
    { numRuns: RUNS },
  );
});
