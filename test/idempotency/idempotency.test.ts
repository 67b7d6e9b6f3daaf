// Idempotency-Key on POST, PATCH, PUT and DELETE: in-process over a memory source (what is
// replayed, refused and kept), then over real HTTP on the file source (a restart, a crash that
// leaves the key only in the journal, a fold) and the Google source (the Sheets emulator).
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Workbook } from '../../lib/workbook.ts';
import { apiError } from '../../lib/errors.ts';
import { createApp } from '../../server/http/app.ts';
import type { Connection } from '../../server/connections.ts';
import { digestKey } from '../../server/auth.ts';
import { configForFile, Secret, type Config } from '../../server/config/config.ts';
import { startEmulator } from '../../tools/google-emulator/mod.ts';
import { KeyStore } from '../../server/idempotency/file-store.ts';
import { receiptLine } from '../../server/idempotency/receipt-lines.ts';
import { createLogger } from '../../server/log.ts';
import { openFileSource } from '../../server/sources/file/mod.ts';
import { memorySource } from '../../server/sources/memory.ts';
import type { Source } from '../../server/sources/source.ts';
import { getRows, RUNTIME, startServer, tempDir, writeXlsx, type TestContext } from '../helpers/http.ts';

function people(): Workbook {
  const row = (...cells: (string | number)[]) => ({ text: cells.map(String), value: cells });
  return { tabs: [{ name: 'People', rows: [row('Name', 'Age'), row('Ann', 30), row('Bob', 41)] }] };
}

const NO_QUOTA = { take: () => ({ allowed: true, headers: { 'X-RateLimit-Remaining': 'unlimited' } }), peek: () => ({ 'X-RateLimit-Remaining': 'unlimited' }) };

function appOver(source: Source, extra: Partial<Connection> = {}) {
  const connection: Connection = { id: 'demo', source, keys: [], readOnly: false, engine: {}, ...extra };
  const app = createApp({ connections: [connection], quota: NO_QUOTA, bodyBytes: 1024 * 1024, cors: '*', log: createLogger('silent') });
  return (method: string, path: string, init: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    if (init.key !== undefined) headers['Idempotency-Key'] = init.key;
    if (init.body !== undefined) headers['Content-Type'] = 'application/json';
    const body = init.body === undefined ? undefined : JSON.stringify(init.body);
    return app.fetch(new Request(`http://x${path}`, { method, headers, body }));
  };
}

interface Seen {
  readonly status: number;
  readonly replayed: string | null;
  readonly body: string;
}

async function seen(response: Response | Promise<Response>): Promise<Seen> {
  const answer = await response;
  return { status: answer.status, replayed: answer.headers.get('idempotent-replayed'), body: await answer.text() };
}

function names(source: { workbook: Workbook }): string[] {
  return source.workbook.tabs[0].rows.slice(1).map((row) => String(row.text[0]));
}

test('a retry with the same key and request gets the stored answer and writes nothing', async (t) => {
  const cases: { name: string; method: string; path: string; body?: unknown; status: number; after: string[] }[] = [
    { name: 'POST a row', method: 'POST', path: '/sheets/demo', body: { Name: 'Cy', Age: 25 }, status: 201, after: ['Ann', 'Bob', 'Cy'] },
    { name: 'POST rows', method: 'POST', path: '/sheets/demo', body: [{ Name: 'Cy' }, { Name: 'Di' }], status: 201, after: ['Ann', 'Bob', 'Cy', 'Di'] },
    { name: 'PATCH a row by value', method: 'PATCH', path: '/sheets/demo/Name/Ann', body: { Age: 31 }, status: 200, after: ['Ann', 'Bob'] },
    { name: 'PUT a row by index', method: 'PUT', path: '/sheets/demo/1', body: { Name: 'Bo' }, status: 200, after: ['Ann', 'Bo'] },
    { name: 'DELETE a row', method: 'DELETE', path: '/sheets/demo/Name/Bob', status: 200, after: ['Ann'] },
  ];
  for (const { name, method, path, body, status, after } of cases) {
    await t.test(name, async () => {
      const source = memorySource(people());
      const call = appOver(source);
      const first = await seen(call(method, path, { key: 'key-1', body }));
      assert.equal(first.status, status, first.body);
      assert.equal(first.replayed, null);
      const written = source.workbook;
      // The retry: same status and body, marked replayed, and the workbook is the very same object.
      const retry = await seen(call(method, path, { key: 'key-1', body }));
      assert.deepEqual(retry, { ...first, replayed: 'true' });
      assert.equal(source.workbook, written);
      assert.deepEqual(names(source), after);
    });
  }
});

test('a replay carries the answer\'s headers and the shell\'s headers of its own request', async () => {
  const call = appOver(memorySource(people()));
  const first = await call('POST', '/sheets/demo', { key: 'k', body: { Name: 'Cy' } });
  const retry = await call('POST', '/sheets/demo', { key: 'k', body: { Name: 'Cy' } });
  for (const header of ['content-type', 'x-sheet-rows', 'x-sheet-columns', 'x-ratelimit-remaining', 'access-control-allow-origin']) {
    assert.equal(retry.headers.get(header), first.headers.get(header), header);
  }
  assert.match(retry.headers.get('access-control-expose-headers') ?? '', /Idempotent-Replayed/);
});

test('the same key with another request is 422 idempotency_key_reused, and nothing is written', async (t) => {
  const cases: [string, string, string, unknown][] = [
    ['another body', 'POST', '/sheets/demo', { Name: 'Dan' }],
    ['another path (the tab named)', 'POST', '/sheets/demo/tabs/People', { Name: 'Cy' }],
    ['another query', 'POST', '/sheets/demo?_raw=1', { Name: 'Cy' }],
    ['another method', 'PATCH', '/sheets/demo/Name/Cy', { Name: 'Cy' }],
  ];
  for (const [name, method, path, body] of cases) {
    await t.test(name, async () => {
      const source = memorySource(people());
      const call = appOver(source);
      assert.equal((await call('POST', '/sheets/demo', { key: 'k', body: { Name: 'Cy' } })).status, 201);
      const reused = await seen(call(method, path, { key: 'k', body }));
      assert.equal(reused.status, 422);
      assert.equal(JSON.parse(reused.body).error, 'idempotency_key_reused');
      assert.deepEqual(names(source), ['Ann', 'Bob', 'Cy']);
    });
  }
});

test('a key that is not 1-255 printable ASCII characters is 400 invalid_parameter naming the header', async (t) => {
  const cases: [string, string][] = [
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a tab inside', 'a\tb'],
    ['not ASCII', 'caf\u00e9'],
  ];
  for (const [name, key] of cases) {
    await t.test(name, async () => {
      const source = memorySource(people());
      const answer = await seen(appOver(source)('POST', '/sheets/demo', { key, body: { Name: 'Cy' } }));
      assert.equal(answer.status, 400);
      assert.equal(JSON.parse(answer.body).error, 'invalid_parameter');
      assert.match(JSON.parse(answer.body).message, /Idempotency-Key/);
      assert.deepEqual(names(source), ['Ann', 'Bob']);
    });
  }
  await t.test('255 characters, spaces and punctuation are fine', async () => {
    const call = appOver(memorySource(people()));
    for (const key of ['k'.repeat(255), 'order 17/!~']) assert.equal((await call('POST', '/sheets/demo', { key, body: { Name: 'Cy' } })).status, 201);
  });
});

test('a decided refusal is kept: a PATCH answered 404 is answered 404 again, even once the row exists', async () => {
  const source = memorySource(people());
  const call = appOver(source);
  const missing = await seen(call('PATCH', '/sheets/demo/2', { key: 'p', body: { Age: 5 } }));
  assert.equal(missing.status, 404, missing.body);
  assert.equal((await call('POST', '/sheets/demo', { body: { Name: 'Cy' } })).status, 201);
  assert.deepEqual(await seen(call('PATCH', '/sheets/demo/2', { key: 'p', body: { Age: 5 } })), { ...missing, replayed: 'true' });
  assert.equal((await call('PATCH', '/sheets/demo/2', { key: 'new', body: { Age: 5 } })).status, 200);
});

test('an answer that decided nothing is not kept: the retry runs', async (t) => {
  await t.test('503 from the source', async () => {
    const inner = memorySource(people());
    let failures = 1;
    const flaky: Source = {
      ...inner,
      description: 'flaky',
      writable: true,
      read: (options) => inner.read(options),
      write: (plan) => (failures-- > 0 ? Promise.reject(apiError('upstream_unavailable', 'Down for a moment.')) : inner.write(plan)),
      close: () => inner.close(),
    };
    const call = appOver(flaky);
    assert.equal((await call('POST', '/sheets/demo', { key: 'k', body: { Name: 'Cy' } })).status, 503);
    const retry = await seen(call('POST', '/sheets/demo', { key: 'k', body: { Name: 'Cy' } }));
    assert.deepEqual([retry.status, retry.replayed], [201, null]);
    assert.deepEqual(names(inner), ['Ann', 'Bob', 'Cy']);
  });
  await t.test('401 (a wrong API key), then the right one', async () => {
    const source = memorySource(people());
    const call = appOver(source, { keys: [{ digest: digestKey('right-key'), scope: 'write' }] });
    assert.equal((await call('POST', '/sheets/demo', { key: 'k', body: { Name: 'Cy' }, headers: { 'X-Api-Key': 'wrong' } })).status, 401);
    const retry = await seen(call('POST', '/sheets/demo', { key: 'k', body: { Name: 'Cy' }, headers: { 'X-Api-Key': 'right-key' } }));
    assert.deepEqual([retry.status, retry.replayed], [201, null]);
  });
  await t.test('a read-only key gets 403, never another key\'s stored answer', async () => {
    const source = memorySource(people());
    const call = appOver(source, { keys: [{ digest: digestKey('writer'), scope: 'write' }, { digest: digestKey('reader'), scope: 'read' }] });
    assert.equal((await call('POST', '/sheets/demo', { key: 'k', body: { Name: 'Cy' }, headers: { 'X-Api-Key': 'writer' } })).status, 201);
    const stolen = await seen(call('POST', '/sheets/demo', { key: 'k', body: { Name: 'Cy' }, headers: { 'X-Api-Key': 'reader' } }));
    assert.equal(stolen.status, 403);
    assert.equal(stolen.replayed, null);
  });
});

test('an Idempotency-Key belongs to the API key that sent it: another key holder re-sending it gets his own write done', async (t) => {
  const keys = [{ digest: digestKey('alice-key'), scope: 'write' as const }, { digest: digestKey('bob-key'), scope: 'write' as const }];
  const cases: { name: string; bobBody: unknown; after: string[] }[] = [
    { name: 'the same request', bobBody: { Name: 'Cy' }, after: ['Ann', 'Bob', 'Cy', 'Cy'] },
    { name: 'another body (no 422: the key is not his to reuse)', bobBody: { Name: 'Dan' }, after: ['Ann', 'Bob', 'Cy', 'Dan'] },
  ];
  for (const { name, bobBody, after } of cases) {
    await t.test(name, async () => {
      const source = memorySource(people());
      const call = appOver(source, { keys });
      const alice = await seen(call('POST', '/sheets/demo', { key: 'order-17', body: { Name: 'Cy' }, headers: { 'X-Api-Key': 'alice-key' } }));
      assert.equal(alice.status, 201, alice.body);
      const bob = await seen(call('POST', '/sheets/demo', { key: 'order-17', body: bobBody, headers: { 'X-Api-Key': 'bob-key' } }));
      assert.deepEqual([bob.status, bob.replayed], [201, null], bob.body);
      assert.deepEqual(names(source), after);
      // Each one's retry is still his own replay, and writes nothing.
      assert.deepEqual(await seen(call('POST', '/sheets/demo', { key: 'order-17', body: { Name: 'Cy' }, headers: { 'X-Api-Key': 'alice-key' } })), { ...alice, replayed: 'true' });
      assert.deepEqual(await seen(call('POST', '/sheets/demo', { key: 'order-17', body: bobBody, headers: { 'X-Api-Key': 'bob-key' } })), { ...bob, replayed: 'true' });
      assert.deepEqual(names(source), after);
    });
  }
});

test('the stored key names its API key by neither the key nor its digest', async (t) => {
  const dir = await tempDir(t);
  const path = dir.path('demo.idempotency');
  const idempotency = await KeyStore.open({ path });
  const call = appOver(memorySource(people()), { keys: [{ digest: digestKey('alice-key'), scope: 'write' }], idempotency });
  assert.equal((await call('POST', '/sheets/demo', { key: 'order-17', body: { Name: 'Cy' }, headers: { 'X-Api-Key': 'alice-key' } })).status, 201);
  await idempotency.close();
  const text = await readFile(path, 'utf8');
  assert.match(text, /"key":"[0-9a-f]{16}:order-17"/);
  assert.equal(text.includes('alice-key'), false);
  const digest = Buffer.from(digestKey('alice-key')).toString('hex');
  assert.equal(text.includes(digest.slice(0, 16)), false);
});

test('receipts stored before keys were scoped do not stop a start, and answer no request', async (t) => {
  const dir = await tempDir(t);
  const path = dir.path('demo.idempotency');
  const old = { key: 'order-17', fingerprint: 'f'.repeat(64), at: Date.now(), status: 201, headers: { 'Content-Type': 'application/json' }, body: '{"stored":true}' };
  await writeFile(path, receiptLine(old));
  const idempotency = await KeyStore.open({ path });
  const source = memorySource(people());
  const call = appOver(source, { idempotency });
  const answer = await seen(call('POST', '/sheets/demo', { key: 'order-17', body: { Name: 'Cy' } }));
  assert.deepEqual([answer.status, answer.replayed], [201, null]);
  assert.notEqual(answer.body, old.body);
  assert.deepEqual(names(source), ['Ann', 'Bob', 'Cy']);
  await idempotency.close();
});

test('retries sent while the first try runs wait for it: one write, the rest replayed', async () => {
  const source = memorySource(people());
  const call = appOver(source);
  const answers = await Promise.all(Array.from({ length: 10 }, () => seen(call('POST', '/sheets/demo', { key: 'same', body: { Name: 'Cy' } }))));
  assert.deepEqual(answers.map((answer) => answer.status), Array(10).fill(201));
  assert.equal(answers.filter((answer) => answer.replayed === null).length, 1);
  assert.deepEqual(names(source), ['Ann', 'Bob', 'Cy']);
});

test('reads ignore the header; other keys and requests without one run as before', async () => {
  const source = memorySource(people());
  const call = appOver(source);
  const read = await seen(call('GET', '/sheets/demo', { key: 'g' }));
  assert.deepEqual([read.status, read.replayed], [200, null]);
  assert.equal((await call('POST', '/sheets/demo', { key: 'g', body: { Name: 'Cy' } })).status, 201, 'a key seen on a read is still unused');
  assert.equal((await call('POST', '/sheets/demo', { body: { Name: 'Cy' } })).status, 201);
  assert.equal((await call('POST', '/sheets/demo', { key: 'other', body: { Name: 'Cy' } })).status, 201);
  assert.deepEqual(names(source), ['Ann', 'Bob', 'Cy', 'Cy', 'Cy']);
});

test('a browser may send the header: the preflight allows it', async () => {
  const call = appOver(memorySource(people()));
  const preflight = await call('OPTIONS', '/sheets/demo', { headers: { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' } });
  assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Idempotency-Key/);
});

// ---- the file source ---------------------------------------------------------------------

const SEED = [['Name', 'Age'], ['Ann', 30]];

async function fileSetup(t: TestContext) {
  const dir = await tempDir(t);
  const book = dir.path('book.xlsx');
  await writeXlsx(book, 'People', SEED);
  return { dir, book, stateDir: dir.path('state') };
}

function post(url: string, key: string, body: unknown): Promise<Seen> {
  return seen(fetch(`${url}/sheets/book`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'Idempotency-Key': key }, body: JSON.stringify(body) }));
}

test(`file source over HTTP: a key outlives a restart, stored in the state folder (${RUNTIME})`, async (t) => {
  const { book, stateDir } = await fileSetup(t);
  const first = await startServer(t, configForFile(book, { stateDir }));
  const answer = await post(first.url, 'order-1', { Name: 'Cy' });
  assert.equal(answer.status, 201);
  await first.close();
  const second = await startServer(t, configForFile(book, { stateDir }));
  assert.deepEqual(await post(second.url, 'order-1', { Name: 'Cy' }), { ...answer, replayed: 'true' });
  assert.equal((await post(second.url, 'order-1', { Name: 'Dan' })).status, 422);
  assert.deepEqual((await getRows(`${second.url}/sheets/book`)).map((row) => row.Name), ['Ann', 'Cy']);
  assert.match(await readFile(join(stateDir, 'book.idempotency'), 'utf8'), /"key":"open:order-1"/, 'an open connection\'s callers share the scope "open"');
});

test(`limits.idempotencyKeys reaches the connection's store: past it the oldest key is forgotten (${RUNTIME})`, async (t) => {
  const { book, stateDir } = await fileSetup(t);
  const { url } = await startServer(t, configForFile(book, { stateDir, limits: { idempotencyKeys: 2 } }));
  for (const key of ['a', 'b', 'c']) assert.equal((await post(url, key, { Name: key })).status, 201);
  assert.equal((await post(url, 'c', { Name: 'c' })).replayed, 'true');
  assert.equal((await post(url, 'b', { Name: 'b' })).replayed, 'true');
  const forgotten = await post(url, 'a', { Name: 'a' });
  assert.deepEqual([forgotten.status, forgotten.replayed], [201, null]);
});

test('file source: a key whose write is journaled survives a crash even when only the journal holds it', async (t) => {
  const { book, stateDir } = await fileSetup(t);
  const keysPath = join(stateDir, 'book.idempotency');
  const open = async () => {
    const idempotency = await KeyStore.open({ path: keysPath });
    // No fold before the crash: the journal is the only place the write and its key are.
    const source = await openFileSource({ path: book, stateDir, receipts: idempotency, foldAfterMs: Infinity, log: () => undefined });
    return { source, call: appOver(source, { id: 'book', idempotency }) };
  };
  const before = await open();
  const answer = await seen(before.call('POST', '/sheets/book', { key: 'k', body: { Name: 'Cy' } }));
  assert.equal(answer.status, 201);
  await before.source.abandon();
  // The store file was never written, so the key can only come back from the journal.
  await assert.rejects(readFile(keysPath, 'utf8'), { code: 'ENOENT' });
  const after = await open();
  t.after(() => after.source.close());
  assert.deepEqual(await seen(after.call('POST', '/sheets/book', { key: 'k', body: { Name: 'Cy' } })), { ...answer, replayed: 'true' });
  assert.equal((await after.source.read()).tabs[0].rows.length, 3);
  // Recovery folded the journal into the file and moved the key into the store first.
  assert.match(await readFile(keysPath, 'utf8'), /"key":"open:k"/);
});

test('file source: a fold moves the keys out of the journal before it forgets them', async (t) => {
  const { book, stateDir } = await fileSetup(t);
  const keysPath = join(stateDir, 'book.idempotency');
  const idempotency = await KeyStore.open({ path: keysPath });
  const source = await openFileSource({ path: book, stateDir, receipts: idempotency, foldAfterMs: Infinity, log: () => undefined });
  const call = appOver(source, { id: 'book', idempotency });
  assert.equal((await call('POST', '/sheets/book', { key: 'k', body: { Name: 'Cy' } })).status, 201);
  await source.close();
  // The fold at close emptied the journal: only the store can answer the retry now.
  const reopened = await KeyStore.open({ path: keysPath });
  assert.equal(reopened.get('open:k')?.status, 201);
});

test('file source: while the key store cannot take the keys, the journal keeps them and folds wait, also across a restart', async (t) => {
  const { book, stateDir } = await fileSetup(t);
  const keysPath = join(stateDir, 'book.idempotency');
  const logged: string[] = [];
  const open = async () => {
    const idempotency = await KeyStore.open({ path: keysPath });
    // A store whose file cannot be written (a full disk): every keep fails.
    const failing = { journaled: idempotency.journaled.bind(idempotency), keep: () => Promise.reject(Object.assign(new Error('no space'), { code: 'ENOSPC' })) };
    const source = await openFileSource({ path: book, stateDir, receipts: failing, foldAfterMs: Infinity, log: (line) => logged.push(line) });
    return { source, call: appOver(source, { id: 'book', idempotency }) };
  };
  const before = await open();
  assert.equal((await before.call('POST', '/sheets/book', { key: 'k', body: { Name: 'Cy' } })).status, 201);
  await before.source.abandon();
  // The restart's fold fails (the keys could not be kept): the journal still holds write and key.
  const after = await open();
  t.after(() => after.source.abandon());
  assert.match(logged.join('\n'), /could not fold the journal/);
  const retry = await seen(after.call('POST', '/sheets/book', { key: 'k', body: { Name: 'Cy' } }));
  assert.deepEqual([retry.status, retry.replayed], [201, 'true']);
  assert.equal((await after.source.read()).tabs[0].rows.length, 3);
});

// ---- the Google source ----------------------------------------------------------------------

test(`Google source over HTTP (the emulator): replayed, also after a restart, and written once (${RUNTIME})`, async (t) => {
  const emulator = await startEmulator();
  t.after(() => emulator.close());
  const id = emulator.createSpreadsheet({ sheets: [{ title: 'People', rows: [['Name', 'Age'], ['Ann', 30]] }], access: { 'writer-token': 'writer' } });
  const dir = await tempDir(t);
  const base = configForFile(dir.path('unused.xlsx'), { stateDir: dir.path('state') });
  const google = { type: 'google', spreadsheetId: id, rootUrl: emulator.rootUrl, accessToken: new Secret('writer-token'), retries: 0 } as const;
  const config = { ...base, connections: [{ ...base.connections[0], id: 'book', source: google }] } as unknown as Config;
  const first = await startServer(t, config);
  const answer = await post(first.url, 'g-1', { Name: 'Cy', Age: 25 });
  assert.equal(answer.status, 201, answer.body);
  assert.deepEqual(await post(first.url, 'g-1', { Name: 'Cy', Age: 25 }), { ...answer, replayed: 'true' });
  await first.close();
  const second = await startServer(t, config);
  assert.deepEqual(await post(second.url, 'g-1', { Name: 'Cy', Age: 25 }), { ...answer, replayed: 'true' });
  assert.equal((await post(second.url, 'g-1', { Name: 'Dan' })).status, 422);
  assert.deepEqual(emulator.sheet(id, 'People').rows.map((row) => row[0]?.formattedValue), ['Name', 'Ann', 'Cy']);
});
