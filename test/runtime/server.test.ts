// sheetrest over real HTTP, in-process on 127.0.0.1:0 with the listener of the runtime running
// the test (node:http, Deno.serve or Bun.serve), over a temp copy of a generated workbook:
// `GET http://127.0.0.1:PORT/sheets/book/City/lisbon` -> the Lisbon rows, with their headers.
// The same file is the Deno and Bun smoke suite, so it stays fast and uses what all three share.
import assert from 'node:assert/strict';
import { readFile, rename, writeFile } from 'node:fs/promises';
import process from 'node:process';
import { test } from 'node:test';
import { configForFile, type FileModeOverrides } from '../../server/config/config.ts';
import { makeUnwritable } from '../helpers/file-source.ts';
import { RUNTIME, burst, getRows, patchJson, postJson, rawUpload, readBook, startServer, tally, tempDir, writeXlsx, type Cell, type TestContext } from '../helpers/http.ts';

const HEADER: Cell[] = ['Id', 'Name', 'Age', 'City'];
const SEED: Cell[][] = [HEADER, ['a1', 'Ann', 30, 'Lisbon'], ['b2', 'Bob', 41, 'Porto'], ['c3', 'Cid', 25, 'lisbon']];

/** A workbook `book.xlsx` (connection `book`) in a temp folder, served in-process. */
async function serveBook(t: TestContext, rows: readonly (readonly Cell[])[] = SEED, overrides: FileModeOverrides = {}) {
  const dir = await tempDir(t);
  const path = dir.path('book.xlsx');
  await writeXlsx(path, 'People', rows);
  const config = configForFile(path, { stateDir: dir.path('state'), ...overrides });
  const server = await startServer(t, config);
  return { ...server, config, path, dir, sheet: `${server.url}/sheets/book` };
}

async function errorCode(response: Response): Promise<string> {
  const body = (await response.json()) as { error: string; message: string };
  assert.equal(typeof body.message, 'string');
  return body.error;
}

test(`reads over the wire (${RUNTIME})`, async (t) => {
  const { url } = await serveBook(t);
  const cases: [string, RequestInit, { status: number; headers?: Record<string, string>; body?: unknown }][] = [
    ['GET /healthz', {}, { status: 200, body: { status: 'ok' } }],
    [
      'GET /sheets/book',
      {},
      {
        status: 200,
        headers: { 'x-sheet-rows': '3', 'x-sheet-columns': '4', 'x-total-count': '3', 'x-ratelimit-plan': 'unlimited', 'access-control-allow-origin': '*' },
        body: [
          { Id: 'a1', Name: 'Ann', Age: '30', City: 'Lisbon' },
          { Id: 'b2', Name: 'Bob', Age: '41', City: 'Porto' },
          { Id: 'c3', Name: 'Cid', Age: '25', City: 'lisbon' },
        ],
      },
    ],
    ['GET /sheets/book/City/LISBON', {}, { status: 200, headers: { 'x-total-count': '2' }, body: [{ Id: 'a1', Name: 'Ann', Age: '30', City: 'Lisbon' }, { Id: 'c3', Name: 'Cid', Age: '25', City: 'lisbon' }] }],
    ['GET /sheets/book/Name/*o*', {}, { status: 200, body: [{ Id: 'b2', Name: 'Bob', Age: '41', City: 'Porto' }] }],
    ['GET /sheets/book/query?Age=__gte(30)&_sort=-Age&_raw=1', {}, { status: 200, body: [{ Id: 'b2', Name: 'Bob', Age: 41, City: 'Porto' }, { Id: 'a1', Name: 'Ann', Age: 30, City: 'Lisbon' }] }],
    ['GET /sheets/book?_offset=1&_limit=1&_format=split', {}, { status: 200, headers: { 'x-total-count': '3' }, body: { index: ['1'], columns: ['Id', 'Name', 'Age', 'City'], data: [['b2', 'Bob', '41', 'Porto']] } }],
    ['GET /sheets/book/2', {}, { status: 200, body: [{ Id: 'c3', Name: 'Cid', Age: '25', City: 'lisbon' }] }],
    ['GET /sheets/book/tabs', {}, { status: 200, body: [{ name: 'People', rows: 3, columns: 4, visibility: 'visible', headerRow: 1 }] }],
    ['GET /sheets/book/tabs/People/0:1', {}, { status: 200, body: [{ Id: 'a1', Name: 'Ann', Age: '30', City: 'Lisbon' }] }],
    ['HEAD /sheets/book', { method: 'HEAD' }, { status: 200, headers: { 'x-sheet-rows': '3', 'x-total-count': '3' }, body: '' }],
    ['GET /sheets/book/9', {}, { status: 404, headers: { 'x-sheet-rows': '3' }, body: 'row_not_found' }],
    ['GET /sheets/book/query?Age=__near(3)', {}, { status: 400, body: 'invalid_operator' }],
    ['GET /sheets/nope', {}, { status: 404, body: 'not_found' }],
    ['DELETE /sheets/book', { method: 'DELETE' }, { status: 405, body: 'method_not_allowed' }],
    [
      'OPTIONS /sheets/book/0 (preflight)',
      { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'PATCH' } },
      { status: 204, headers: { 'access-control-allow-origin': '*' } },
    ],
  ];
  await t.test('HEAD never claims an empty body', async () => {
    const get = await fetch(url + '/sheets/book');
    const length = String((await get.arrayBuffer()).byteLength);
    const head = await fetch(url + '/sheets/book', { method: 'HEAD' });
    const claimed = head.headers.get('content-length');
    assert.ok(claimed === null || claimed === length, `HEAD Content-Length ${claimed}, GET body ${length} bytes`);
  });
  for (const [name, init, expected] of cases) {
    await t.test(name, async () => {
      const path = name.split(' ')[1];
      const response = await fetch(url + path, init);
      assert.equal(response.status, expected.status);
      for (const [header, value] of Object.entries(expected.headers ?? {})) assert.equal(response.headers.get(header), value, header);
      const text = await response.text();
      if (expected.status >= 400) {
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
        assert.equal((JSON.parse(text) as { error: string }).error, expected.body);
      } else if (typeof expected.body === 'string') {
        assert.equal(text, expected.body);
      } else if (expected.body !== undefined) {
        assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
        assert.deepEqual(JSON.parse(text), expected.body);
      }
    });
  }
  await t.test('the preflight allows the methods of the path and the headers the API reads', async () => {
    const response = await fetch(`${url}/sheets/book/0`, { method: 'OPTIONS', headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'PATCH' } });
    await response.body?.cancel();
    assert.match(response.headers.get('access-control-allow-methods') ?? '', /PATCH/);
    assert.match(response.headers.get('access-control-allow-headers') ?? '', /X-Api-Key/i);
  });
  await t.test('every header the API sends is exposed to browsers', async () => {
    const response = await fetch(`${url}/sheets/book`);
    await response.body?.cancel();
    const exposed = (response.headers.get('access-control-expose-headers') ?? '').toLowerCase();
    for (const header of ['x-sheet-rows', 'x-sheet-columns', 'x-total-count', 'x-ratelimit-plan']) assert.ok(exposed.includes(header), header);
  });
});

test(`POST then GET (${RUNTIME})`, async (t) => {
  const { sheet, close, path } = await serveBook(t);
  const posted = await postJson(sheet, { Id: 'd4', Name: 'Dee', Age: 52, City: 'Faro', Unknown: 'ignored' });
  assert.equal(posted.status, 201);
  assert.equal(posted.headers.get('x-sheet-rows'), '4');
  assert.deepEqual(await posted.json(), { Id: 'd4', Name: 'Dee', Age: '52', City: 'Faro' });

  const many = await postJson(sheet, [{ Id: 'e5', Name: 'Eve' }, { Id: 'f6', Name: 'Fay', City: 'Braga' }]);
  assert.equal(many.status, 201);
  assert.equal(many.headers.get('x-sheet-rows'), '6');
  assert.equal(((await many.json()) as unknown[]).length, 2);

  assert.deepEqual(await getRows(`${sheet}/Id/d4`), [{ Id: 'd4', Name: 'Dee', Age: '52', City: 'Faro' }]);
  assert.deepEqual((await getRows(sheet)).map((row) => row.Id), ['a1', 'b2', 'c3', 'd4', 'e5', 'f6']);

  const bad = await fetch(sheet, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"Id": ' });
  assert.equal(bad.status, 400);
  assert.equal(await errorCode(bad), 'invalid_json');

  await close();
  const onDisk = (await readBook(path)).People;
  assert.deepEqual(onDisk.map((row) => row[0]), ['Id', 'a1', 'b2', 'c3', 'd4', 'e5', 'f6']);
  assert.deepEqual(onDisk[4], ['d4', 'Dee', '52', 'Faro']);
});

test(`200 parallel POSTs give 200 rows, each once (${RUNTIME})`, async (t) => {
  const { sheet, close, path } = await serveBook(t);
  const ids = Array.from({ length: 200 }, (_, i) => `par-${i}`);
  const statuses = await Promise.all(
    ids.map(async (id, i) => {
      const response = await postJson(sheet, { Id: id, Name: `n${i}`, Age: i });
      const body = (await response.json()) as Record<string, string>;
      assert.equal(body.Id, id, 'each answer is its own row');
      return response.status;
    }),
  );
  assert.deepEqual(tally(statuses.map(String)), new Map([['201', 200]]));

  const rows = await getRows(sheet);
  assert.equal(rows.length, 203);
  const counts = tally(rows.map((row) => row.Id));
  for (const id of ids) assert.equal(counts.get(id), 1, id);
  // Each row keeps its own values together: no write interleaved with another.
  for (const row of rows.slice(3)) assert.equal(row.Name, `n${row.Age}`);

  await close();
  const onDisk = (await readBook(path)).People.slice(1).map((row) => row[0]);
  assert.equal(onDisk.length, 203);
  assert.deepEqual(new Set(onDisk), new Set(['a1', 'b2', 'c3', ...ids]));
});

test(`50 parallel PATCHes by index land on their own rows (${RUNTIME})`, async (t) => {
  const rows: Cell[][] = [HEADER, ...Array.from({ length: 50 }, (_, i): Cell[] => [`r${i}`, `before-${i}`, i, 'X'])];
  const { sheet } = await serveBook(t, rows);
  const answers = await Promise.all(
    Array.from({ length: 50 }, async (_, i) => {
      const response = await patchJson(`${sheet}/${i}`, { Name: `after-${i}` });
      return { i, status: response.status, body: (await response.json()) as Record<string, string>[] };
    }),
  );
  for (const { i, status, body } of answers) {
    assert.equal(status, 200);
    assert.deepEqual(body, [{ Id: `r${i}`, Name: `after-${i}`, Age: String(i), City: 'X' }]);
  }
  const after = await getRows(sheet);
  assert.equal(after.length, 50);
  after.forEach((row, i) => assert.deepEqual(row, { Id: `r${i}`, Name: `after-${i}`, Age: String(i), City: 'X' }));
});

test(`a workbook rewritten behind the server's back is read, then written, keeping both (${RUNTIME})`, async (t) => {
  const { sheet, close, path, dir } = await serveBook(t);
  assert.equal((await getRows(sheet)).length, 3);

  // As a spreadsheet program saves: a new file renamed over the old one.
  const edited: Cell[][] = [HEADER, ['a1', 'Ann', 31, 'Berlin'], ['b2', 'Bob', 41, 'Porto'], ['c3', 'Cid', 25, 'lisbon'], ['x9', 'Xena', 60, 'Oslo']];
  await writeXlsx(dir.path('saved-elsewhere.xlsx'), 'People', edited);
  await rename(dir.path('saved-elsewhere.xlsx'), path);

  // no-cache: look at the file now rather than when the folder watcher reports the save.
  const seen = (await (await fetch(sheet, { headers: { 'Cache-Control': 'no-cache' } })).json()) as Record<string, string>[];
  assert.deepEqual(seen.map((row) => `${row.Id}:${row.City}`), ['a1:Berlin', 'b2:Porto', 'c3:lisbon', 'x9:Oslo']);

  const posted = await postJson(sheet, { Id: 'n1', Name: 'New', City: 'Rome' });
  assert.equal(posted.status, 201);
  assert.equal(posted.headers.get('x-sheet-rows'), '5');
  assert.deepEqual((await getRows(sheet)).map((row) => `${row.Id}:${row.City}`), ['a1:Berlin', 'b2:Porto', 'c3:lisbon', 'x9:Oslo', 'n1:Rome']);

  await close();
  const onDisk = (await readBook(path)).People;
  assert.deepEqual(onDisk.map((row) => `${row[0]}:${row[3]}`), ['Id:City', 'a1:Berlin', 'b2:Porto', 'c3:lisbon', 'x9:Oslo', 'n1:Rome']);
  assert.equal(onDisk[1][2], '31');
});

test(`quota counts survive a restart (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const path = dir.path('book.xlsx');
  await writeXlsx(path, 'People', SEED);
  const config = configForFile(path, { stateDir: dir.path('state'), plan: { name: 'tiny', monthlyRequests: 6 } });
  const remaining = async (url: string, init: RequestInit = {}) => {
    const response = await fetch(`${url}/sheets/book`, init);
    await response.body?.cancel();
    return [response.status, response.headers.get('x-ratelimit-remaining'), response.headers.get('x-ratelimit-plan')];
  };

  const first = await startServer(t, config);
  assert.deepEqual(await remaining(first.url), [200, '5', 'tiny']);
  assert.deepEqual(await remaining(first.url), [200, '4', 'tiny']);
  // A write counts as well, whatever its outcome.
  assert.deepEqual(await remaining(first.url, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{' }), [400, '3', 'tiny']);
  await first.close();

  const second = await startServer(t, config);
  assert.deepEqual(await remaining(second.url), [200, '2', 'tiny']);
  assert.deepEqual(await remaining(second.url), [200, '1', 'tiny']);
  await second.close();

  const third = await startServer(t, config);
  assert.deepEqual(await remaining(third.url), [200, '0', 'tiny']);
  const refused = await fetch(`${third.url}/sheets/book`);
  assert.equal(refused.status, 402);
  assert.equal(await errorCode(refused), 'throttle');
});

test(`a body far over the cap is refused while it streams in (${RUNTIME})`, async (t) => {
  const { url, sheet, close } = await serveBook(t);
  const maxBytes = 64 * 1024 * 1024;
  const cases: [string, Record<string, string>][] = [
    ['Content-Length: 2 GiB', { 'Content-Type': 'application/json', 'Content-Length': String(2 * 1024 ** 3) }],
    ['Transfer-Encoding: chunked, no length', { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }],
  ];
  for (const [name, headers] of cases) {
    await t.test(name, async () => {
      const upload = await rawUpload(url, '/sheets/book', headers, { maxBytes, timeoutMs: 15_000 });
      assert.equal(upload.status, 413, `answer: ${JSON.stringify(upload.response.slice(0, 300))}, ${upload.writtenBeforeAnswer} bytes written in ${Math.round(upload.ms)} ms`);
      assert.match(upload.response, /"error":"payload_too_large"/);
      // The answer came at the cap, long before the client's 64 MiB limit: nothing near 2 GiB was read.
      assert.ok(upload.writtenBeforeAnswer < maxBytes, `${upload.writtenBeforeAnswer} bytes written before the answer`);
    });
  }
  await t.test('nothing was written and the server still answers', async () => {
    assert.equal((await getRows(sheet)).length, 3);
  });
  await t.test('the refused uploads do not hold up close()', async () => {
    // node:http would otherwise keep each connection, its body unread, until keep-alive times out (5 s).
    const started = performance.now();
    await close();
    assert.ok(performance.now() - started < 2000, `closed in ${Math.round(performance.now() - started)} ms`);
  });
});


test(`a file that cannot be written refuses writes with 403 and keeps serving reads (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const path = dir.path('book.xlsx');
  await writeXlsx(path, 'People', SEED);
  const restore = await makeUnwritable(path);
  try {
    const { url, close } = await startServer(t, configForFile(path, { stateDir: dir.path('state') }));
    const posted = await postJson(`${url}/sheets/book`, { Id: 'z', Name: 'Zed' });
    assert.equal(posted.status, 403);
    assert.equal(await errorCode(posted), 'write_error');
    const patched = await patchJson(`${url}/sheets/book/0`, { Name: 'Zed' });
    assert.equal(patched.status, 403);
    assert.equal(await errorCode(patched), 'write_error');
    const read = await fetch(`${url}/sheets/book`);
    assert.equal(read.status, 200);
    assert.equal(((await read.json()) as unknown[]).length, 3);
    await close();
  } finally {
    await restore();
  }
  assert.equal((await readBook(path)).People.length, 4);
});

test(`a .csv file: exact fields in, valid CSV out (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const path = dir.path('people.csv');
  await writeFile(path, 'Id,Name,Note\r\n007,Ann,"one, two"\r\n');
  const { url, close } = await startServer(t, configForFile(path, { stateDir: dir.path('state') }));
  const sheet = `${url}/sheets/people`;
  assert.deepEqual(await getRows(sheet), [{ Id: '007', Name: 'Ann', Note: 'one, two' }]);
  const posted = await postJson(sheet, { Id: 8, Name: 'Zoë', Note: 'say "hi",\nthen go' });
  assert.equal(posted.status, 201);
  assert.deepEqual(await getRows(`${url}/sheets/people/tabs/people`), [
    { Id: '007', Name: 'Ann', Note: 'one, two' },
    { Id: '8', Name: 'Zoë', Note: 'say "hi",\nthen go' },
  ]);
  await close();
  assert.equal(await readFile(path, 'utf8'), 'Id,Name,Note\r\n007,Ann,"one, two"\r\n8,Zoë,"say ""hi"",\nthen go"\r\n');
});

test(`close() finishes the writes in flight and flushes them to the file (${RUNTIME})`, async (t) => {
  const { sheet, close, path } = await serveBook(t);
  const acknowledged: string[] = [];
  const unanswered: string[] = [];
  let closing: Promise<void> | undefined;
  let closeCalled = 0;
  await burst(80, 16, async (i) => {
    const id = `g${i}`;
    try {
      const response = await postJson(sheet, { Id: id, Name: 'graceful' });
      await response.body?.cancel();
      if (response.status === 201) acknowledged.push(id);
      else assert.equal(response.status, 403, 'a write refused during shutdown says so');
    } catch (error) {
      if (error instanceof assert.AssertionError) throw error;
      // refused at the door once the server stopped accepting: not acknowledged
      unanswered.push(id);
    }
    // Close with writes still in flight: the other workers are mid-request.
    if (acknowledged.length >= 30 && closing === undefined) {
      closeCalled = performance.now();
      closing = close();
    }
  }, () => closing !== undefined);
  await closing;
  // Keep-alive connections left open by the burst must not hold up the stop.
  assert.ok(performance.now() - closeCalled < 2000, `closed in ${Math.round(performance.now() - closeCalled)} ms`);
  assert.ok(acknowledged.length >= 30);
  const onDisk = tally((await readBook(path)).People.slice(1).map((row) => row[0]));
  for (const id of acknowledged) assert.equal(onDisk.get(id), 1, id);
  for (const [id, count] of onDisk) assert.equal(count, 1, id);
  assert.deepEqual(unanswered.filter((id) => onDisk.has(id)), [], 'no write landed without its answer');
});

test(`limits.textIndexBytes reaches every connection's engine (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const path = dir.path('book.xlsx');
  await writeXlsx(path, 'People', SEED);
  const config = configForFile(path, { stateDir: dir.path('state') });
  const cases: [number | undefined, number][] = [[undefined, 64 * 1024 * 1024], [0, 0], [1024, 1024]];
  for (const [given, expected] of cases) {
    const limits = { ...config.limits, ...(given === undefined ? {} : { textIndexBytes: given }) };
    const { running, close } = await startServer(t, { ...config, limits });
    assert.equal(running.connections[0].engine.textIndexBytes, expected, `textIndexBytes ${given}`);
    // The search answers the same whatever the cap.
    assert.deepEqual((await getRows(`${running.url}/sheets/book/Name/*o*`)).map((row) => row.Id), ['b2']);
    await close();
  }
});
