// Per-tab reads of the Google source, through the HTTP handler and the emulator: a read of one
// tab asks Google for that tab's cells only (plus the list of tabs when it is stale), each tab
// is kept on its own, a tab read again with the same content keeps its object (so kept answers
// and ETags stay valid), and writes read only the tab they address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Secret } from '../../../server/config/config.ts';
import { startEmulator, type Emulator } from '../../../tools/google-emulator/mod.ts';
import { openGoogleSource } from '../../../server/sources/google/mod.ts';
import { TabCache } from '../../../server/sources/google/tab-cache.ts';
import { readScope } from '../../../server/sources/scope.ts';
import { appOver } from '../../helpers/app.ts';
import { upstreamReads } from '../../helpers/google.ts';

const TOKEN = 'writer-token';
const TABS = ['People', 'Orders', "Bob's tab", 'A1'];

interface Context {
  after(fn: () => unknown): void;
}

async function setUp(t: Context, freshnessMs = 60_000) {
  const emulator = await startEmulator();
  const spreadsheetId = emulator.createSpreadsheet({
    sheets: TABS.map((title, n) => ({ title, rows: [['Name', 'Tab'], ...Array.from({ length: 50 }, (_, i) => [`${title} ${i}`, n])] })),
    access: { [TOKEN]: 'writer' },
  });
  const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, freshnessMs, retry: { retries: 0 } });
  t.after(async () => {
    await source.close();
    await emulator.close();
  });
  const call = await appOver(t, source);
  return { emulator, spreadsheetId, source, call };
}

/** The bytes of a read of every tab (a no-cache read that names none). */
async function allBytes(emulator: Emulator, call: (path: string, init?: RequestInit) => Promise<Response>): Promise<number> {
  const before = emulator.requests.length;
  await call('/sheets/crm/tabs', { headers: { 'Cache-Control': 'no-cache' } });
  return emulator.requests[before].bytes;
}

const tabPath = (name: string) => `/sheets/crm/tabs/${encodeURIComponent(name)}`;

test('a read of one tab asks for that tab only', async (t) => {
  const { emulator, call } = await setUp(t);
  emulator.resetRequests();
  const orders = await call(`${tabPath('Orders')}?_limit=2`);
  assert.equal(orders.status, 200);
  assert.deepEqual(await orders.json(), [{ Name: 'Orders 0', Tab: '1' }, { Name: 'Orders 1', Tab: '1' }]);
  assert.deepEqual(upstreamReads(emulator), ["tab 'Orders'!1:10000"], 'the tab, nothing of the others, not even their names');

  emulator.resetRequests();
  for (const name of ["Bob's tab", 'A1']) assert.equal((await call(tabPath(name))).status, 200);
  assert.deepEqual(upstreamReads(emulator), ["tab 'Bob''s tab'!1:10000", "tab 'A1'!1:10000"], 'names quoted as A1 notation wants');

  emulator.resetRequests();
  assert.equal((await call('/sheets/crm?_limit=1')).status, 200);
  assert.deepEqual(upstreamReads(emulator), ['list', "tab 'People'!1:10000"], 'no tab named: the list says which is first');
  const [list] = emulator.requests;
  assert.ok(list.bytes < 1_000, `the list is small (${list.bytes} bytes)`);
  emulator.resetRequests();
  assert.equal((await call('/sheets/crm?_limit=1', { headers: { 'Cache-Control': 'no-cache' } })).status, 200);
  assert.deepEqual(upstreamReads(emulator), ["tab 'People'!1:10000"], 'no-cache: the tab again; the list follows its window');
  emulator.resetRequests();
  assert.equal((await call(`${tabPath('Orders')}/3`)).status, 200);
  assert.deepEqual(upstreamReads(emulator), [], 'within the window: nothing upstream');
  assert.equal((await call(tabPath('Orders'), { headers: { 'Cache-Control': 'no-cache' } })).status, 200);
  assert.deepEqual(upstreamReads(emulator), ["tab 'Orders'!1:10000"], 'no-cache: the tab again, not the list');

  emulator.resetRequests();
  const tabs = await call('/sheets/crm/tabs');
  assert.deepEqual(((await tabs.json()) as { name: string; rows: number }[]).map((tab) => [tab.name, tab.rows]), TABS.map((name) => [name, 50]));
  assert.deepEqual(upstreamReads(emulator), [], 'every tab was read within the window');
});

test('the list of tabs needs every tab: their row counts come from their cells', async (t) => {
  const { emulator, call } = await setUp(t);
  emulator.resetRequests();
  assert.equal((await call('/sheets/crm/tabs')).status, 200);
  assert.deepEqual(upstreamReads(emulator), ['list', 'all'], 'the list (grid sizes small enough), then one request for all of them');
  emulator.resetRequests();
  assert.equal((await call(tabPath('Orders'), { headers: { 'Cache-Control': 'no-cache' } })).status, 200);
  const [all, one] = [await allBytes(emulator, call), emulator.requests[0].bytes];
  assert.ok(one * 3 < all, `one tab of four downloads under a third of the whole (${one} of ${all} bytes)`);
});

test('a missing tab is tab_not_found naming the tabs, with a fresh list', async (t) => {
  const { emulator, call } = await setUp(t);
  await call(tabPath('Orders'));
  emulator.resetRequests();
  const missing = await call(tabPath('Nope'));
  assert.equal(missing.status, 404);
  const body = (await missing.json()) as { error: string; message: string };
  assert.equal(body.error, 'tab_not_found');
  assert.match(body.message, /Orders/);
  assert.deepEqual(upstreamReads(emulator), ["tab 'Nope'!1:10000", 'list'], 'the list is asked again before saying the tab is not there');
});

test('a tab read again keeps its object while its content is the same', async (t) => {
  const { emulator, spreadsheetId, source } = await setUp(t, 0);
  const first = (await source.read({ tab: 'Orders' })).tabs.find((tab) => tab.name === 'Orders');
  const people = (await source.read({ tab: 'People' })).tabs.find((tab) => tab.name === 'People');
  const again = (await source.read({ tab: 'Orders' })).tabs.find((tab) => tab.name === 'Orders');
  assert.ok(first !== undefined && first === again, 'same content, same object');
  // An edit made in Google Sheets to People leaves Orders' object alone, and replaces People's.
  await fetch(`${emulator.rootUrl}v4/spreadsheets/${spreadsheetId}/values/People!A2?valueInputOption=RAW`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ values: [['Edited']] }),
  });
  const workbook = await source.read({ tab: 'People' });
  assert.equal(workbook.tabs.find((tab) => tab.name === 'Orders'), first);
  const edited = workbook.tabs.find((tab) => tab.name === 'People');
  assert.notEqual(edited, people);
  assert.equal(edited?.rows[1].text[0], 'Edited');
});

test('a small spreadsheet is read in one request: after the list on the first read of every tab, alone afterwards', async (t) => {
  const { emulator, source } = await setUp(t);
  emulator.resetRequests();
  const workbook = await source.read();
  assert.deepEqual(workbook.tabs.map((tab) => [tab.name, tab.rows.length]), TABS.map((name) => [name, 51]));
  assert.deepEqual(upstreamReads(emulator), ['list', 'all'], 'four grids of 1,000 x 26: 104,000 cells, one answer');
  await source.read({ tab: 'Orders' });
  assert.equal(emulator.requests.length, 2, 'every tab is fresh from that read');
  emulator.resetRequests();
  await source.read({ fresh: true });
  assert.deepEqual(upstreamReads(emulator), ['all'], 'the sizes are known: one request');
});

test('a cold read of every tab whose grids are past 250,000 cells never asks for every tab in one answer; once read, the cells filled decide', async (t) => {
  const emulator = await startEmulator();
  t.after(() => emulator.close());
  // Few rows, but a grid Google reports as 20,000 x 26 (520,000 cells): the list is all a cold read knows.
  const spreadsheetId = emulator.createSpreadsheet({
    sheets: [{ title: 'Wide', rows: [['Name'], ['Ann'], ['Bob']], rowCount: 20_000 }, { title: 'Small', rows: [['Name'], ['Cy']] }],
    access: { [TOKEN]: 'writer' },
  });
  const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, freshnessMs: 60_000 });
  t.after(() => source.close());
  const call = await appOver(t, source);
  emulator.resetRequests();
  const tabs = await call('/sheets/crm/tabs');
  assert.deepEqual(((await tabs.json()) as { name: string; rows: number }[]).map((tab) => [tab.name, tab.rows]), [['Wide', 2], ['Small', 1]]);
  const reads = upstreamReads(emulator);
  assert.deepEqual(reads, ['list', "tab 'Wide'!1:10000", "tab 'Wide'!10001:20000", "tab 'Small'"], 'the list, then the large grid in pages and the small one alone');
  assert.ok(!reads.includes('all'), 'no request for every tab at once');
  // Read once: 3 rows of 1 column filled in that grid, so every tab fits in one answer.
  emulator.resetRequests();
  assert.equal((await call('/sheets/crm/tabs', { headers: { 'Cache-Control': 'no-cache' } })).status, 200);
  assert.deepEqual(upstreamReads(emulator), ['all']);
});

test('ten nearly empty 1,000 x 26 tabs: batches on the first read (260,000 grid cells), one request once their content is known', async (t) => {
  const emulator = await startEmulator();
  t.after(() => emulator.close());
  const titles = Array.from({ length: 10 }, (_, n) => `T${n}`);
  const spreadsheetId = emulator.createSpreadsheet({ sheets: titles.map((title) => ({ title, rows: [['Name'], [title]] })), access: { [TOKEN]: 'writer' } });
  const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, freshnessMs: 60_000 });
  t.after(() => source.close());
  emulator.resetRequests();
  const workbook = await source.read();
  assert.deepEqual(workbook.tabs.map((tab) => tab.rows.length), titles.map(() => 2));
  assert.deepEqual(upstreamReads(emulator), ['list', `tab ${titles.slice(0, 9).map((title) => `'${title}'`).join(', ')}`, "tab 'T9'"], 'nine grids of 26,000 cells fill a batch');
  emulator.resetRequests();
  await source.read({ fresh: true });
  assert.deepEqual(upstreamReads(emulator), ['all'], '2 cells a tab: one request');
});

test('a read of every tab too large for one answer goes tab by tab: /tabs counts every row, no answer kept holds more than a page', async (t) => {
  const emulator = await startEmulator();
  t.after(() => emulator.close());
  const big: (string | number)[][] = [['Name', 'N']];
  for (let n = 1; n < 12_000; n++) big.push([`P${n}`, n]);
  const small = (title: string, count: number) => ({ title, rows: [['Name'], ...Array.from({ length: count }, (_, n) => [`${title} ${n}`])] });
  // Grids of 26 columns (Google's default): Big is 312,000 cells, past a page (250,000); the small ones 26,000 each.
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [small('First', 10), { title: 'Big', rows: big }, small("Bob's", 20), small('Last', 30)], access: { [TOKEN]: 'writer' } });
  // One answer of every tab may hold 20,000 cells here (250,000 by default): Big fills 24,000.
  const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, freshnessMs: 60_000, maxAnswerCells: 20_000 });
  t.after(() => source.close());
  const call = await appOver(t, source);
  const counts = async (init: RequestInit = {}) => {
    const tabs = await call('/sheets/crm/tabs', init);
    assert.equal(tabs.status, 200);
    return ((await tabs.json()) as { name: string; rows: number }[]).map((tab) => [tab.name, tab.rows]);
  };
  const expected = [['First', 10], ['Big', 11_999], ["Bob's", 20], ['Last', 30]];
  const pages = ["tab 'Big'!1:10000", "tab 'Big'!10001:12000", "tab 'First', 'Bob''s', 'Last'"];
  emulator.resetRequests();
  assert.deepEqual(await counts(), expected);
  // The list (the grids: 390,000 cells); Big in pages of whole rows; the small tabs together.
  assert.deepEqual(upstreamReads(emulator), ['list', ...pages]);
  emulator.resetRequests();
  assert.deepEqual(await counts({ headers: { 'Cache-Control': 'no-cache' } }), expected);
  assert.deepEqual(upstreamReads(emulator), ['list', ...pages], 'the cells read (24,063) are still too many: the list and the pages again');
  // What one answer of every tab holds, for comparison: more than the largest page.
  const largest = Math.max(...emulator.requests.map((request) => request.bytes));
  const one = await fetch(`${emulator.rootUrl}v4/spreadsheets/${spreadsheetId}?includeGridData=true`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  const oneBytes = (await one.arrayBuffer()).byteLength;
  assert.ok(largest * 1.15 < oneBytes, `no answer holds every row (largest ${largest} bytes; everything at once ${oneBytes})`);
  const whole = await source.read({ tab: 'Big' });
  assert.equal(whole.tabs.find((tab) => tab.name === 'Big')?.rows.length, 12_000, 'the header and every row');
  // Rows deleted in Google Sheets: the list shows grids small enough for one answer again.
  const sheetId = ((await (await fetch(`${emulator.rootUrl}v4/spreadsheets/${spreadsheetId}`, { headers: { Authorization: `Bearer ${TOKEN}` } })).json()) as { sheets: { properties: { title: string; sheetId?: number } }[] }).sheets.find((sheet) => sheet.properties.title === 'Big')?.properties.sheetId ?? 0;
  const deleted = await fetch(`${emulator.rootUrl}v4/spreadsheets/${spreadsheetId}:batchUpdate`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ requests: [{ deleteDimension: { range: { sheetId, dimension: 'ROWS', startIndex: 5, endIndex: 12_000 } } }] }),
  });
  assert.equal(deleted.status, 200);
  emulator.resetRequests();
  assert.deepEqual(await counts({ headers: { 'Cache-Control': 'no-cache' } }), [['First', 10], ['Big', 4], ["Bob's", 20], ['Last', 30]]);
  assert.deepEqual(upstreamReads(emulator), ['list', "tab 'First', 'Big', 'Bob''s', 'Last'"], 'the list shows small grids: every tab in one batch');
  emulator.resetRequests();
  assert.deepEqual(await counts({ headers: { 'Cache-Control': 'no-cache' } }), [['First', 10], ['Big', 4], ["Bob's", 20], ['Last', 30]]);
  assert.deepEqual(upstreamReads(emulator), ['all'], 'then one request again');
});

test('a tab grown past what was last read: the one answer is abandoned past its limit, then the list and the pages', async (t) => {
  const emulator = await startEmulator();
  t.after(() => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'Grows', rows: [['Name', 'N'], ['P1', 1]] }], access: { [TOKEN]: 'writer' } });
  // One answer may hold 1,000 cells and 100 KB here (250,000 and 20 MB by default); 12,000 rows are over 1 MB.
  const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, freshnessMs: 60_000, maxAnswerCells: 1_000, maxAnswerBytes: 100_000 });
  t.after(() => source.close());
  await source.read();
  assert.deepEqual(upstreamReads(emulator), ['list', "tab 'Grows'"], 'a grid of 26,000 cells: in a batch');
  const rows = Array.from({ length: 12_000 }, (_, n) => [`Q${n}`, n]);
  const appended = await fetch(`${emulator.rootUrl}v4/spreadsheets/${spreadsheetId}/values/Grows!A1:append?valueInputOption=RAW&insertDataOption=INSERT_ROWS`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ values: rows }),
  });
  assert.equal(appended.status, 200);
  emulator.resetRequests();
  const workbook = await source.read({ fresh: true });
  assert.equal(workbook.tabs[0].rows.length, 12_002);
  assert.deepEqual(upstreamReads(emulator), ['all', 'list', "tab 'Grows'!1:10000", "tab 'Grows'!10001:13000"], 'tried (2 rows were read last), abandoned, then in pages');
  emulator.resetRequests();
  await source.read({ fresh: true });
  assert.deepEqual(upstreamReads(emulator), ['list', "tab 'Grows'!1:10000", "tab 'Grows'!10001:13000"], 'known large now: no try');
});

test('writes read only the tab they address', async (t) => {
  const { emulator, spreadsheetId, call } = await setUp(t);
  await call(tabPath('Orders'));
  emulator.resetRequests();
  const json = (method: string, body: unknown): RequestInit => ({ method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  assert.equal((await call(`${tabPath('Orders')}/Name/Orders%203`, json('PATCH', { Tab: 'x' }))).status, 200);
  assert.deepEqual(upstreamReads(emulator), ["tab 'Orders'!1:10000", 'POST values:batchUpdate'], 'a fresh read of Orders, then the write');
  emulator.resetRequests();
  assert.equal((await call(tabPath('Orders'), json('POST', { Name: 'New' }))).status, 201);
  assert.deepEqual(upstreamReads(emulator), ["POST 'Orders'!A52:append"], 'a POST plans on the kept tab');
  const read = await call(`${tabPath('Orders')}/50:`);
  assert.deepEqual(await read.json(), [{ Name: 'New', Tab: '' }]);
  assert.equal(emulator.requests.length, 1, 'the read after the write comes from memory');
  emulator.resetRequests();
  assert.equal((await call('/sheets/crm/1', { method: 'DELETE' })).status, 200);
  assert.deepEqual(upstreamReads(emulator), ['list', "tab 'People'!1:10000", `POST ${spreadsheetId}:batchUpdate`], 'which tab is first, that tab fresh, then the deletion');
});

test('which tab a request reads, from its path', () => {
  const cases: [string, ReturnType<typeof readScope>][] = [
    ['http://x/sheets/crm', { tab: null }],
    ['http://x/sheets/crm/', { tab: null }],
    ['http://x/sheets/crm?_limit=5', { tab: null }],
    ['http://x/sheets/crm/3', { tab: null }],
    ['http://x/sheets/crm/tabs', {}],
    ['http://x/sheets/crm/tabs/', {}],
    ['http://x/sheets/crm/tabs?x=/tabs/y', {}],
    ['http://x/sheets/crm/tabs/Orders', { tab: 'Orders' }],
    ['http://x/sheets/crm/tabs/Bob%27s%20tab/Name/x?_limit=1', { tab: "Bob's tab" }],
    ['/sheets/crm/tabs/Orders/3', { tab: 'Orders' }],
    ['http://x/sheets/crm/tabs/%E0%A4%A', {}],
  ];
  for (const [url, scope] of cases) assert.deepEqual([url, readScope(url)], [url, scope]);
});

test('the first tab, and the first visible one when the first is hidden', () => {
  const cache = new TabCache();
  cache.setMeta([{ name: 'Secret', sheetId: 0, hidden: true }, { name: 'B', sheetId: 1, hidden: true }, { name: 'C', sheetId: 2, hidden: false }], 0);
  assert.deepEqual(cache.firstTabs(), ['Secret', 'C']);
  cache.setMeta([{ name: 'A', sheetId: 0, hidden: false }, { name: 'C', sheetId: 2, hidden: true }], 0);
  assert.deepEqual(cache.firstTabs(), ['A']);
  // Unread tabs stand in empty, one object each, and visibility follows the list.
  const before = cache.workbook();
  assert.deepEqual(before.tabs, [{ name: 'A', rows: [] }, { name: 'C', rows: [], visibility: 'hidden' }]);
  cache.setMeta([{ name: 'A', sheetId: 0, hidden: false }, { name: 'C', sheetId: 2, hidden: true }], 10);
  assert.equal(cache.workbook(), before, 'the same list: the same workbook');
});

test('a large tab is read in pages of whole rows, the same rows as one request gives', async (t) => {
  const emulator = await startEmulator();
  t.after(() => emulator.close());
  const rows: (string | number | null)[][] = [['Name', 'N']];
  for (let n = 0; n < 24_000; n++) rows.push([`P${n}`, n]);
  // Empty rows across a page's edge, and a row alone far below.
  for (let n = 9_990; n < 10_020; n++) rows[n] = [];
  while (rows.length < 30_000) rows.push([]);
  rows.push(['Last', 30_000]);
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'Big', rows }, { title: 'Small', rows: [['A'], [1]] }], access: { [TOKEN]: 'writer' } });
  const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, freshnessMs: 60_000 });
  t.after(() => source.close());
  emulator.resetRequests();
  const paged = (await source.read({ tab: 'Big' })).tabs.find((tab) => tab.name === 'Big');
  // 2 columns: pages of 100,000 rows after the first 10,000; the grid has 30,001 rows.
  assert.deepEqual(upstreamReads(emulator), ["tab 'Big'!1:10000", "tab 'Big'!10001:30001"]);
  const whole = (await source.read({ fresh: true })).tabs.find((tab) => tab.name === 'Big');
  assert.equal(paged?.rows.length, 30_001);
  assert.deepEqual(paged?.rows, whole?.rows);
  assert.deepEqual(paged?.rows[30_000].text, ['Last', '30000']);
});

test('a write to the first tab after reads of other tabs only goes to the first tab', async (t) => {
  const { emulator, spreadsheetId, call } = await setUp(t);
  // Orders read by name: the source knows Orders, not yet which tab is first.
  await call(tabPath('Orders'));
  emulator.resetRequests();
  const posted = await call('/sheets/crm', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name": "First"}' });
  assert.equal(posted.status, 201);
  assert.deepEqual(upstreamReads(emulator), ['list', "tab 'People'!1:10000", "POST 'People'!A52:append"]);
  assert.equal(emulator.sheet(spreadsheetId, 'People').rows[51][0].formattedValue, 'First');
  assert.equal(emulator.sheet(spreadsheetId, 'Orders').rows.length, 51, 'Orders untouched');
});

test('a tab of long texts counts its characters: once its one answer was abandoned, the next read does not try it again', async (t) => {
  const emulator = await startEmulator();
  t.after(() => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'Notes', rows: [['Note'], ['short']] }], access: { [TOKEN]: 'writer' } });
  // 30,000 cells and 2.4 MB (80 bytes a cell) at most in one answer here: 300 notes of 10,000 characters are 6 MB in 301 cells.
  const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret(TOKEN) }, freshnessMs: 60_000, maxAnswerCells: 30_000, maxAnswerBytes: 2_400_000 });
  t.after(() => source.close());
  emulator.resetRequests();
  await source.read();
  assert.deepEqual(upstreamReads(emulator), ['list', 'all'], 'a grid of 26,000 cells: one answer');
  const notes = Array.from({ length: 300 }, (_, n) => [`${n} ${'x'.repeat(10_000)}`]);
  const appended = await fetch(`${emulator.rootUrl}v4/spreadsheets/${spreadsheetId}/values/Notes!A1:append?valueInputOption=RAW&insertDataOption=INSERT_ROWS`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ values: notes }),
  });
  assert.equal(appended.status, 200);
  emulator.resetRequests();
  assert.equal((await source.read({ fresh: true })).tabs[0].rows.length, 302);
  assert.deepEqual(upstreamReads(emulator), ['all', 'list', "tab 'Notes'"], 'tried, abandoned past 2.4 MB, then the tab alone');
  emulator.resetRequests();
  await source.read({ fresh: true });
  assert.deepEqual(upstreamReads(emulator), ['list', "tab 'Notes'"], '3 million characters count as 75,000 more cells: no try');
});
