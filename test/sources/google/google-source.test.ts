// The Google source against the Sheets API emulator (tools/google-emulator): the source
// contract every source passes, then what only Google has: the freshness window and shared
// reads, no-cache, read-after-write, failures upstream (429, 5xx, a hang, no edit access, a
// deleted spreadsheet) and a read-only API key. Upstream requests are counted on the emulator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isApiError, type ErrorCode } from '../../../lib/errors.ts';
import { Secret } from '../../../server/config/config.ts';
import { startEmulator, type Emulator, type EmulatorCell } from '../../../tools/google-emulator/mod.ts';
import { Budgets, DEFAULT_RETRY, DEFAULT_TIMEOUT_MS, openGoogleSource, worstCaseMs, type GoogleSourceOptions } from '../../../server/sources/google/mod.ts';
import { columnLetters, deleteRequests, encodeValue, quoteSheetName } from '../../../server/sources/google/encode-plan.ts';
import { serialToIso } from '../../../server/sources/google/read-grid.ts';
import type { Source } from '../../../server/sources/source.ts';
import { appOver } from '../../helpers/app.ts';
import { appendPlan, dataOf, row, runSourceContract, type ContractFixture } from '../../helpers/source-contract.ts';

const WRITER = 'writer-token';
const READER = 'reader-token';
/** Waits of milliseconds instead of seconds, so the failure tests stay fast. */
const FAST_RETRY = { retries: 4, baseDelayMs: 2, maxDelayMs: 10, budgetMs: 5_000 };

const PEOPLE: EmulatorCell[][] = [
  ['Name', 'Age', 'Joined'],
  ['Ann', 30, { date: '2024-03-01' }],
  ['Bob', 41, { date: '2024-03-01 09:30:00' }],
];

function open(emulator: Emulator, spreadsheetId: string, options: Partial<GoogleSourceOptions> = {}) {
  return openGoogleSource({
    spreadsheetId,
    rootUrl: emulator.rootUrl,
    auth: { kind: 'accessToken', token: new Secret(WRITER) },
    retry: FAST_RETRY,
    timeoutMs: 2_000,
    ...options,
  });
}

function create(emulator: Emulator, rows: EmulatorCell[][] = PEOPLE, access: Record<string, 'writer' | 'reader'> = { [WRITER]: 'writer' }): string {
  return emulator.createSpreadsheet({ sheets: [{ title: 'People', rows }], access });
}

/** Upstream requests since the last reset, as `GET 200`. */
function upstream(emulator: Emulator): string[] {
  return emulator.requests.map((request) => `${request.method} ${request.status}`);
}

async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<unknown> {
  let caught: unknown;
  await assert.rejects(promise, (error: unknown) => {
    caught = error;
    return isApiError(error) && error.code === code;
  });
  return caught;
}

test('values are sent as a person would type them, so Google keeps their type', async (t) => {
  const cases: [Parameters<typeof encodeValue>[0], string, unknown][] = [
    ['Ann', 'Ann', "'Ann"],
    ['007', '007', "'007"],
    ['1e3', '1e3', "'1e3"],
    ['=A1', '=A1', "'=A1"],
    ["'quoted", "'quoted", "''quoted"],
    [42, '42', 42],
    [true, 'TRUE', true],
    [{ iso: '2024-03-01' }, '2024-03-01', '2024-03-01'],
    [{ iso: '2024-03-01T09:30:00' }, '2024-03-01 09:30:00', '2024-03-01 09:30:00'],
    [null, '', ''],
  ];
  for (const [value, text, sent] of cases) await t.test(JSON.stringify(value), () => assert.deepEqual(encodeValue(value, text), sent));
});

test('A1 names, row deletion and dates', async (t) => {
  await t.test('columns and quoted tab names', () => {
    assert.deepEqual([0, 25, 26, 701, 702].map(columnLetters), ['A', 'Z', 'AA', 'ZZ', 'AAA']);
    assert.equal(quoteSheetName("Bob's tab"), "'Bob''s tab'");
  });
  await t.test('removed rows go bottom-up, adjacent ones merged', () => {
    const ranges = deleteRequests(7, [1, 2, 3, 9, 5]).map(({ deleteDimension: { range } }) => [range.startIndex, range.endIndex]);
    assert.deepEqual(ranges, [[10, 11], [6, 7], [2, 5]]);
  });
  await t.test('serials count from 1899-12-30', () => {
    assert.equal(serialToIso(45352), '2024-03-01');
    assert.equal(serialToIso(45352.395833333336), '2024-03-01T09:30:00');
    assert.equal(serialToIso(0.5, true), '12:00:00');
    assert.equal(serialToIso(1), '1899-12-31');
  });
  await t.test('the retry bound the docs state', () => assert.equal(worstCaseMs(DEFAULT_RETRY, DEFAULT_TIMEOUT_MS), 28_000));
});

test('google source', async (t) => {
  const emulator = await startEmulator();
  t.after(() => emulator.close());

  await t.test('the source contract', async (t) => {
    await runSourceContract(t, {
      name: 'google (emulator)',
      async open(fixture: ContractFixture, { readOnly }) {
        const spreadsheetId = emulator.createSpreadsheet({
          sheets: fixture.tabs.map((tab) => ({ title: tab.name, rows: tab.rows.map((cells) => [...cells]) })),
          access: { [WRITER]: 'writer' },
        });
        return {
          source: await open(emulator, spreadsheetId, { readOnly }),
          reopen: () => open(emulator, spreadsheetId, { readOnly }),
          cleanup: async () => emulator.deleteSpreadsheet(spreadsheetId),
        };
      },
    });
  });

  await t.test('cells: text and typed values from one request, dates by their format', async () => {
    const id = create(emulator);
    const source = await open(emulator, id);
    emulator.resetRequests();
    const workbook = await source.read();
    assert.deepEqual(upstream(emulator), ['GET 200', 'GET 200'], 'the list (the grid sizes say the cells fit in one answer), then every cell');
    assert.deepEqual(dataOf(workbook), [
      [['Ann', '30', '2024-03-01'], ['Ann', 30, { iso: '2024-03-01' }]],
      [['Bob', '41', '2024-03-01 09:30:00'], ['Bob', 41, { iso: '2024-03-01T09:30:00' }]],
    ]);
    await source.close();
  });

  await t.test('reads within the freshness window cost nothing; 50 cold reads share one read (the list, then the cells)', async () => {
    const id = create(emulator);
    const source = await open(emulator, id, { freshnessMs: 60_000 });
    emulator.setLatency(30);
    emulator.resetRequests();
    const reads = await Promise.all(Array.from({ length: 50 }, () => source.read()));
    assert.deepEqual(upstream(emulator), ['GET 200', 'GET 200']);
    assert.ok(reads.every((workbook) => workbook === reads[0]));
    await source.read();
    assert.equal(emulator.requests.length, 2, 'a read within the window asks nothing upstream');
    emulator.setLatency(0);
    await source.close();
  });

  await t.test('past the window, and with no-cache, the next read asks again', async (t) => {
    const id = create(emulator);
    // The source's clock, moved by hand: the window is crossed when the test says, however slow the machine.
    // A budget of its own: the process's one holds other subtests' sends on the real clock.
    const clock = { now: 0 };
    const source = await open(emulator, id, { freshnessMs: 1_000, now: () => clock.now, budgets: new Budgets() });
    await source.read();
    emulator.resetRequests();
    await source.read({ fresh: true });
    assert.equal(emulator.requests.length, 1, 'read({ fresh: true }) asks upstream');
    clock.now = 999;
    await source.read();
    assert.equal(emulator.requests.length, 1, 'a read just inside the window asks nothing');
    clock.now = 1_000;
    await source.read();
    assert.equal(emulator.requests.length, 2, 'a read past the window asks upstream');
    const call = await appOver(t, source);
    emulator.resetRequests();
    assert.equal((await call('/sheets/crm')).status, 200);
    assert.equal(emulator.requests.length, 0, 'within the window again');
    assert.equal((await call('/sheets/crm', { headers: { 'Cache-Control': 'no-cache' } })).status, 200);
    assert.equal(emulator.requests.length, 1, 'Cache-Control: no-cache forces a read');
    await source.close();
  });

  await t.test('a read after a write sees it, without asking Google again', async (t) => {
    const id = create(emulator);
    const source = await open(emulator, id, { freshnessMs: 60_000 });
    const call = await appOver(t, source);
    await call('/sheets/crm');
    emulator.resetRequests();
    const posted = await call('/sheets/crm', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '[{"Name":"Cy","Age":"007"},{"Name":"Dee","Age":52}]' });
    assert.equal(posted.status, 201);
    assert.deepEqual(upstream(emulator), ['POST 200'], 'a POST is one values.append');
    const read = await call('/sheets/crm?_raw=1');
    assert.deepEqual((await read.json()).map((r: { Name: string }) => r.Name), ['Ann', 'Bob', 'Cy', 'Dee']);
    assert.equal(emulator.requests.length, 1, 'the read came from the snapshot');
    // What Google holds: "007" stayed text, 52 is a number.
    const again = await call('/sheets/crm/2:?_raw=1', { headers: { 'Cache-Control': 'no-cache' } });
    assert.deepEqual(await again.json(), [{ Name: 'Cy', Age: '007', Joined: null }, { Name: 'Dee', Age: 52, Joined: null }]);

    emulator.resetRequests();
    const patched = await call('/sheets/crm/Name/bob', { method: 'PATCH', headers: { 'Content-Type': 'application/json' }, body: '{"Age": 42}' });
    assert.equal(patched.status, 200);
    assert.deepEqual(upstream(emulator), ['GET 200', 'POST 200'], 'PATCH by match: a fresh read, one values.batchUpdate');
    emulator.resetRequests();
    const deleted = await call('/sheets/crm/Name/*e*', { method: 'DELETE' });
    assert.deepEqual((await deleted.json()).map((r: { Name: string }) => r.Name), ['Dee']);
    assert.deepEqual(upstream(emulator), ['GET 200', 'POST 200'], 'DELETE: a fresh read, one spreadsheets.batchUpdate');
    const after = await call('/sheets/crm');
    assert.deepEqual((await after.json()).map((r: { Name: string; Age: string }) => `${r.Name} ${r.Age}`), ['Ann 30', 'Bob 42', 'Cy 007']);
    assert.equal(emulator.requests.length, 2);
    const upstreamRows = await call('/sheets/crm', { headers: { 'Cache-Control': 'no-cache' } });
    assert.deepEqual((await upstreamRows.json()).map((r: { Name: string; Age: string }) => `${r.Name} ${r.Age}`), ['Ann 30', 'Bob 42', 'Cy 007']);
    await source.close();
  });

  await t.test('a 429 is retried, and the read then succeeds', async () => {
    const id = create(emulator);
    const source = await open(emulator, id);
    emulator.resetRequests();
    emulator.failNext({ status: 429, times: 1 });
    const workbook = await source.read();
    assert.equal(dataOf(workbook).length, 2);
    assert.deepEqual(upstream(emulator), ['GET 429', 'GET 200', 'GET 200'], 'the list retried, then the cells');
    await source.close();
  });

  await t.test('a run of 5xx ends in 503 upstream_unavailable with Retry-After', async (t) => {
    const id = create(emulator);
    const source = await open(emulator, id);
    const call = await appOver(t, source);
    emulator.resetRequests();
    emulator.failNext({ status: 503, times: 5 });
    const response = await call('/sheets/crm');
    assert.equal(response.status, 503);
    assert.equal((await response.json()).error, 'upstream_unavailable');
    assert.match(response.headers.get('retry-after') ?? '', /^\d+$/);
    assert.deepEqual(upstream(emulator), Array(5).fill('GET 503'), 'the first attempt and 4 retries');
    await source.close();
  });

  await t.test("Google's Retry-After is passed on once retries are spent", async () => {
    const id = create(emulator);
    const source = await open(emulator, id, { retry: { retries: 1, baseDelayMs: 1, maxDelayMs: 1, budgetMs: 5_000 } });
    emulator.failNext({ status: 429, times: 2, retryAfterSeconds: 7 });
    const error = await rejectsWith(source.read(), 'upstream_unavailable');
    assert.equal((error as { headers: Record<string, string> }).headers['Retry-After'], '7');
    await source.close();
  });

  await t.test('a hung upstream ends in 504 upstream_timeout', async (t) => {
    const id = create(emulator);
    const source = await open(emulator, id, { timeoutMs: 150 });
    const call = await appOver(t, source);
    emulator.hangNext({ times: 1 });
    const response = await call('/sheets/crm');
    assert.equal(response.status, 504, 'not retried: a second attempt would have been answered');
    const body = (await response.json()) as { error: string; message: string };
    assert.equal(body.error, 'upstream_timeout');
    // The connection's timeout, not the default (10 s), ended it; no elapsed time is measured, so a slow machine cannot fail this.
    assert.match(body.message, /within 0\.15 s/);
    assert.equal((await call('/sheets/crm')).status, 200, 'the next request goes through');
    await source.close();
  });

  await t.test('a viewer-only spreadsheet refuses writes with 403 write_error, nothing written', async (t) => {
    const id = create(emulator, PEOPLE, { [READER]: 'reader' });
    const source = await open(emulator, id, { auth: { kind: 'accessToken', token: new Secret(READER) } });
    const call = await appOver(t, source);
    assert.equal((await call('/sheets/crm')).status, 200, 'a reader reads');
    for (const [method, path, body] of [
      ['POST', '/sheets/crm', '{"Name":"Eve"}'],
      ['PATCH', '/sheets/crm/0', '{"Age":1}'],
      ['DELETE', '/sheets/crm/0', undefined],
    ] as const) {
      const response = await call(path, { method, headers: { 'Content-Type': 'application/json' }, body });
      assert.equal(response.status, 403, `${method} ${path}`);
      assert.equal((await response.json()).error, 'write_error');
    }
    const rows = await call('/sheets/crm', { headers: { 'Cache-Control': 'no-cache' } });
    assert.deepEqual((await rows.json()).map((r: { Name: string; Age: string }) => `${r.Name} ${r.Age}`), ['Ann 30', 'Bob 41'], 'nothing was written');
    await source.close();
  });

  await t.test('a deleted spreadsheet answers 404 not_found', async (t) => {
    const id = create(emulator);
    const source = await open(emulator, id);
    const call = await appOver(t, source);
    assert.equal((await call('/sheets/crm')).status, 200);
    emulator.deleteSpreadsheet(id);
    const response = await call('/sheets/crm', { headers: { 'Cache-Control': 'no-cache' } });
    assert.equal(response.status, 404);
    assert.equal((await response.json()).error, 'not_found');
    const write = await call('/sheets/crm', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Eve"}' });
    assert.equal(write.status, 404);
    await source.close();
  });

  await t.test('a missing tab is 404 tab_not_found naming the tabs', async (t) => {
    const id = create(emulator);
    const source = await open(emulator, id);
    const call = await appOver(t, source);
    const response = await call('/sheets/crm/tabs/Nope');
    assert.equal(response.status, 404);
    const body = await response.json();
    assert.equal(body.error, 'tab_not_found');
    assert.match(body.message, /People/);
    await source.close();
  });

  await t.test('an API key reads a public sheet and never writes', async (t) => {
    const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: PEOPLE }], access: {}, publicAccess: 'reader' });
    // A valid key with no role of its own: it reads because the sheet is public.
    emulator.grant(id, 'public-key', null);
    const source = await open(emulator, id, { auth: { kind: 'apiKey', key: new Secret('public-key') } });
    assert.equal(source.writable, false);
    const call = await appOver(t, source);
    const read = await call('/sheets/crm/0');
    assert.deepEqual(await read.json(), [{ Name: 'Ann', Age: '30', Joined: '2024-03-01' }]);
    emulator.resetRequests();
    const write = await call('/sheets/crm', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Name":"Eve"}' });
    assert.equal(write.status, 403);
    assert.equal((await write.json()).error, 'write_error');
    assert.equal(emulator.requests.length, 0, 'nothing was sent upstream');
    await source.close();
  });

  await t.test('rows appended by someone else meanwhile are kept, and the snapshot is dropped', async () => {
    const id = create(emulator);
    const source = await open(emulator, id, { freshnessMs: 60_000 });
    const other = await open(emulator, id, { freshnessMs: 60_000 });
    await source.read();
    await other.write((workbook) => ({ plan: appendPlan(workbook, [row('Zed', 1, 'x')]), workbook, result: null }));
    await source.write((workbook) => ({ plan: appendPlan(workbook, [row('Cy', 2, 'y')]), workbook, result: null }));
    const names = dataOf(await source.read()).map(([text]) => text[0]);
    assert.deepEqual(names, ['Ann', 'Bob', 'Zed', 'Cy']);
    await Promise.all([source.close(), other.close()]);
  });
});
