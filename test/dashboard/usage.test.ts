// The dashboard's usage screen in headless Chromium: the quota meter, requests per day as a chart
// (uPlot from node_modules) and as a table, per key and per operation, and the recent requests
// with errors marked by a word; the period and "Only errors" by keyboard; the empty state; a phone
// viewport; WCAG 2.1 AA in light and dark. Screenshots go to the folder the test prints.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configForFile } from '../../server/config/config.ts';
import { startServer, tempDir, writeXlsx } from '../helpers/http.ts';
import { browserSkip, openBrowser } from '../helpers/browser.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
const skip = browserSkip();

test('the usage screen: meter, chart, per key and operation, recent requests with errors marked', { skip }, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  await writeXlsx(dir.path('crm.xlsx'), 'Leads', [['Lead', 'Stage'], ['Acme', 'new'], ['Globex', 'won']]);
  const { url } = await startServer(t, configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' } }, { env: { SHEETREST_ADMIN_TOKEN: TOKEN } }));
  const admin = async (method: string, path: string, body?: unknown) => (await fetch(`${url}/_admin${path}`, { method, headers: AUTH, body: body === undefined ? undefined : JSON.stringify(body) })).json();
  const created = await admin('POST', '/connections', { id: 'crm', source: { type: 'file', path: dir.path('crm.xlsx') } });
  await admin('PATCH', '/connections/crm', { plan: { name: 'starter', monthlyRequests: 20 } });
  const reports = await admin('POST', '/connections/crm/keys', { name: 'reports <b>', operations: ['read'] });
  const get = async (path: string, key?: string) => (await fetch(url + path, { headers: key === undefined ? {} : { 'X-Api-Key': key } })).body?.cancel();
  for (let n = 0; n < 3; n++) await get('/sheets/crm', created.newKey.key);
  await get('/sheets/crm/search?Lead=acme', reports.key);
  await get('/sheets/crm/NoSuchColumn/x', reports.key);
  await get('/sheets/crm');

  const { page, problems, screenshot, signIn, checkAccessibility } = await openBrowser(t, 'usage');
  // The page's own requests to a connection (the Data screen's grid and OpenAPI document, the
  // playground's) would be counted too, at moments of their own: kept out of this test's counts.
  await page.route(/\/sheets\//, (route) => route.fulfill({ status: 503, contentType: 'application/json', body: '{"error":"upstream_unavailable","message":"Not in this test."}' }));
  await signIn(url, TOKEN);
  /** Opens a connection from the sidebar, then its Usage tab. */
  const openUsage = async (id: string) => {
    await page.locator('#connection-list').getByText(id).click();
    await page.locator('#connection-heading').getByText(id).waitFor();
    await page.click('#tab-usage');
    await page.locator('#screen[data-screen=usage]').waitFor();
  };

  await t.test('a connection with no requests says so and what to do', async () => {
    await openUsage('book');
    await page.locator('#usage-summary').waitFor();
    assert.match(await page.locator('#usage-summary').innerText(), /^No requests to book from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}\. Send one from the Playground tab, or with curl: curl http:\/\/127\.0\.0\.1:\d+\/sheets\/book$/);
    assert.match(await page.locator('#recent-empty').innerText(), /No requests to book since this server started/);
    assert.equal(await page.locator('#usage-chart').count(), 0);
    await screenshot('usage-empty');
  });

  await t.test('the meter, the chart, the tables and the recent requests', async () => {
    await openUsage('crm');
    await page.locator('#usage-chart canvas').waitFor();
    const meter = page.locator('#quota-meter');
    // The quota counts what the plan allowed (not the 401): 5 of the 6.
    assert.deepEqual([await meter.getAttribute('value'), await meter.getAttribute('max')], ['5', '20']);
    assert.match(await page.locator('#quota-text').innerText(), /^5 of 20 requests used \(25%\), 15 left; resets /);
    assert.match(await page.locator('#usage-summary').innerText(), /^6 requests from .+, 2 of them errors \(2 4xx, 0 5xx\); the busiest day was \d{4}-\d{2}-\d{2} with 6\.$/);
    assert.equal(await page.locator('#usage-days-table tbody tr').count(), 30);
    const keys = await page.locator('#usage-keys tbody tr').allInnerTexts();
    assert.deepEqual(keys.map((row) => row.split('\t')), [
      [`${created.newKey.prefix}…`, '3', '0', '0'],
      [`reports <b> (${reports.prefix}…)`, '2', '1', '0'],
      ['no valid key (refused)', '1', '1', '0'],
    ]);
    const operations = await page.locator('#usage-operations tbody tr').allInnerTexts();
    assert.deepEqual(operations.map((row) => row.split('\t')), [['read', '5', '2', '0'], ['search', '1', '0', '0']]);
    const rows = await page.locator('#recent-requests tbody tr').allInnerTexts();
    assert.equal(rows.length, 6);
    const cells = rows.map((row) => row.split('\t'));
    assert.deepEqual(cells.map((row) => [row[1], row[2], row[3], row[5]]), [
      ['GET', '/sheets/crm', 'ERROR 401', '—'],
      ['GET', '/sheets/crm/NoSuchColumn/x', 'ERROR 400', 'reports <b>'],
      ['GET', '/sheets/crm/search?Lead=…', '200', 'reports <b>'],
      ['GET', '/sheets/crm', '200', created.newKey.prefix],
      ['GET', '/sheets/crm', '200', created.newKey.prefix],
      ['GET', '/sheets/crm', '200', created.newKey.prefix],
    ]);
    assert.ok(cells.every((row) => /^\d+(\.\d+)? ms$/.test(row[4])), JSON.stringify(cells));
    assert.equal(await page.locator('b').count(), 0, 'a key name is text, never markup');
    await screenshot('usage-light');
    await checkAccessibility('usage');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.waitForTimeout(100);
    await screenshot('usage-dark');
    await page.emulateMedia({ colorScheme: null });
  });

  await t.test('the chart takes the theme\'s colors, and follows the header\'s toggle', async () => {
    // The requests' bars are the legend's swatch's color (--accent), light or dark.
    const swatch = () => page.evaluate("getComputedStyle(document.querySelector('.usage-swatch-requests')).backgroundColor") as Promise<string>;
    const light = await swatch();
    // system -> light -> dark
    await page.click('#theme-toggle');
    await page.click('#theme-toggle');
    assert.equal(await page.getAttribute('html', 'data-theme'), 'dark');
    const dark = await swatch();
    assert.notEqual(dark, light);
    // The redraw replaces uPlot's canvas with one drawn in the dark swatch's color (polled from
    // here: a waitForFunction text would need unsafe-eval under the page's CSP).
    const [r, g, b] = dark.match(/\d+/g)!.map(Number);
    const drawnInDark = () => page.evaluate(`(() => {
      const canvas = document.querySelector('#usage-chart canvas');
      if (canvas === null) return false;
      const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
      for (let at = 0; at < data.length; at += 4) if (data[at] === ${r} && data[at + 1] === ${g} && data[at + 2] === ${b}) return true;
      return false;
    })()`) as Promise<boolean>;
    let drawn = false;
    for (let tries = 0; tries < 50 && !drawn; tries++) {
      drawn = await drawnInDark();
      if (!drawn) await page.waitForTimeout(100);
    }
    assert.ok(drawn, `the chart is redrawn in the dark theme's ${dark}`);
    await screenshot('usage-toggled-dark');
    await checkAccessibility('usage, dark by the toggle');
    await page.click('#theme-toggle'); // back to the system's
    assert.equal(await page.getAttribute('html', 'data-theme'), null);
  });

  await t.test('keyboard: the period and "Only errors"', async () => {
    await page.focus('#usage-days');
    await page.keyboard.press('Home');
    // Waited for with locators: a waitForFunction text would need unsafe-eval under the page's CSP, and Deno's type check has no DOM types.
    await page.locator('#usage-days-table tbody tr:nth-child(8)').waitFor({ state: 'detached' });
    assert.equal(await page.locator('#usage-days-table tbody tr').count(), 7);
    assert.equal(await page.locator('#usage-days').inputValue(), '7');
    await page.focus('#usage-only-errors');
    await page.keyboard.press('Space');
    await page.locator('#recent-requests tbody tr:nth-child(3)').waitFor({ state: 'detached' });
    assert.equal(await page.locator('#recent-requests tbody tr').count(), 2);
    assert.match(await page.locator('#recent-requests caption').innerText(), /The last 2 failed requests, newest first \(2 of 6 failed\)/);
    await screenshot('usage-only-errors');
    await checkAccessibility('usage, only errors');
  });

  await t.test('a phone-sized viewport: the usage section fits the screen, its tables scroll', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.locator('#usage-chart canvas').waitFor();
    // Expressions as text: Deno's type check has no DOM types.
    const wide = await page.evaluate(`[...document.querySelectorAll('section.usage *')]
      .filter((each) => each.closest('.usage-scroll') === null && each.getBoundingClientRect().right > innerWidth)
      .map((each) => each.tagName.toLowerCase() + '#' + each.id + '.' + each.className)`);
    assert.deepEqual(wide, [], 'nothing of the usage section is wider than the screen');
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= innerWidth'), 'the page does not scroll sideways');
    const scrolls = await page.evaluate("[...document.querySelectorAll('section.usage .usage-scroll')].map((each) => each.getBoundingClientRect().right <= innerWidth)") as boolean[];
    assert.ok(scrolls.length >= 3 && scrolls.every(Boolean), 'wide tables scroll inside the screen');
    await screenshot('usage-phone');
  });

  assert.deepEqual(problems, []);
});
