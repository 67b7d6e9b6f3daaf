// Uploading a workbook through the admin API, over real HTTP on whichever runtime runs the test:
// `PUT /_admin/files/crm.xlsx` with the file's bytes stores it in admin.fileRoot, and
// `POST /_admin/connections` makes a connection from the path it answers. Every bad input is
// refused in the contract's shape and leaves nothing behind: a name that would leave the root
// (spelt with %2F, %5C, `..`), a hidden or unknown kind of name, an existing file without
// `?replace=true`, a body over admin.uploadBytes, an empty body, bytes that are not the
// workbook the name says.
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { configForFile, ConfigError, type Config } from '../../server/config/config.ts';
import { RUNTIME, startServer, tempDir, writeXlsx, type TempDir, type TestContext } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const UPLOAD_BYTES = 64 * 1024;

interface Reply {
  readonly status: number;
  readonly headers: Headers;
  // deno-lint-ignore no-explicit-any
  readonly body: any;
}

async function put(base: string, name: string, body: Uint8Array<ArrayBuffer> | string, headers: Record<string, string> = AUTH): Promise<Reply> {
  const response = await fetch(`${base}/_admin/files/${name}`, { method: 'PUT', headers: { 'Content-Type': 'application/octet-stream', ...headers }, body });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? null : JSON.parse(text) };
}

function assertError(reply: Reply, status: number, code: string, message?: RegExp): void {
  assert.equal(reply.status, status, JSON.stringify(reply.body));
  assert.deepEqual(Object.keys(reply.body), ['error', 'message']);
  assert.equal(reply.body.error, code);
  if (message !== undefined) assert.match(reply.body.message, message);
}

/** A folder with book.xlsx (the config's connection) and `uploads/`, the admin file root. */
async function setUp(t: TestContext): Promise<{ dir: TempDir; url: string; root: string; xlsx: Uint8Array<ArrayBuffer> }> {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  await writeXlsx(dir.path('crm-source.xlsx'), 'Leads', [['Lead', 'Stage'], ['Acme', 'new'], ['Globex', 'won']]);
  const root = dir.path('uploads');
  await mkdir(root);
  const config: Config = configForFile(dir.path('book.xlsx'), {
    stateDir: dir.path('state'),
    log: { level: 'silent' },
    admin: { token: TOKEN, fileRoot: root, uploadBytes: UPLOAD_BYTES },
  } as never);
  const { url } = await startServer(t, config);
  return { dir, url, root, xlsx: new Uint8Array(await readFile(dir.path('crm-source.xlsx'))) };
}

test(`an uploaded workbook becomes a connection (${RUNTIME})`, async (t) => {
  const { url, root, xlsx } = await setUp(t);
  const stored = await put(url, 'crm.xlsx', xlsx);
  assert.equal(stored.status, 201, JSON.stringify(stored.body));
  assert.equal(stored.headers.get('cache-control'), 'no-store');
  assert.deepEqual({ ...stored.body, path: undefined }, { name: 'crm.xlsx', path: undefined, format: 'xlsx', bytes: xlsx.byteLength, replaced: false, links: { connections: '/_admin/connections' } });
  assert.deepEqual(new Uint8Array(await readFile(stored.body.path)), xlsx);
  assert.deepEqual(await readdir(root), ['crm.xlsx'], 'no temp file is left beside it');

  const created = await fetch(`${url}/_admin/connections`, {
    method: 'POST',
    headers: { ...AUTH, 'Content-Type': 'application/json' },
    body: JSON.stringify({ id: 'crm', source: { type: 'file', path: stored.body.path } }),
  });
  const connection = await created.json();
  assert.equal(created.status, 201, JSON.stringify(connection));
  assert.equal(connection.open, false);
  const rows = await fetch(`${url}/sheets/crm`, { headers: { 'X-Api-Key': connection.newKey.key } });
  assert.deepEqual(await rows.json(), [{ Lead: 'Acme', Stage: 'new' }, { Lead: 'Globex', Stage: 'won' }]);

  // A CSV, a name with spaces and non-ASCII letters (percent-encoded in the path).
  const csv = await put(url, encodeURIComponent('Données 2024.csv'), 'Name,Age\nAnn,30\n');
  assert.equal(csv.status, 201, JSON.stringify(csv.body));
  assert.equal(csv.body.name, 'Données 2024.csv');
  assert.equal(csv.body.format, 'csv');

  // The same name again: refused unless asked to replace; replaced, the new bytes are there.
  assertError(await put(url, 'crm.xlsx', xlsx), 409, 'conflict', /already a file "crm\.xlsx".*\?replace=true/);
  const replaced = await put(url, 'crm.xlsx?replace=true', 'Lead,Stage\nInitech,lost\n');
  // The name says .xlsx and the bytes are CSV: refused, the old file kept.
  assertError(replaced, 400, 'invalid_body', /not a readable \.xlsx file/);
  assert.deepEqual(new Uint8Array(await readFile(stored.body.path)), xlsx);
  const again = await put(url, 'crm.xlsx?replace=true', xlsx);
  assert.equal(again.status, 200, JSON.stringify(again.body));
  assert.equal(again.body.replaced, true);
});

test(`bad uploads are refused and store nothing (${RUNTIME})`, async (t) => {
  const { dir, url, root, xlsx } = await setUp(t);
  await t.test('names that would leave the root, or are no workbook name', async () => {
    const names = [
      ['..%2Fescape.csv', /may not hold \//],
      ['sub%2Fescape.csv', /may not hold \//],
      ['..%5Cescape.csv', /may not hold/],
      // (`..` and `%2e%2e` as a whole segment are resolved by the client's URL parser: they never arrive.)
      ['..%2e', /start with a dot/],
      ['.hidden.csv', /start with a dot/],
      ['%20padded.csv', /start or end with a space/],
      ['notes.txt', /\.xlsx, \.xlsm, \.ods and \.csv/],
      ['crm.xlsx%00.csv', /control characters/],
      ['a%3Ab.csv', /may not hold/],
      [`${'x'.repeat(201)}.csv`, /1 to 200 characters/],
      // 244 bytes in UTF-8: with the temp file's suffix, past the 255 bytes a file name may have (was a 500).
      [`${'%E2%82%AC'.repeat(80)}.csv`, /200 bytes in UTF-8/],
      ['%C2%85next-line.csv', /control/],
      // Right-to-left override (the name shows as "csv.exe..."), zero-width space, line separator.
      ['%E2%80%AEvsc.exe.csv', /control/],
      ['x%E2%80%8B.csv', /control/],
      ['x%E2%80%A8.csv', /control/],
      // Percent-encoding that is not UTF-8 (was 404 not_found).
      ['%ff.csv', /"%ff\.csv" cannot be stored: its percent-encoding is not UTF-8/],
      ['x%E2%82.csv', /percent-encoding is not UTF-8/],
    ] as const;
    for (const [name, message] of names) assertError(await put(url, name, 'a,b\n1,2\n'), 400, 'invalid_parameter', message);
    assert.deepEqual(await readdir(root), []);
    assert.ok(!(await readdir(dir.dir)).includes('escape.csv'), 'nothing was written beside the root');
  });
  await t.test('the query takes replace only', async () => {
    assertError(await put(url, 'a.csv?replace=maybe', 'a\n1\n'), 400, 'invalid_parameter', /replace is true or false/);
    assertError(await put(url, 'a.csv?replace=true&replace=false', 'a\n1\n'), 400, 'invalid_parameter', /given once/);
    assertError(await put(url, 'a.csv?overwrite=1', 'a\n1\n'), 400, 'invalid_parameter', /Unknown parameter "overwrite".*\?replace=true/);
  });
  await t.test('bodies that are not the workbook the name says', async () => {
    assertError(await put(url, 'empty.csv', ''), 400, 'invalid_body', /The body is empty/);
    assertError(await put(url, 'fake.xlsx', 'hello, world'), 400, 'invalid_body', /not a readable \.xlsx file/);
    assertError(await put(url, 'fake.ods', xlsx), 400, 'invalid_body', /not a readable \.ods file/);
    assertError(await put(url, 'latin1.csv', new Uint8Array([0x4e, 0x61, 0x6d, 0x65, 0x0a, 0xe9, 0x0a])), 400, 'invalid_body', /not a readable \.csv file/);
    assert.deepEqual(await readdir(root), []);
  });
  await t.test('a body over admin.uploadBytes', async () => {
    const big = new Uint8Array(UPLOAD_BYTES + 1).fill(0x61);
    assertError(await put(url, 'big.csv', big), 413, 'payload_too_large', new RegExp(`larger than ${UPLOAD_BYTES} bytes.*admin\\.uploadBytes`));
    // Larger than limits.bodyBytes' 1 MiB default is no matter: the upload's own cap applies.
    assert.ok(UPLOAD_BYTES < 1024 * 1024);
    assert.deepEqual(await readdir(root), []);
  });
  await t.test('what is in the root and is no regular file is never replaced', async () => {
    await mkdir(join(root, 'folder.csv'));
    await writeFile(dir.path('outside.csv'), 'secret\n1\n');
    await symlink(dir.path('outside.csv'), join(root, 'link.csv'));
    assertError(await put(url, 'folder.csv?replace=true', 'a\n1\n'), 409, 'conflict', /not a regular file/);
    assertError(await put(url, 'link.csv?replace=true', 'a\n1\n'), 409, 'conflict', /not a regular file/);
    assertError(await put(url, 'link.csv', 'a\n1\n'), 409, 'conflict', /already a file/);
    assert.equal(await readFile(dir.path('outside.csv'), 'utf8'), 'secret\n1\n', 'the link\'s target is untouched');
  });
  await t.test('the admin token, and the methods', async () => {
    assertError(await put(url, 'a.csv', 'a\n1\n', {}), 401, 'not_authenticated');
    const get = await fetch(`${url}/_admin/files/a.csv`, { headers: AUTH });
    assert.equal(get.status, 405);
    assert.equal(get.headers.get('allow'), 'PUT');
    await get.body?.cancel();
  });
});

test(`admin.uploadBytes is checked with the config (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  const config = (uploadBytes: unknown) => configForFile(dir.path('book.xlsx'), { admin: { token: TOKEN, uploadBytes } } as never);
  assert.equal(config(1234).admin?.uploadBytes, 1234);
  assert.equal(configForFile(dir.path('book.xlsx'), { admin: { token: TOKEN } } as never).admin?.uploadBytes, 25 * 1024 * 1024);
  assert.throws(() => config(0), (error: unknown) => error instanceof ConfigError && /admin\.uploadBytes/.test(error.message));
  assert.throws(() => config('big'), (error: unknown) => error instanceof ConfigError && /admin\.uploadBytes/.test(error.message));
});
