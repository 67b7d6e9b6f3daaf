// The dashboard's static files over real HTTP, on whichever runtime runs the test: `GET /` from a
// browser (Accept: text/html) is the page when the admin API is on, and the JSON index otherwise
// or for any other client; `/_dashboard/<name>` serves only the files of server/dashboard/, with
// their Content-Type, a strict Content-Security-Policy, nosniff and `Cache-Control: no-cache`
// with an ETag; no path, however spelled, reaches a file outside the folder.
import assert from 'node:assert/strict';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { configForFile, type Config } from '../../server/config/config.ts';
import { DASHBOARD_FOLDER, loadDashboard, SOURCE_TYPES_FILE } from '../../server/http/dashboard-files.ts';
import { rawRequest, RUNTIME, startServer, tempDir, writeXlsx, type TempDir, type TestContext } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const HTML = { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };

async function serve(t: TestContext, env: Record<string, string> = { SHEETREST_ADMIN_TOKEN: TOKEN }): Promise<{ url: string; dir: TempDir }> {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  const config: Config = configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' } }, { env });
  const { url } = await startServer(t, config);
  return { url, dir };
}

test(`the dashboard's page and files (${RUNTIME})`, async (t) => {
  const { url } = await serve(t);
  const names = (await readdir(DASHBOARD_FOLDER)).sort();

  await t.test('GET / from a browser is the page, with a strict CSP', async () => {
    const response = await fetch(`${url}/`, { headers: HTML });
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(response.headers.get('cache-control'), 'no-cache');
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const csp = response.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"]) assert.ok(csp.includes(directive), directive);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    assert.equal(await response.text(), await readFile(join(DASHBOARD_FOLDER, 'index.html'), 'utf8'));
  });

  await t.test('GET / from curl (Accept: */*) is still the JSON index', async () => {
    const response = await fetch(`${url}/`, { headers: { Accept: '*/*' } });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal((await response.json()).name, 'sheetrest');
  });

  const types: Record<string, RegExp> = { '.js': /^text\/javascript; charset=utf-8$/, '.css': /^text\/css; charset=utf-8$/, '.html': /^text\/html; charset=utf-8$/, '.svg': /^image\/svg\+xml$/, '.ico': /^image\/x-icon$/ };
  for (const name of names) {
    await t.test(`GET /_dashboard/${name}: its bytes, its type, an ETag that answers 304`, async () => {
      const response = await fetch(`${url}/_dashboard/${name}`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', types[name.slice(name.lastIndexOf('.'))]);
      assert.ok(response.headers.get('content-security-policy'));
      assert.deepEqual(new Uint8Array(await response.arrayBuffer()), new Uint8Array(await readFile(join(DASHBOARD_FOLDER, name))));
      const tag = response.headers.get('etag') ?? '';
      assert.match(tag, /^"[\w-]{22}"$/);
      const again = await fetch(`${url}/_dashboard/${name}`, { headers: { 'If-None-Match': tag } });
      assert.equal(again.status, 304);
      assert.equal(await again.text(), '');
    });
  }

  await t.test(`GET /_dashboard/${SOURCE_TYPES_FILE}: the source types' forms, made at start, with an ETag`, async () => {
    const response = await fetch(`${url}/_dashboard/${SOURCE_TYPES_FILE}`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.ok(response.headers.get('content-security-policy'));
    assert.deepEqual(await response.json(), [
      { type: 'file', title: 'New connection from a file', fields: [{ name: 'path', label: 'Workbook path (on the server)', placeholder: '/srv/crm.xlsx' }] },
    ]);
    const again = await fetch(`${url}/_dashboard/${SOURCE_TYPES_FILE}`, { headers: { 'If-None-Match': response.headers.get('etag') ?? '' } });
    assert.equal(again.status, 304);
  });

  await t.test('no file of the dashboard builds markup from text (innerHTML, outerHTML, insertAdjacentHTML, document.write)', async () => {
    for (const name of names.filter((each) => each.endsWith('.js'))) {
      assert.doesNotMatch(await readFile(join(DASHBOARD_FOLDER, name), 'utf8'), /innerHTML|outerHTML|insertAdjacentHTML|document\.write/, name);
    }
  });

  await t.test('POST /_dashboard/app.js is 405 with Allow', async () => {
    const response = await fetch(`${url}/_dashboard/app.js`, { method: 'POST', body: '' });
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'GET, HEAD');
  });

  // Sent byte for byte over a socket: fetch() would resolve the dot segments before sending.
  const port = new URL(url).port;
  const outside = [
    '/_dashboard/../dashboard-files.ts',
    '/_dashboard/../../package.json',
    '/_dashboard/%2e%2e/dashboard-files.ts',
    '/_dashboard/%2E%2E%2Fdashboard-files.ts',
    '/_dashboard/..%2fdashboard-files.ts',
    '/_dashboard/..%5cdashboard-files.ts',
    '/_dashboard/.%2e/.%2e/package.json',
    '/_dashboard/%252e%252e%252fpackage.json',
    '/_dashboard//etc/passwd',
    '/_dashboard/app.js%00.html',
    '/_dashboard/./app.js/../../app.ts',
    '/_dashboard/',
    '/_dashboard/app.ts',
  ];
  const secrets = [await readFile(join(DASHBOARD_FOLDER, '..', 'http', 'dashboard-files.ts'), 'utf8'), await readFile(join(DASHBOARD_FOLDER, '..', '..', 'package.json'), 'utf8')];
  for (const target of outside) {
    await t.test(`GET ${target} reaches no file outside the folder`, async () => {
      const answer = await rawRequest(url, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
      assert.ok(answer.status === 404 || answer.status === 400, `status ${answer.status}`);
      for (const secret of secrets) assert.ok(!answer.body.includes(secret.slice(0, 200)));
      assert.match(answer.headers['content-type'] ?? '', /^application\/json/);
    });
  }
});

test(`without the admin API, GET / is the JSON index even for a browser, and /_dashboard/ is 404 (${RUNTIME})`, async (t) => {
  const { url } = await serve(t, {});
  const page = await fetch(`${url}/`, { headers: HTML });
  assert.equal(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal((await page.json()).name, 'sheetrest');
  const file = await fetch(`${url}/_dashboard/app.js`);
  assert.equal(file.status, 404);
  assert.equal((await file.json()).error, 'not_found');
});

test(`loadDashboard serves the folder's own files of known types only (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  const folder = dir.path('dash');
  await mkdir(join(folder, 'sub'), { recursive: true });
  await writeFile(join(folder, 'index.html'), '<!doctype html><title>x</title>');
  await writeFile(join(folder, 'app.js'), 'export {};');
  await writeFile(join(folder, 'notes.ts'), 'secret');
  await writeFile(join(folder, '.env'), 'TOKEN=secret');
  await writeFile(join(folder, 'sub', 'deep.js'), 'deep');
  await writeFile(dir.path('outside.js'), 'outside');
  await symlink(dir.path('outside.js'), join(folder, 'link.js'));
  const dashboard = await loadDashboard(folder);
  const cases: [string, number][] = [
    ['/', 200],
    ['/_dashboard/index.html', 200],
    ['/_dashboard/app.js', 200],
    ['/_dashboard/notes.ts', 404],
    ['/_dashboard/.env', 404],
    ['/_dashboard/sub/deep.js', 404],
    ['/_dashboard/sub', 404],
    ['/_dashboard/link.js', 404],
    ['/_dashboard/../outside.js', 404],
  ];
  for (const [path, status] of cases) {
    await t.test(path, () => {
      const answer = dashboard.answer('GET', path, null);
      assert.equal(answer?.status, status);
    });
  }
  assert.equal(dashboard.answer('GET', '/sheets/x', null), null);
});
