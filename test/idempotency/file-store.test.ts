// The Idempotency-Key store on its own (server/idempotency/file-store.ts) and the request
// fingerprint (server/idempotency/idempotency.ts): receipts survive a restart, expire after 24 h, are
// bounded by count and bytes (the oldest dropped first), the file is compacted rather than
// grown for ever, a torn last line is ignored, and a retry waits for the first try.
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { KEY_TTL_MS, KeyStore } from '../../server/idempotency/file-store.ts';
import { parseReceipts, receiptLine } from '../../server/idempotency/receipt-lines.ts';
import { journalLine, parseJournal, receiptsOf, withoutReceipt } from '../../server/sources/file/journal.ts';
import { isDecided, requestFingerprint } from '../../server/idempotency/idempotency.ts';
import type { Receipt } from '../../server/sources/source.ts';

const T0 = Date.UTC(2026, 0, 1);

function receipt(key: string, at = T0, body = '{"Name":"Ann"}'): Receipt {
  return { key, fingerprint: `print-${key}`, at, status: 201, headers: { 'Content-Type': 'application/json' }, body };
}

async function folder(t: { after(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sheetrest-keys-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A clock the test moves. */
function clock(start = T0) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

async function lines(path: string): Promise<number> {
  return parseReceipts(await readFile(path, 'utf8')).lines;
}

test('a saved receipt is answered after a restart, and only within 24 h', async (t) => {
  const path = join(await folder(t), 'demo.idempotency');
  const time = clock();
  const first = await KeyStore.open({ path, now: time.now });
  await first.save(receipt('order-1'));
  await first.close();
  for (const [elapsed, kept] of [[0, true], [KEY_TTL_MS - 1, true], [KEY_TTL_MS, false]] as const) {
    await t.test(`${elapsed} ms later: ${kept ? 'kept' : 'expired'}`, async () => {
      const reopened = await KeyStore.open({ path, now: () => T0 + elapsed });
      assert.deepEqual(reopened.get('order-1'), kept ? receipt('order-1') : undefined);
    });
  }
  await t.test('expired keys are dropped from the file at the next start', async () => {
    const reopened = await KeyStore.open({ path, now: () => T0 + KEY_TTL_MS });
    assert.equal(reopened.size, 0);
    assert.equal(await readFile(path, 'utf8'), '');
  });
});

test('an expired key is free for a new request at run time', async (t) => {
  const time = clock();
  const store = KeyStore.memory({ now: time.now });
  await store.save(receipt('k'));
  time.advance(KEY_TTL_MS - 1);
  assert.equal(store.get('k')?.status, 201);
  time.advance(1);
  assert.equal(store.get('k'), undefined);
  assert.equal(store.size, 0);
});

test('limits: past maxKeys or maxBytes the oldest keys are dropped first, and the log says so once', async (t) => {
  const cases = [
    { name: 'maxKeys 3, five keys', options: { maxKeys: 3 }, keys: 5, kept: ['k2', 'k3', 'k4'] },
    { name: 'maxBytes of two lines, four keys', options: { maxBytes: 2 * receiptLine(receipt('k0')).length }, keys: 4, kept: ['k2', 'k3'] },
  ];
  for (const { name, options, keys, kept } of cases) {
    await t.test(name, async () => {
      const path = join(await folder(t), 'demo.idempotency');
      const logged: string[] = [];
      const store = await KeyStore.open({ path, ...options, now: () => T0 + keys, log: (line) => logged.push(line) });
      for (let i = 0; i < keys; i++) await store.save(receipt(`k${i}`, T0 + i));
      const held = Array.from({ length: keys }, (_, i) => `k${i}`).filter((key) => store.get(key) !== undefined);
      assert.deepEqual(held, kept);
      assert.equal(logged.length, 1, logged.join('\n'));
      assert.match(logged[0], /limits\.idempotencyKeys/);
      // The same bound applies to what a restart loads.
      const reopened = await KeyStore.open({ path, ...options, now: () => T0 + keys });
      assert.deepEqual(Array.from({ length: keys }, (_, i) => `k${i}`).filter((key) => reopened.get(key) !== undefined), kept);
    });
  }
});

test('the file is compacted: dead lines are rewritten away at start and once they outnumber the live ones', async (t) => {
  const path = join(await folder(t), 'demo.idempotency');
  const time = clock();
  const store = await KeyStore.open({ path, now: time.now, maxKeys: 100 });
  // 1,500 keys through a store of 100, 50 at a time: without compaction the file would keep 1,500 lines.
  for (let chunk = 0; chunk < 30; chunk++) {
    await Promise.all(Array.from({ length: 50 }, (_, i) => store.save(receipt(`k${chunk * 50 + i}`, T0 + chunk * 50 + i))));
  }
  await store.close();
  assert.ok((await lines(path)) < 100 + 1024 + 100, `${await lines(path)} lines`);
  // The same key saved again replaces its line; a restart leaves one line per live key.
  await store.save({ ...receipt('k1499', T0 + 1499), body: '{"again":true}' });
  await store.close();
  const reopened = await KeyStore.open({ path, now: time.now, maxKeys: 100 });
  assert.equal(reopened.get('k1499')?.body, '{"again":true}');
  assert.equal(await lines(path), 100);
});

test('a torn last line (a crash mid-append) is skipped; the lines before it and appends after it are kept', async (t) => {
  const path = join(await folder(t), 'demo.idempotency');
  const line = receiptLine(receipt('whole'));
  await writeFile(path, line + receiptLine(receipt('torn')).slice(0, 40));
  const logged: string[] = [];
  const store = await KeyStore.open({ path, now: () => T0, log: (text) => logged.push(text) });
  assert.equal(store.get('whole')?.status, 201);
  assert.equal(store.get('torn'), undefined);
  assert.match(logged.join('\n'), /1 damaged line/);
  await store.save(receipt('after'));
  const reopened = await KeyStore.open({ path, now: () => T0 });
  assert.deepEqual([reopened.get('whole')?.key, reopened.get('after')?.key], ['whole', 'after']);
});

test('a line appended after a torn one without its newline is still read', async () => {
  const text = receiptLine(receipt('a')) + receiptLine(receipt('torn')).slice(0, 30) + receiptLine(receipt('b'));
  assert.deepEqual(parseReceipts(text).receipts.map((item) => item.key), ['a', 'b']);
});

test('journaled receipts are answered at once and written to the file only when kept', async (t) => {
  const path = join(await folder(t), 'demo.idempotency');
  const store = await KeyStore.open({ path, now: () => T0 });
  store.journaled([receipt('j1'), receipt('j2')]);
  assert.equal(store.get('j1')?.status, 201);
  assert.equal(await readFile(path, 'utf8').catch(() => ''), '', 'the journal holds them: no fsync of the store yet');
  // The answer as finally sent (saved) wins over the journaled one handed over later.
  await store.save({ ...receipt('j2'), headers: { ETag: '"v2"' } });
  await store.keep([receipt('j1'), receipt('j2'), receipt('recovered')]);
  const reopened = await KeyStore.open({ path, now: () => T0 });
  assert.deepEqual(reopened.get('j1'), receipt('j1'));
  assert.deepEqual(reopened.get('j2')?.headers, { ETag: '"v2"' });
  assert.deepEqual(reopened.get('recovered'), receipt('recovered'));
});

test('exclusive: a second section on the same key waits for the first; other keys do not', async () => {
  const store = KeyStore.memory();
  const order: string[] = [];
  let releaseFirst!: () => void;
  const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
  const first = store.exclusive('k', async () => {
    order.push('first start');
    await firstHolds;
    order.push('first end');
  });
  const second = store.exclusive('k', async () => void order.push('second'));
  const other = store.exclusive('other', async () => void order.push('other'));
  await other;
  releaseFirst();
  await Promise.all([first, second]);
  assert.deepEqual(order, ['first start', 'other', 'first end', 'second']);
});

test('requestFingerprint: the same request gives the same print; method, path, query, type, If-Match and body each change it', () => {
  const base = { method: 'POST', url: 'http://a:1/sheets/demo?x=1', headers: { 'content-type': 'application/json' } as Record<string, string>, body: '{"Name":"Ann"}' };
  const print = (change: Partial<typeof base>) => {
    const request = { ...base, ...change };
    const headers = { get: (name: string) => request.headers[name] ?? null };
    return requestFingerprint({ method: request.method, url: request.url, headers }, new TextEncoder().encode(request.body));
  };
  const same = print({});
  const cases: [string, Partial<typeof base>, boolean][] = [
    ['another host (a retry through another address)', { url: 'http://b:2/sheets/demo?x=1' }, true],
    ['another method', { method: 'PUT' }, false],
    ['another path', { url: 'http://a:1/sheets/demo/tabs/People?x=1' }, false],
    ['another query', { url: 'http://a:1/sheets/demo?x=2' }, false],
    ['another Content-Type', { headers: { 'content-type': 'application/x-www-form-urlencoded' } }, false],
    ['PUT turned into PATCH by X-HTTP-Method-Override', { method: 'PUT', headers: { 'content-type': 'application/json', 'x-http-method-override': 'PATCH' } }, false],
    ['another If-Match', { headers: { 'content-type': 'application/json', 'if-match': '"v2"' } }, false],
    ['another body', { body: '{"Name":"Bob"}' }, false],
  ];
  for (const [name, change, equal] of cases) assert.equal(print(change) === same, equal, name);
});

test('isDecided: which answers a key keeps', () => {
  const cases: [number, boolean][] = [
    [200, true], [201, true], [400, true], [404, true], [405, true], [412, true], [415, true],
    [401, false], [402, false], [403, false], [408, false], [429, false], [500, false], [503, false], [507, false],
  ];
  for (const [status, decided] of cases) assert.equal(isDecided(status), decided, String(status));
});

test('a store file the server cannot read stops the start with its error', async (t) => {
  // A folder where the file should be: reading it fails with something other than "missing".
  const dir = await folder(t);
  await assert.rejects(KeyStore.open({ path: dir }), (error: Error) => error.message.startsWith(`${dir}: cannot read the Idempotency-Key store (`));
});

test('a journal entry carries its receipt through the journal; a malformed one is left out; conflict files and history drop it', async () => {
  const plan = { tab: 'People', replaced: [], removed: [], appended: { start: 1, rows: [{ text: ['Cy'], value: ['Cy'] }] } };
  const expected = { dataRows: 1, rows: [] };
  const text =
    journalLine({ journal: 1, base: 'b' }) +
    journalLine({ plan, expected, receipt: receipt('k') }) +
    journalLine({ plan, expected, receipt: { key: 'no answer' } }) +
    journalLine({ plan, expected });
  const parsed = parseJournal(text);
  assert.deepEqual(parsed?.entries.map((entry) => entry.receipt), [receipt('k'), undefined, undefined]);
  assert.deepEqual(receiptsOf(parsed?.entries ?? []), [receipt('k')]);
  assert.deepEqual(withoutReceipt({ plan, expected, receipt: receipt('k') }), { plan, expected });
});
