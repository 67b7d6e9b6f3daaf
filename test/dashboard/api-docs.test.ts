// The API docs the server serves itself, in headless Chromium: Swagger UI at /_docs/{id} for an
// open connection (loaded at once) and a keyed one (the page asks for the key, then "Authorize"
// holds it); the seven shared parameters show with their names and types, not as unnamed "any"
// rows; "Try it out" of a GET answers 200 with the rows; the page's CSP is respected (no
// violation, nothing fetched from elsewhere). Node only, with Chromium (test/helpers/browser.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configForFile, type Config } from '../../server/config/config.ts';
import { browserSkip, openBrowser } from '../helpers/browser.ts';
import { startServer, tempDir, writeXlsx } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const SHARED = ['_limit', '_offset', '_raw', '_format', '_sort', 'If-None-Match', 'Cache-Control'];

test('Swagger UI served at /_docs/{id}: named parameters, Try it out, open and keyed connections', { skip: browserSkip() }, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name', 'City'], ['Ann', 'Oslo'], ['Bo', 'Lima']]);
  await writeXlsx(dir.path('crm.xlsx'), 'Leads', [['Lead', 'Stage'], ['Acme', 'new']]);
  const config: Config = configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' }, admin: { token: TOKEN } });
  const { url } = await startServer(t, config);
  const made = await fetch(`${url}/_admin/connections`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ id: 'crm', source: { type: 'file', path: dir.path('crm.xlsx') } }) });
  assert.equal(made.status, 201, await made.clone().text());
  const key = ((await made.json()) as { newKey: { key: string } }).newKey.key;

  const { page, problems, screenshot, checkAccessibility } = await openBrowser(t, 'api-docs');
  const outside: string[] = [];
  const notFound: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith(url) && !request.url().startsWith('data:')) outside.push(request.url());
  });
  page.on('response', (response) => {
    if (response.status() === 404) notFound.push(response.url());
  });

  /** The operation block of `GET /sheets/book` (the first tab's rows), opened. */
  const listRows = async () => {
    const block = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path[data-path="/sheets/book"]') }).first();
    await block.locator('.opblock-summary-control').click();
    await block.locator('.parameters').waitFor();
    return block;
  };

  await t.test('an open connection: the document loads at once, with a header linking back', async () => {
    await page.goto(`${url}/_docs/book`);
    await page.locator('.swagger-ui .info .title').waitFor();
    assert.match((await page.locator('.swagger-ui .info .title').textContent()) ?? '', /book/);
    assert.equal(await page.locator('#openapi-link').getAttribute('href'), '/sheets/book/openapi.json');
    await screenshot('open-connection');
  });

  await t.test('the seven shared parameters show with their names and types, none as an unnamed row', async () => {
    const block = await listRows();
    const names = (await block.locator('tr[data-param-name] .parameter__name').allTextContents()).map((text) => text.replace(/\s*\*?\s*required$/, '').trim());
    for (const name of SHARED) assert.ok(names.includes(name), `${name} is listed (listed: ${names.join(', ')})`);
    assert.ok(names.every((name) => name !== ''), 'no unnamed parameter row');
    for (const name of SHARED) {
      const type = (await block.locator(`tr[data-param-name="${name}"] .parameter__type`).first().textContent()) ?? '';
      assert.notEqual(type.trim(), 'any', `${name} has a type`);
      assert.notEqual(type.trim(), '', `${name} has a type`);
    }
    await screenshot('parameters');
  });

  await t.test('"Try it out" of a GET answers 200 with the rows', async () => {
    const block = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path[data-path="/sheets/book"]') }).first();
    await block.locator('button.try-out__btn').click();
    await block.locator('tr[data-param-name="_limit"] input').fill('1');
    await block.locator('button.execute').click();
    const status = block.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    assert.equal((await status.textContent())?.trim(), '200');
    const body = (await block.locator('.live-responses-table .response-col_description pre.microlight, .live-responses-table .response-col_description pre').first().textContent()) ?? '';
    assert.deepEqual(JSON.parse(body), [{ Name: 'Ann', City: 'Oslo' }]);
    assert.match((await block.locator('.curl-command').textContent()) ?? '', /_limit=1/);
    await screenshot('try-it-out');
  });

  await t.test('the bar above Swagger UI passes WCAG 2.1 AA', async () => {
    await checkAccessibility('api docs', { include: ['header.bar', '#docs-status'] });
  });

  await t.test('a keyed connection: the page asks for a key, then loads the document and authorizes with it', async () => {
    await page.goto(`${url}/_docs/crm`);
    await page.locator('#docs-key-form').waitFor();
    await screenshot('keyed-asks');
    await page.fill('#docs-key', 'sr_not-a-key');
    await page.click('#docs-key-form button[type=submit]');
    await page.locator('#docs-key-form .problem').waitFor();
    await page.fill('#docs-key', key);
    await page.click('#docs-key-form button[type=submit]');
    await page.locator('.swagger-ui .info .title').waitFor();
    const block = page.locator('.opblock-get', { has: page.locator('.opblock-summary-path[data-path="/sheets/crm"]') }).first();
    await block.locator('.opblock-summary-control').click();
    await block.locator('button.try-out__btn').click();
    await block.locator('button.execute').click();
    const status = block.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor();
    assert.equal((await status.textContent())?.trim(), '200', 'Try it out sent the key');
    assert.match((await block.locator('.curl-command').textContent()) ?? '', /X-Api-Key/);
    await screenshot('keyed-try-it-out');
  });

  await t.test('nothing fetched from elsewhere, no 404 (favicon included), no CSP violation or script error', () => {
    assert.deepEqual(outside, []);
    assert.deepEqual(notFound, []);
    assert.deepEqual(problems, []);
  });
});

test('/_docs/project/: the project docs as an index and plain text; /favicon.ico for any page', { skip: browserSkip() }, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  // Admin API off: the docs and the icon are served all the same.
  const { url } = await startServer(t, configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' } }));
  const { page, problems, checkAccessibility } = await openBrowser(t, 'project-docs');
  await page.goto(`${url}/_docs/project/`);
  await page.getByRole('link', { name: 'api.md', exact: true }).click();
  await page.waitForURL(`${url}/_docs/project/api.md`);
  assert.match((await page.locator('body').textContent()) ?? '', /^# /);
  await page.goto(`${url}/_docs/project/`);
  await checkAccessibility('project docs');
  // Headless Chromium asks for no icon, so the page's icon and /favicon.ico (what a browser asks
  // for on a page without one: the JSON answers) are fetched from the page.
  // An expression as text: Deno's type check has no DOM types (`document`), the page has.
  const icons = await page.evaluate(`Promise.all([...[...document.querySelectorAll('link[rel=icon]')].map((link) => link.href), '/favicon.ico']
    .map(async (href) => new URL(href, location.href).pathname + ' ' + (await fetch(href)).status))`);
  assert.deepEqual(icons, ['/_docs/assets/favicon.svg 200', '/favicon.ico 200']);
  assert.deepEqual(problems, []);
});
