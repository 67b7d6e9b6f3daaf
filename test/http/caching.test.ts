// HTTP caching and safe concurrent writes over real HTTP, on the runtime running the test:
// `GET` -> 200 with a strong ETag, `Cache-Control` and `Last-Modified`; the same `GET` with
// `If-None-Match` -> 304 with no body and the same ETag, tab and quota headers (and the 304
// counted against the monthly quota); a write -> the tab's new ETag; `If-Match` with a stale
// ETag -> 412 and nothing written; two clients racing with the same `If-Match` -> one 200, one 412.
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { configForFile, loadConfig, type FileModeOverrides } from '../../server/config/config.ts';
import { startEmulator } from '../../tools/google-emulator/mod.ts';
import { Secret } from '../../server/config/config.ts';
import { openGoogleSource } from '../../server/sources/google/mod.ts';
import { appOver } from '../helpers/app.ts';
import { RUNTIME, defer, getRows, spawnServer, startServer, tempDir, writeXlsx, type Cell, type TestContext } from '../helpers/http.ts';

const SEED: Cell[][] = [['Name', 'Team'], ['Ann', 'red'], ['Bob', 'blue'], ['Cara', 'red']];

async function serveBook(t: TestContext, overrides: FileModeOverrides = {}) {
  const dir = await tempDir(t);
  const path = dir.path('book.xlsx');
  await writeXlsx(path, 'People', SEED);
  const server = await startServer(t, configForFile(path, { stateDir: dir.path('state'), ...overrides }));
  return { ...server, path, base: `${server.url}/sheets/book` };
}

function json(body: unknown, init: RequestInit = {}): RequestInit {
  return { ...init, body: JSON.stringify(body), headers: { 'Content-Type': 'application/json', ...(init.headers as Record<string, string>) } };
}

test(`reads carry a strong ETag; If-None-Match answers 304 with the same headers and no body (${RUNTIME})`, async (t) => {
  const { base } = await serveBook(t, { plan: { name: 'small', monthlyRequests: 100 } });

  const first = await fetch(`${base}/Team/red`);
  assert.equal(first.status, 200);
  const tag = first.headers.get('etag');
  assert.match(tag ?? '', /^"t[0-9a-f]{16}-[0-9a-f]{16}"$/);
  assert.equal(first.headers.get('cache-control'), 'no-cache');
  assert.ok(Date.parse(first.headers.get('last-modified') ?? '') > 0, 'Last-Modified is an HTTP date');
  assert.equal(first.headers.get('vary'), null, 'an open connection with CORS "*" varies on nothing');
  assert.equal((await first.json()).length, 2);
  const remainingAfterFirst = Number(first.headers.get('x-ratelimit-remaining'));

  await t.test('the same read again: the same ETag', async () => {
    const again = await fetch(`${base}/Team/red`);
    assert.equal(again.headers.get('etag'), tag);
    assert.equal((await again.json()).length, 2);
  });

  for (const [name, header] of [['the tag', tag], ['a list holding it', `"nope", ${tag}`], ['the weak form', `W/${tag}`], ['*', '*']] as const) {
    await t.test(`If-None-Match: ${name} -> 304`, async () => {
      for (const method of ['GET', 'HEAD']) {
        const answer = await fetch(`${base}/Team/red`, { method, headers: { 'If-None-Match': header ?? '' } });
        assert.equal(answer.status, 304, method);
        assert.equal(await answer.text(), '');
        assert.equal(answer.headers.get('etag'), tag);
        assert.equal(answer.headers.get('x-sheet-rows'), '3');
        assert.equal(answer.headers.get('x-sheet-columns'), '2');
        assert.equal(answer.headers.get('cache-control'), 'no-cache');
        assert.ok(answer.headers.get('x-ratelimit-remaining') !== null, 'quota headers on a 304');
        assert.equal(answer.headers.get('x-ratelimit-limit'), '100');
      }
    });
  }

  await t.test('a 304 counts against the monthly quota, as every request does', async () => {
    const before = Number((await fetch(`${base}/Team/red`, { headers: { 'If-None-Match': tag ?? '' } })).headers.get('x-ratelimit-remaining'));
    const after = Number((await fetch(`${base}/Team/red`, { headers: { 'If-None-Match': tag ?? '' } })).headers.get('x-ratelimit-remaining'));
    assert.equal(after, before - 1);
    assert.ok(before < remainingAfterFirst);
  });

  await t.test('another request with this tag: 200 and its own tag', async () => {
    const other = await fetch(`${base}/Team/blue`, { headers: { 'If-None-Match': tag ?? '' } });
    assert.equal(other.status, 200);
    assert.notEqual(other.headers.get('etag'), tag);
    assert.deepEqual(await other.json(), [{ Name: 'Bob', Team: 'blue' }]);
  });

  await t.test('after a write the old tag reads 200 with the new rows; the write answered the new tab tag', async () => {
    const posted = await fetch(base, json({ Name: 'Dan', Team: 'red' }, { method: 'POST' }));
    assert.equal(posted.status, 201);
    assert.equal(posted.headers.get('cache-control'), 'no-store');
    const written = posted.headers.get('etag');
    assert.match(written ?? '', /^"t/);
    const reread = await fetch(`${base}/Team/red`, { headers: { 'If-None-Match': tag ?? '' } });
    assert.equal(reread.status, 200);
    assert.deepEqual((await reread.json()).map((row: { Name: string }) => row.Name), ['Ann', 'Cara', 'Dan']);
    assert.notEqual(reread.headers.get('etag'), tag);
    const whole = await fetch(base);
    assert.equal(whole.headers.get('etag'), written, "the POST's ETag is what a GET of the tab answers");
    await whole.body?.cancel();
  });

  await t.test('errors are never stored by a cache', async () => {
    const missing = await fetch(`${base}/Nope/x`);
    assert.equal(missing.status, 400);
    assert.equal(missing.headers.get('cache-control'), 'no-store');
    assert.equal(missing.headers.get('etag'), null);
    await missing.body?.cancel();
  });
});

test(`a kept 304, HEAD and 200, sent again and again, carry all their headers every time (${RUNTIME})`, async (t) => {
  // An open connection, an unlimited plan and CORS "*": the answer goes out as the same object
  // each time, and Deno returns the very Response it sent before (server/runtime/deno.ts). Bun empties a
  // Response's headers once it has sent it: this fails there if the same Response is sent again.
  // A kept 200 is a clone each time: on Deno, a kept Response whose body had been asked for went
  // out chunked, without its Content-Length, from the third time on.
  const { base } = await serveBook(t);
  const url = `${base}/Team/red`;
  const tag = (await fetch(url)).headers.get('etag') ?? '';
  const sent = (answer: Response) => [...answer.headers].filter(([name]) => name !== 'date').map(([name, value]) => `${name}: ${value}`).join('\n');
  for (const [method, headers, status] of [['GET', { 'If-None-Match': tag }, 304], ['HEAD', {}, 200], ['GET', {}, 200]] as const) {
    const first = await fetch(url, { method, headers });
    assert.equal(first.status, status, method);
    const expected = sent(first);
    assert.match(expected, /^etag: "/m, method);
    assert.match(expected, /^x-ratelimit-plan: unlimited$/m, method);
    assert.match(expected, /^access-control-allow-origin: \*$/m, method);
    const body = await first.text();
    if (method === 'GET' && status === 200) assert.match(expected, /^content-length: \d+$/m);
    const one = async () => {
      const answer = await fetch(url, { method, headers });
      return [answer.status, sent(answer), await answer.text()];
    };
    const inTurn: unknown[] = [];
    for (let i = 0; i < 20; i++) inTurn.push(await one());
    const atOnce = await Promise.all(Array.from({ length: 20 }, one));
    for (const [n, got] of [...inTurn, ...atOnce].entries()) assert.deepEqual(got, [status, expected, body], `${method} ${status}, answer ${n + 2}`);
  }
});

test(`Cache-Control and Vary follow the connection: keys make it private, CORS lists vary on Origin (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', SEED);
  await writeFile(
    dir.path('sheetrest.json'),
    JSON.stringify({
      stateDir: 'state',
      cors: { origins: ['https://app.example'] },
      connections: [
        { id: 'open', source: { type: 'file', path: 'book.xlsx' }, readOnly: true },
        { id: 'cdn', source: { type: 'file', path: 'book.xlsx' }, readOnly: true, cacheControl: { maxAge: 60, staleWhileRevalidate: 30 } },
        { id: 'keyed', source: { type: 'file', path: 'book.xlsx' }, readOnly: true, keys: [{ key: 'k-secret' }], cacheControl: { maxAge: 5 } },
        { id: 'keyedDefault', source: { type: 'file', path: 'book.xlsx' }, readOnly: true, keys: [{ key: 'k-secret' }] },
      ],
    }),
  );
  const { url } = await startServer(t, await loadConfig(dir.path('sheetrest.json')));
  const cases = [
    ['open', 'no-cache', 'Origin'],
    ['cdn', 'public, max-age=60, stale-while-revalidate=30', 'Origin'],
    ['keyed', 'private, max-age=5', 'Origin, X-Api-Key'],
    ['keyedDefault', 'private, no-cache', 'Origin, X-Api-Key'],
  ] as const;
  for (const [id, cacheControl, vary] of cases) {
    await t.test(id, async () => {
      const answer = await fetch(`${url}/sheets/${id}`, { headers: { 'X-Api-Key': 'k-secret', Origin: 'https://app.example' } });
      assert.equal(answer.status, 200);
      assert.equal(answer.headers.get('cache-control'), cacheControl);
      assert.equal(answer.headers.get('vary'), vary);
      const revalidated = await fetch(`${url}/sheets/${id}`, { headers: { 'X-Api-Key': 'k-secret', 'If-None-Match': answer.headers.get('etag') ?? '' } });
      assert.equal(revalidated.status, 304);
      assert.equal(revalidated.headers.get('cache-control'), cacheControl);
      await answer.body?.cancel();
    });
  }
});

test(`kept answers never outlive the rows they were built from (${RUNTIME})`, async (t) => {
  const { base, path } = await serveBook(t);
  const reds = async () => (await getRows(`${base}/Team/red`)).map((row) => row.Name);
  assert.deepEqual(await reds(), ['Ann', 'Cara']);
  assert.deepEqual(await reds(), ['Ann', 'Cara']);

  await t.test('a write through the server', async () => {
    const patched = await fetch(`${base}/Name/Bob`, json({ Team: 'red' }, { method: 'PATCH' }));
    assert.equal(patched.status, 200);
    assert.deepEqual(await reds(), ['Ann', 'Bob', 'Cara']);
  });

  await t.test('a save made outside the server', async () => {
    await writeXlsx(path, 'People', [['Name', 'Team'], ['Zed', 'red']]);
    // The file watcher or the next periodic look sees it; no-cache asks the file at once.
    const fresh = await fetch(`${base}/Team/red`, { headers: { 'Cache-Control': 'no-cache' } });
    assert.deepEqual((await fresh.json()).map((row: { Name: string }) => row.Name), ['Zed']);
    assert.deepEqual(await reds(), ['Zed']);
  });
});

test(`If-Match: a stale ETag is 412 and writes nothing; the current one applies (${RUNTIME})`, async (t) => {
  const { base } = await serveBook(t);
  const read = await fetch(`${base}/1`);
  const rowTag = read.headers.get('etag') ?? '';
  assert.match(rowTag, /^"r/);
  await read.body?.cancel();

  const applied = await fetch(`${base}/1`, json({ Team: 'green' }, { method: 'PATCH', headers: { 'If-Match': rowTag } }));
  assert.equal(applied.status, 200);
  const newTag = applied.headers.get('etag');
  assert.notEqual(newTag, rowTag);

  for (const method of ['PATCH', 'PUT', 'DELETE']) {
    await t.test(`${method} with the stale tag`, async () => {
      const refused = await fetch(`${base}/1`, method === 'DELETE' ? { method, headers: { 'If-Match': rowTag } } : json({ Name: 'X', Team: 'x' }, { method, headers: { 'If-Match': rowTag } }));
      assert.equal(refused.status, 412);
      const body = await refused.json();
      assert.equal(body.error, 'precondition_failed');
      assert.match(body.message, /read it again/);
    });
  }
  await t.test('nothing was written: row 1 is as the applied PATCH left it, and no row went', async () => {
    assert.deepEqual(await getRows(base), [{ Name: 'Ann', Team: 'red' }, { Name: 'Bob', Team: 'green' }, { Name: 'Cara', Team: 'red' }]);
  });
  await t.test('the ETag the PATCH answered still applies', async () => {
    const again = await fetch(`${base}/1`, json({ Team: 'blue' }, { method: 'PATCH', headers: { 'If-Match': newTag ?? '' } }));
    assert.equal(again.status, 200);
  });
});

test(`two clients PATCH the same row with the same If-Match: exactly one 200 and one 412 (${RUNTIME}, a server process)`, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', SEED);
  const server = await spawnServer(t, [dir.path('book.xlsx'), '--state-dir', dir.path('state')]);
  const base = `${server.url}/sheets/book`;
  for (let round = 0; round < 10; round++) {
    const read = await fetch(`${base}/0`);
    const tag = read.headers.get('etag') ?? '';
    await read.body?.cancel();
    const answers = await Promise.all(
      ['a', 'b'].map((client) => fetch(`${base}/0`, json({ Team: `${client}${round}` }, { method: 'PATCH', headers: { 'If-Match': tag } }))),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    assert.deepEqual(statuses, [200, 412], `round ${round}`);
    const winner = answers.findIndex((answer) => answer.status === 200);
    const [row] = await getRows(`${base}/0`);
    assert.equal(row.Team, `${winner === 0 ? 'a' : 'b'}${round}`, 'the row holds the one write that was applied');
    await Promise.all(answers.map((answer) => answer.body?.cancel()));
  }
});

test(`a Google source answers the same ETags, 304 and 412 (${RUNTIME})`, async (t) => {
  const emulator = await startEmulator();
  defer(t, () => emulator.close());
  const spreadsheetId = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: SEED.map((row) => [...row]) }], access: { writer: 'writer' } });
  const source = await openGoogleSource({ spreadsheetId, rootUrl: emulator.rootUrl, auth: { kind: 'accessToken', token: new Secret('writer') }, timeoutMs: 2_000 });
  defer(t, () => source.close());
  const app = await appOver(t, source, { id: 'g' });
  const call = (path: string, init: RequestInit = {}) => app(`/sheets/g${path}`, init);

  const read = await call('/Team/red');
  const tag = read.headers.get('etag') ?? '';
  assert.equal(read.status, 200);
  assert.equal(read.headers.get('last-modified'), null, 'the Sheets API does not say when a sheet changed');
  assert.equal((await call('/Team/red', { headers: { 'If-None-Match': tag } })).status, 304);

  const written = await call('/0', json({ Team: 'green' }, { method: 'PATCH', headers: { 'If-Match': tag } }));
  assert.equal(written.status, 200);
  const requestsBefore = emulator.requests.length;
  const refused = await call('/1', json({ Team: 'green' }, { method: 'PATCH', headers: { 'If-Match': tag } }));
  assert.equal(refused.status, 412);
  assert.equal((await refused.json()).error, 'precondition_failed');
  assert.ok(
    emulator.requests.slice(requestsBefore).every((request) => request.method === 'GET'),
    'a refused write sends Google nothing but reads',
  );
  const rows = await (await call('', { headers: { 'Cache-Control': 'no-cache' } })).json();
  assert.deepEqual(rows.map((row: { Team: string }) => row.Team), ['green', 'blue', 'red']);
});
