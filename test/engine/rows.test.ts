// A write on a big tab copies the chunks of rows it changes, not the tab (issue 24, part 14):
// POST, PATCH and DELETE on a 3,000-row tab (three chunks of 1,024) through `handle()`, checked
// against the same writes done on plain arrays: the rows, the tab's and each row's version, the
// whole-tab answer and what a written tab shares with the one before.
// Uses only `test`, `t.test` and `assert`, so the file runs under Node, Deno and Bun alike.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { CHUNK_ROWS, gridRows, handle, rowVersion, Rows, tableOf, tabVersion } from '../../lib/mod.ts';
import type { SheetRow, Tab, Workbook } from '../../lib/mod.ts';

const JSON_HEADERS = { 'content-type': 'application/json' };

function row(cells: readonly string[]): SheetRow {
  return { text: cells, value: cells.map((cell) => (cell === '' ? null : cell)) };
}

/** A header row, then `count` rows `Name: n<i>`, `City: c<i % 7>`. */
function bigTab(count: number, leadingEmpty = 0): Workbook {
  const rows: SheetRow[] = [];
  for (let i = 0; i < leadingEmpty; i++) rows.push(row([]));
  rows.push(row(['Name', 'City']));
  for (let i = 0; i < count; i++) rows.push(row([`n${i}`, `c${i % 7}`]));
  return { tabs: [{ name: 'big', rows }] };
}

/** The same rows as new objects in a plain tab: what a reload from the file gives. */
function copyOf(tab: Tab): Tab {
  return { name: tab.name, rows: tab.rows.map((each) => ({ text: [...each.text], value: [...each.value] })) };
}

function send(workbook: Workbook, method: string, url: string, body?: unknown): Workbook {
  const result = handle(workbook, { method, url, headers: JSON_HEADERS, body: body === undefined ? undefined : JSON.stringify(body) });
  assert.ok(result.status < 300, `${method} ${url}: ${result.status} ${result.body}`);
  return result.workbook;
}

function wholeTab(workbook: Workbook, query = ''): string {
  return handle(workbook, { method: 'GET', url: `/sheets/big${query}` }).body;
}

test('Rows: set, push and remove across chunk boundaries do what they do on an array, and leave the rows before as they were', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 3 * CHUNK_ROWS }),
      fc.array(
        fc.oneof(
          fc.record({ op: fc.constant('set' as const), at: fc.nat() }),
          fc.record({ op: fc.constant('push' as const), count: fc.integer({ min: 1, max: CHUNK_ROWS + 5 }) }),
          fc.record({ op: fc.constant('remove' as const), at: fc.array(fc.nat(), { maxLength: 5 }) }),
        ),
        { maxLength: 6 },
      ),
      (length, ops) => {
        const array = Array.from({ length }, (_, i) => row([`r${i}`]));
        let rows = Rows.of(array);
        let expected = array.slice();
        let made = 0;
        for (const op of ops) {
          const before = rows;
          const beforeRows = before.toArray();
          const edit = rows.edit();
          if (op.op === 'set' && expected.length > 0) {
            const at = op.at % expected.length;
            const fresh = row([`new ${made++}`]);
            edit.set(at, fresh);
            expected[at] = fresh;
          } else if (op.op === 'push') {
            for (let i = 0; i < op.count; i++) {
              const fresh = row([`new ${made++}`]);
              edit.push(fresh);
              expected.push(fresh);
            }
          } else if (op.op === 'remove' && expected.length > 0) {
            const gone = [...new Set(op.at.map((at) => at % expected.length))].sort((a, b) => a - b);
            edit.remove(gone);
            expected = expected.filter((_, i) => !gone.includes(i));
          }
          rows = edit.done();
          assert.equal(rows.length, expected.length);
          assert.deepEqual(rows.toArray(), expected);
          for (let i = 0; i < expected.length; i += 97) assert.equal(rows.at(i), expected[i]);
          // Every chunk is full but the last, so a chunk's place says which grid rows it holds.
          rows.chunks.forEach((chunk, c) => assert.ok(c === rows.chunks.length - 1 ? chunk.length > 0 && chunk.length <= CHUNK_ROWS : chunk.length === CHUNK_ROWS));
          assert.deepEqual(before.toArray(), beforeRows, 'the rows before the edit are unchanged');
        }
      },
    ),
    { numRuns: 60 },
  );
});

test('a POST on a 3,000-row tab shares every chunk but the last with the tab before', () => {
  const workbook = bigTab(3000);
  tabVersion(workbook.tabs[0]);
  const next = send(workbook, 'POST', '/sheets/big', { Name: 'new', City: 'x' });
  const before = gridRows(workbook.tabs[0]).chunks;
  const after = gridRows(next.tabs[0]).chunks;
  assert.equal(after.length, before.length);
  for (let c = 0; c < after.length - 1; c++) assert.equal(after[c], before[c], `chunk ${c} is shared`);
  assert.notEqual(after[after.length - 1], before[before.length - 1]);
  assert.equal(tableOf(next.tabs[0]).rowCount, 3001);
});

test('after writes anywhere in a 3,000-row tab: the rows, versions and answers are those of the same rows loaded afresh', async (t) => {
  const cases: [string, (workbook: Workbook) => Workbook][] = [
    ['POST one row', (workbook) => send(workbook, 'POST', '/sheets/big', { Name: 'new', City: 'x' })],
    ['POST 1,100 rows (past a chunk)', (workbook) => send(workbook, 'POST', '/sheets/big', Array.from({ length: 1100 }, (_, i) => ({ Name: `p${i}` })))],
    ['PATCH row 0', (workbook) => send(workbook, 'PATCH', '/sheets/big/0', { City: 'patched' })],
    ['PATCH row 1,500', (workbook) => send(workbook, 'PATCH', '/sheets/big/1500', { City: 'patched' })],
    ['PATCH every City c3 (rows in every chunk)', (workbook) => send(workbook, 'PATCH', '/sheets/big/City/c3', { Name: 'three' })],
    ['DELETE row 5 (rows below move up across chunks)', (workbook) => send(workbook, 'DELETE', '/sheets/big/5')],
    ['DELETE every City c5', (workbook) => send(workbook, 'DELETE', '/sheets/big/City/c5')],
    ['DELETE the last row', (workbook) => send(workbook, 'DELETE', '/sheets/big/2999')],
  ];
  for (const [label, write] of cases) {
    await t.test(label, () => {
      const workbook = bigTab(3000);
      // Versions, tables and encoded rows exist before the write, so the write derives them.
      tabVersion(workbook.tabs[0]);
      wholeTab(workbook);
      wholeTab(workbook, '?_raw=1');
      handle(workbook, { method: 'GET', url: '/sheets/big/City/c1' });
      let next = write(workbook);
      next = send(next, 'POST', '/sheets/big', { Name: 'after', City: 'y' });
      const tab = next.tabs[0];
      const fresh = copyOf(tab);
      assert.ok(Array.isArray(tab.rows));
      assert.deepEqual(JSON.parse(JSON.stringify(tab)).rows, JSON.parse(JSON.stringify(fresh.rows)), 'JSON.stringify sees the rows');
      assert.equal(tabVersion(tab), tabVersion(fresh));
      for (const grid of [0, 1, 6, 1023, 1024, 1025, 2048, tab.rows.length - 1]) assert.equal(rowVersion(tab, grid), rowVersion(fresh, grid), `row ${grid}`);
      const freshBook = { tabs: [fresh] };
      assert.equal(wholeTab(next), wholeTab(freshBook));
      assert.equal(wholeTab(next, '?_raw=1'), wholeTab(freshBook, '?_raw=1'));
      assert.equal(handle(next, { method: 'GET', url: '/sheets/big/City/c1' }).body, handle(freshBook, { method: 'GET', url: '/sheets/big/City/c1' }).body);
      // The workbook before the write is as it was.
      assert.equal(tabVersion(workbook.tabs[0]), tabVersion(bigTab(3000).tabs[0]));
    });
  }
});

test('a header row below 1,024 empty rows is found, and writes land under it', () => {
  const workbook = bigTab(10, CHUNK_ROWS + 3);
  assert.equal(tableOf(workbook.tabs[0]).headerRow, CHUNK_ROWS + 3);
  const next = send(workbook, 'POST', '/sheets/big', { Name: 'new' });
  assert.equal(tableOf(next.tabs[0]).rowCount, 11);
  assert.equal(next.tabs[0].rows[CHUNK_ROWS + 3 + 11].text[0], 'new');
  assert.equal(tabVersion(next.tabs[0]), tabVersion(copyOf(next.tabs[0])));
});

test('a read of thousands of rows in another order than the tab\'s answers each row\'s JSON in that order, encoded before or not', () => {
  // Reads of 4,096 rows and more keep row bytes by index and encode the missing ones in the tab's
  // order (lib/table.ts, `rowsBytesByIndex`): a first read of 5,000 of 6,000 rows, sorted,
  // encodes those; the next reads find some or all of their rows there.
  const workbook = bigTab(6000);
  const rows = workbook.tabs[0].rows.slice(1).map((each) => ({ Name: each.text[0], City: each.text[1] }));
  const byCity = [...rows].sort((a, b) => a.City.localeCompare(b.City));
  const byNameDescending = [...rows].sort((a, b) => (a.Name < b.Name ? 1 : a.Name > b.Name ? -1 : 0));
  assert.deepEqual(JSON.parse(wholeTab(workbook, '?_sort=City&_limit=5000')), byCity.slice(0, 5000));
  assert.deepEqual(JSON.parse(wholeTab(workbook, '?_sort=-Name')), byNameDescending);
  assert.deepEqual(JSON.parse(wholeTab(workbook, '?_sort=City')), byCity);
  assert.deepEqual(JSON.parse(wholeTab(workbook, '?_sort=-Name&_raw=1')), byNameDescending);
});

test('rows of any script encoded together keep their own bytes: accents, CJK, emoji, and a lone surrogate', () => {
  // encodeAll writes a chunk's rows into one buffer (up to 3 bytes per UTF-16 unit) and slices each row's bytes out.
  const names = ['Zoë', '東京', '🙂 smile', 'plain', '\uD800 lone', 'ça va', ''];
  const rows: SheetRow[] = [row(['Name', 'City'])];
  for (let i = 0; i < 5000; i++) rows.push(row([`${names[i % names.length]}${i}`, `c${i % 3}`]));
  const workbook: Workbook = { tabs: [{ name: 'big', rows }] };
  const expected = rows.slice(1).map((each) => ({ Name: each.text[0], City: each.text[1] }));
  const bytes = handle(workbook, { method: 'GET', url: '/sheets/big?_sort=-City' }).bytes!;
  const byCity = [...expected].sort((a, b) => (a.City < b.City ? 1 : a.City > b.City ? -1 : 0));
  assert.deepEqual(JSON.parse(new TextDecoder().decode(bytes)), byCity);
  // The same rows again, now from the kept bytes, in the tab's order.
  assert.deepEqual(JSON.parse(wholeTab(workbook)), expected);
});
