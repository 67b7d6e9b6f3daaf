// The dashboard's remaining rough edges (issue 28, part 6), pinned in headless Chromium; each
// assertion fails on the page before them: the header's usage line kept up with the page's own
// requests and with the Usage screen; on a phone, a compact header (the endpoint and its copy
// button on one line, the facts behind one line to open) and the screens' tabs in one row; toasts
// where they cover no action; the grid's number column named for what it is (the API's index);
// the Data screen's heading naming the tab; the playground's hints from the tab's own columns;
// the Usage screen's Period and Refresh level. Node only, with Chromium (test/helpers/browser.ts).
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { configForFile, type Config } from '../../server/config/config.ts';
import { browserSkip, openBrowser, type BrowserPage } from '../helpers/browser.ts';
import { bookBytes, bookOf } from '../helpers/file-source.ts';
import { startServer, tempDir, writeXlsx } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' };
const skip = browserSkip();

/** A server with "book" (the config file's, open) and "crm" (closed, two tabs); crm's first key. */
async function serve(t: Parameters<typeof tempDir>[0]): Promise<{ url: string; key: string; usage(): Promise<number> }> {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name', 'City'], ['Ann', 'Oslo']]);
  const text = (value: string | number) => (typeof value === 'number' ? { t: 'n' as const, v: value } : { t: 's' as const, v: value });
  await writeFile(dir.path('crm.xlsx'), bookBytes(bookOf([
    { name: 'Leads', cells: [['Lead', 'Stage', 'Value'], ['Acme', 'new', 10], ['Globex', 'won', 20]].map((row) => row.map(text)) },
    { name: 'Owners', cells: [['Owner', 'Team'], ['Kim', 'north']].map((row) => row.map(text)) },
  ]), 'xlsx'));
  const config: Config = configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' }, admin: { token: TOKEN } });
  const { url } = await startServer(t, config);
  const made = await fetch(`${url}/_admin/connections`, { method: 'POST', headers: AUTH, body: JSON.stringify({ id: 'crm', source: { type: 'file', path: dir.path('crm.xlsx') } }) });
  assert.equal(made.status, 201);
  const key = (await made.json()).newKey.key as string;
  const usage = async () => (await (await fetch(`${url}/_admin/connections/crm/usage`, { headers: AUTH })).json()).requests as number;
  return { url, key, usage };
}

async function open(browser: BrowserPage, url: string, connection: string, screen: string): Promise<void> {
  await browser.page.goto(`${url}/#connection=${connection}&screen=${screen}`);
  await browser.page.locator(`#screen[data-screen=${screen}]`).waitFor();
  await browser.page.locator('#screen .loading').first().waitFor({ state: 'detached' });
}

/** The header's count: "3 requests in 2026-11; resets …" -> 3. */
async function headerCount(browser: BrowserPage): Promise<number> {
  return Number(/^(\d+) requests?\b/.exec((await browser.page.locator('#usage').textContent()) ?? '')?.[1]);
}

/** Waits for the header to say `expected` requests (it is read again a moment after a request). */
async function headerSays(browser: BrowserPage, expected: number): Promise<void> {
  await browser.page.locator('#usage', { hasText: new RegExp(`^${expected} requests?\\b`) }).waitFor({ state: 'attached', timeout: 5_000 })
    .catch(async () => assert.fail(`the header says ${await headerCount(browser)} requests, the admin API ${expected}`));
}

// Page expressions as text: Deno's type check has no DOM types.
type Box = { top: number; bottom: number; left: number; right: number };
const boxOf = (browser: BrowserPage, selector: string) => browser.page.locator(selector).first().evaluate((element) => {
  const box = element.getBoundingClientRect();
  return { top: box.top, bottom: box.bottom, left: box.left, right: box.right };
}) as Promise<Box>;

/** The page's visible controls outside the toasts that a toast's box overlaps (their text or id). */
const coveredBy = (browser: BrowserPage, toast: Box) => browser.page.evaluate(`(() => {
  const toast = ${JSON.stringify(toast)};
  return [...document.querySelectorAll('main button, main a[href], main input, main select, main textarea, main summary, main [tabindex="0"]')]
    .filter((control) => control.getClientRects().length > 0)
    .filter((control) => {
      const box = control.getBoundingClientRect();
      return box.width > 0 && box.left < toast.right && box.right > toast.left && box.top < toast.bottom && box.bottom > toast.top;
    })
    .map((control) => control.id || control.textContent.trim());
})()`) as Promise<string[]>;

test('the remaining rough edges on a desktop (1280 px)', { skip }, async (t) => {
  const { url, key, usage } = await serve(t);
  const browser = await openBrowser(t, 'rough-edges');
  const { page, problems, screenshot, checkAccessibility } = browser;
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await browser.signIn(url, TOKEN);

  await t.test('the header\'s usage follows the page\'s own requests and agrees with the Usage screen', async () => {
    await open(browser, url, 'crm', 'playground');
    await page.fill('#playground-key', key);
    await page.press('#playground-key', 'Tab');
    await page.locator('#pg-send').waitFor();
    // The OpenAPI document, read with the key, is a request of crm's: counted.
    await headerSays(browser, await usage());
    const before = await headerCount(browser);
    await page.click('#pg-send');
    await page.locator('#pg-status').waitFor();
    assert.equal(await usage(), before + 1);
    await headerSays(browser, before + 1);
    // A request from elsewhere, then a screen switch: the header reads the usage again.
    (await fetch(`${url}/sheets/crm`, { headers: { 'X-Api-Key': key } })).body?.cancel();
    await page.click('#tab-usage');
    await page.locator('#quota-gauge').waitFor();
    const gauge = Number(/^(\d+) requests this month/.exec((await page.locator('#quota-gauge').textContent()) ?? '')?.[1]);
    assert.equal(gauge, await usage());
    await headerSays(browser, gauge);
  });

  await t.test('Usage: the Period select and Refresh stand level', async () => {
    const [select, refresh] = [await boxOf(browser, '#usage-days'), await boxOf(browser, '#usage-refresh')];
    assert.ok(Math.abs(select.bottom - refresh.bottom) <= 1, `the select ends at ${select.bottom} px, Refresh at ${refresh.bottom}`);
    assert.ok(Math.abs(select.top - refresh.top) <= 1, `the select starts at ${select.top} px, Refresh at ${refresh.top}`);
    await checkAccessibility('usage');
    await screenshot('usage');
  });

  await t.test('Data: "Rows of Leads" with the tab picker, and the number column said to be the API\'s index', async () => {
    await open(browser, url, 'crm', 'data');
    await page.locator('#grid tbody tr').first().waitFor();
    assert.equal(await page.locator('#grid-heading').textContent(), 'Rows of Leads');
    assert.equal(await page.locator('#grid').getAttribute('aria-labelledby'), 'grid-heading');
    assert.equal(await page.locator('#grid thead th').first().textContent(), 'Index');
    assert.deepEqual(await page.locator('#grid tbody th').allTextContents(), ['0', '1']);
    const help = (await page.locator('#grid-index-help').textContent()) ?? '';
    assert.match(help, /number in the API, from 0, as in \/sheets\/crm\/tabs\/Leads\/0; in the sheet it is row index \+ 2/);
    assert.equal(await page.locator('#grid tbody tr').first().locator('.grid-remove').getAttribute('aria-label'), 'Remove the row at index 0');
    await page.selectOption('#grid-tab', 'Owners');
    await page.locator('#grid thead', { hasText: 'Owner' }).waitFor();
    assert.equal(await page.locator('#grid-heading').textContent(), 'Rows of Owners');
    assert.match((await page.locator('#grid-index-example').textContent()) ?? '', /^\/sheets\/crm\/tabs\/Owners\/0$/);
    await page.selectOption('#grid-tab', 'Leads');
    await page.locator('#grid thead', { hasText: 'Lead' }).waitFor();
    await checkAccessibility('data');
    await screenshot('data');
  });

  await t.test('the playground\'s hints name the chosen tab\'s columns', async () => {
    await open(browser, url, 'crm', 'playground');
    await page.locator('#pg-send').waitFor();
    const hint = (selector: string) => page.locator(selector).getAttribute('placeholder');
    assert.equal(await hint('#pg-select'), 'Lead,Stage');
    assert.equal(await hint('#pg-sort'), 'Lead,-Stage');
    await page.selectOption('#pg-shape', 'aggregate');
    assert.equal(await hint('#pg-group'), 'Lead');
    assert.equal(await hint('#pg-agg'), 'count(),sum(Value),avg(Value)');
    await page.selectOption('#pg-tab', { label: 'Owners' });
    assert.equal(await hint('#pg-group'), 'Owner');
    assert.equal(await hint('#pg-agg'), 'count(),sum(Team),avg(Team)');
    await page.selectOption('#pg-shape', 'rows');
    assert.equal(await hint('#pg-select'), 'Owner,Team');
    await screenshot('playground');
  });

  await t.test('a toast covers no action, and is announced', async () => {
    assert.equal(await page.getAttribute('#toasts', 'role'), 'status');
    assert.equal(await page.getAttribute('#toasts', 'aria-live'), 'polite');
    await open(browser, url, 'crm', 'keys');
    await page.fill('#key-name', 'toast test');
    await page.click('#new-key-form button[type=submit]');
    const made = page.locator('#toasts .toast', { hasText: 'Made a key "toast test" for "crm"' });
    await made.waitFor();
    assert.deepEqual(await coveredBy(browser, await boxOf(browser, '#toasts .toast')), []);
    // The form's own button at the foot of the screen (where the page's end brings it): still clear.
    await page.locator('#new-key-form button[type=submit]').evaluate((button) => button.scrollIntoView({ block: 'end' }));
    assert.deepEqual(await coveredBy(browser, await boxOf(browser, '#toasts .toast')), [], 'the toast over the key form');
    await page.click('#hide-key');
    // Settings: the forms' buttons, the page scrolled to its end.
    await open(browser, url, 'crm', 'settings');
    await page.locator('#flags-form button[type=submit]').click();
    await page.locator('#toasts .toast', { hasText: 'crm' }).last().waitFor();
    await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
    for (const each of await page.locator('#toasts .toast').all()) {
      const box = await each.evaluate((element) => { const b = element.getBoundingClientRect(); return { top: b.top, bottom: b.bottom, left: b.left, right: b.right }; });
      assert.deepEqual(await coveredBy(browser, box), [], 'a toast over the Settings forms');
    }
    await screenshot('settings-toast');
  });

  await t.test('no script error and no CSP violation', () => {
    assert.deepEqual(problems, []);
  });
});

test('the connection\'s header on a phone (375 px): compact, the tabs in one row, toasts under the app bar', { skip }, async (t) => {
  const { url } = await serve(t);
  const browser = await openBrowser(t, 'rough-edges-phone', { width: 375, height: 740 });
  const { page, problems, screenshot, checkAccessibility } = browser;
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await browser.signIn(url, TOKEN);
  await open(browser, url, 'crm', 'data');

  const head = await boxOf(browser, '#detail');
  const tabs = await boxOf(browser, '[role=tablist]');
  // Before: about 650 px of header (the facts as tiles, the endpoint's copy button on a line of its own).
  assert.ok(tabs.top - head.top <= 200, `the header takes ${tabs.top - head.top} px before the tabs`);
  const tops = await page.locator('[role=tab]').evaluateAll((each) => each.map((tab) => Math.round(tab.getBoundingClientRect().top)));
  assert.equal(new Set(tops).size, 1, `the tabs are on one row (tops ${tops.join(', ')})`);
  assert.ok(tabs.bottom - tabs.top < 60, 'one row of tabs');
  const [code, copy] = [await boxOf(browser, '#endpoint'), await boxOf(browser, '#copy-endpoint')];
  assert.ok(copy.top < code.bottom && code.top < copy.bottom, 'the endpoint and its copy button on one line');
  assert.ok(copy.right <= 375, `Copy ends at ${copy.right} px`);
  assert.equal(await page.locator('#copy-endpoint').getAttribute('aria-label'), 'Copy the endpoint URL of crm');
  assert.equal(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), 0);
  // The facts: one line to open.
  assert.equal(await page.locator('#facts').evaluate((details) => (details as unknown as { open: boolean }).open), false);
  assert.equal(await page.locator('#access').isVisible(), false);
  await checkAccessibility('phone: the compact header');
  await screenshot('phone-header');
  await page.click('#facts > summary');
  await page.locator('#access').waitFor();
  assert.match((await page.locator('#usage').textContent()) ?? '', /^\d+ requests? in /);
  await screenshot('phone-header-facts');
  // The choice is kept when another screen is opened.
  await page.click('#tab-keys');
  await page.locator('#screen[data-screen=keys]').waitFor();
  assert.equal(await page.locator('#access').isVisible(), true);

  // The last tab, opened by its address: scrolled into the row.
  await open(browser, url, 'crm', 'settings');
  const [row, settings] = [await boxOf(browser, '[role=tablist]'), await boxOf(browser, '#tab-settings')];
  assert.ok(settings.left >= row.left - 1 && settings.right <= row.right + 1, `Settings (${settings.left} to ${settings.right} px) is within the tabs' row (${row.left} to ${row.right})`);
  await page.locator('#flags-form button[type=submit]').click();
  await page.locator('#toasts .toast').first().waitFor();
  await page.evaluate('window.scrollTo(0, 0)');
  const [toast, bar] = [await boxOf(browser, '#toasts .toast'), await boxOf(browser, '.app-bar')];
  assert.ok(toast.top >= bar.bottom, `the toast (from ${toast.top} px) leaves the app bar (to ${bar.bottom}) in reach`);
  assert.ok(toast.left >= 0 && toast.right <= 375, 'the toast is within the screen');
  await screenshot('phone-toast');
  await checkAccessibility('phone: settings with a toast');
  assert.deepEqual(problems, []);
});
