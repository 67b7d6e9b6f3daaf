// The docs the server serves over real HTTP, on whichever runtime runs the test, with the admin
// API off (they are for the API's users): /favicon.ico, Swagger UI's page at /_docs/{id} with its
// own CSP, its assets (swagger-ui-dist's two files, without their source-map comments), the
// project docs as plain text, 304s, 405, and no path reaching another file.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { configForFile } from '../../server/config/config.ts';
import { DOCS_CONTENT_SECURITY_POLICY } from '../../server/http/api-docs.ts';
import { rawRequest, RUNTIME, startServer, tempDir, writeXlsx } from '../helpers/http.ts';

const SWAGGER = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));

test(`/favicon.ico, /_docs/{id} and /_docs/project/ with the admin API off (${RUNTIME})`, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  const { url } = await startServer(t, configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' } }));

  await t.test('GET /favicon.ico is an icon, with an ETag that answers 304', async () => {
    const response = await fetch(`${url}/favicon.ico`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'image/x-icon');
    const body = new Uint8Array(await response.arrayBuffer());
    assert.deepEqual([...body.subarray(0, 4)], [0, 0, 1, 0], 'an ICO header');
    const again = await fetch(`${url}/favicon.ico`, { headers: { 'If-None-Match': response.headers.get('etag') ?? '' } });
    assert.equal(again.status, 304);
  });

  await t.test('GET /_docs/book is the Swagger UI page, with its CSP', async () => {
    const response = await fetch(`${url}/_docs/book`);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(response.headers.get('content-security-policy'), DOCS_CONTENT_SECURITY_POLICY);
    assert.doesNotMatch(DOCS_CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval|\*|https?:/);
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
    const page = await response.text();
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css', 'docs.js', 'docs.css', 'favicon.svg']) assert.ok(page.includes(`/_docs/assets/${asset}`), asset);
    // Any connection id gets the same page; the page itself asks for the document.
    assert.equal(await (await fetch(`${url}/_docs/no-such-connection`)).text(), page);
  });

  await t.test('the two files of swagger-ui-dist, as installed, without the source-map comment', async () => {
    for (const name of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
      const response = await fetch(`${url}/_docs/assets/${name}`);
      assert.equal(response.status, 200, name);
      const served = await response.text();
      assert.doesNotMatch(served.slice(-300), /sourceMappingURL/, name);
      const installed = await readFile(join(SWAGGER, name), 'utf8');
      assert.ok(installed.startsWith(served.slice(0, 10_000)) && served.length > installed.length - 300, name);
    }
    for (const name of ['swagger-ui-bundle.js.map', 'swagger-ui-standalone-preset.js', 'index.html', 'swagger-initializer.js', 'oauth2-redirect.html']) {
      assert.equal((await fetch(`${url}/_docs/assets/${name}`)).status, 404, name);
    }
  });

  await t.test('the project docs: an index, and each as text/plain', async () => {
    const index = await fetch(`${url}/_docs/project/`);
    assert.equal(index.status, 200);
    const html = await index.text();
    assert.match(html, /href="\/_docs\/project\/api\.md"/);
    assert.match(html, /href="\/_docs\/project\/README\.md"/);
    const api = await fetch(`${url}/_docs/project/api.md`);
    assert.equal(api.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(await api.text(), await readFile(new URL('../../docs/api.md', import.meta.url), 'utf8'));
  });

  await t.test('HEAD is answered, POST is 405 with Allow', async () => {
    assert.equal((await fetch(`${url}/_docs/book`, { method: 'HEAD' })).status, 200);
    const post = await fetch(`${url}/_docs/book`, { method: 'POST', body: '' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
  });

  const port = new URL(url).port;
  const outside = ['/_docs/', '/_docs/assets/../../package.json', '/_docs/assets/%2e%2e/docs.js', '/_docs/project/../package.json', '/_docs/project/%2e%2e%2fpackage.json',
    '/_docs/project/architecture', '/_docs/assets/', '/_docs/a/b', '/_docs/book.json', '/_docs/../favicon.ico%00'];
  for (const target of outside) {
    await t.test(`GET ${target} reaches no other file`, async () => {
      const answer = await rawRequest(url, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
      assert.ok(answer.status === 404 || answer.status === 400, `status ${answer.status}`);
      assert.ok(!answer.body.includes('"devDependencies"'));
    });
  }
});
