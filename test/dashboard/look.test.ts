// The dashboard's look and feel in headless Chromium (issue 28, part 6): every screen passes
// axe-core's WCAG 2.1 AA rules in the light and the dark scheme (and with the theme toggle's
// choice, which outlives a reload), nothing scrolls sideways at 375 px, the tabs work from the
// keyboard, focus follows the action (opening a connection, making and revoking a key), notices
// name things and go away by themselves, the endpoint URL and the curl copy, the page's icons
// answer 200, and empty states say what to do. Node only, with Chromium (test/helpers/browser.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configForFile, type Config } from '../../server/config/config.ts';
import { browserSkip, openBrowser, type BrowserPage } from '../helpers/browser.ts';
import { startServer, tempDir, writeXlsx } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const SCREENS = ['data', 'keys', 'usage', 'webhooks', 'playground', 'settings'];

async function serve(t: Parameters<typeof tempDir>[0]): Promise<{ url: string; crm: string }> {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name', 'City'], ['Ann', 'Oslo']]);
  await writeXlsx(dir.path('crm.xlsx'), 'Leads', [['Lead', 'Stage'], ['Acme', 'new']]);
  const config: Config = configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' }, admin: { token: TOKEN } });
  const { url } = await startServer(t, config);
  return { url, crm: dir.path('crm.xlsx') };
}

/** Opens a screen of a connection through the address, and waits for it to be drawn (its loading state gone). */
async function open(browser: BrowserPage, url: string, connection: string, screen: string): Promise<void> {
  await browser.page.goto(`${url}/#connection=${connection}&screen=${screen}`);
  await browser.page.locator(`#screen[data-screen=${screen}]`).waitFor();
  await browser.page.locator('#screen .loading').first().waitFor({ state: 'detached' });
}

// Expressions as text: Deno's type check has no DOM types (`document`), the page has.
const activeId = (browser: BrowserPage) => browser.page.evaluate("document.activeElement?.id ?? ''") as Promise<string>;
const inPage = (browser: BrowserPage, expression: string) => browser.page.evaluate(expression) as Promise<string>;

test('the dashboard\'s look: accessible screens in both themes, keyboard, focus, notices, copy', { skip: browserSkip() }, async (t) => {
  const { url, crm } = await serve(t);
  const browser = await openBrowser(t, 'look');
  const { page, problems, screenshot, checkAccessibility } = browser;
  // No toast sliding in while axe measures its contrast (style.css drops animations for reduced motion).
  await page.emulateMedia({ reducedMotion: 'reduce' });

  await t.test('the sign-in screen', async () => {
    await page.goto(`${url}/`);
    await page.locator('#sign-in').waitFor();
    await checkAccessibility('sign-in');
    await screenshot('sign-in');
  });

  await t.test('the page\'s icons answer 200 (SVG and /favicon.ico)', async () => {
    const icons = await page.evaluate(`Promise.all([...document.querySelectorAll('link[rel=icon]')].map(async (link) => {
      const response = await fetch(link.href);
      return new URL(link.href).pathname + ' ' + response.status + ' ' + response.headers.get('content-type');
    }))`);
    assert.deepEqual(icons, ['/_dashboard/favicon.svg 200 image/svg+xml', '/favicon.ico 200 image/x-icon']);
  });

  await t.test('signing in moves on to the connections; a new connection starts on its Keys screen with focus on the key\'s copy button', async () => {
    await browser.signIn(url, TOKEN);
    await page.click('#new-connection-link');
    await page.locator('#new-connection-screen').waitFor();
    assert.equal(await activeId(browser), 'new-heading', 'focus on the screen opened');
    await checkAccessibility('new connection');
    await screenshot('new-connection');
    await page.fill('#new-id', 'crm');
    await page.fill('#new-path', crm);
    await page.click('#new-connection button[type=submit]');
    await page.locator('#new-key-value').waitFor();
    assert.equal(await page.getAttribute('#screen', 'data-screen'), 'keys');
    assert.equal(await activeId(browser), 'copy-key', 'focus on what changed: the key shown once');
    await page.locator('#toasts').getByText('Created "crm", closed: its first key is shown once.').waitFor();
    assert.equal(await page.getAttribute('#toasts', 'role'), 'status');
    await checkAccessibility('keys with a new key');
    await screenshot('keys-new-key');
  });

  await t.test('every screen of a connection passes WCAG 2.1 AA in light and dark', async () => {
    for (const connection of ['crm', 'book']) {
      for (const screen of SCREENS) {
        await open(browser, url, connection, screen);
        await checkAccessibility(`${connection}: ${screen}`);
        await screenshot(`${connection}-${screen}`);
      }
    }
    // An empty state says what to do.
    await open(browser, url, 'book', 'keys');
    assert.match((await page.locator('#keys-empty').textContent()) ?? '', /open.*Create a key/);
    await open(browser, url, 'book', 'webhooks');
    await page.locator('#webhooks-empty').waitFor();
    assert.match((await page.locator('#webhooks-empty').textContent()) ?? '', /Add a receiver's URL/);
  });

  await t.test('the tabs from the keyboard: arrows, Home and End open the next screen and keep focus on its tab', async () => {
    await open(browser, url, 'book', 'data');
    await page.focus('#tab-data');
    await page.keyboard.press('ArrowRight');
    await page.locator('#screen[data-screen=keys]').waitFor();
    assert.equal(await activeId(browser), 'tab-keys');
    await page.keyboard.press('End');
    await page.locator('#screen[data-screen=settings]').waitFor();
    assert.equal(await activeId(browser), 'tab-settings');
    await page.keyboard.press('ArrowRight'); // wraps around
    await page.locator('#screen[data-screen=data]').waitFor();
    assert.equal(await activeId(browser), 'tab-data');
    await page.keyboard.press('ArrowLeft');
    await page.locator('#screen[data-screen=settings]').waitFor();
    await page.keyboard.press('Home');
    await page.locator('#screen[data-screen=data]').waitFor();
    assert.deepEqual(await page.locator('[role=tab]').evaluateAll((tabs) => tabs.map((tab) => tab.getAttribute('tabindex'))), ['0', '-1', '-1', '-1', '-1', '-1'], 'one tab stop');
    // Tab moves on into the screen; Enter on a connection in the sidebar opens it, focus on its heading.
    await page.focus('#connection-list a[href="#connection=crm"]');
    await page.keyboard.press('Enter');
    await page.locator('#connection-heading').getByText('crm').waitFor();
    assert.equal(await activeId(browser), 'connection-heading');
  });

  await t.test('focus follows the action: a key made focuses its copy button, a key revoked the list it left; notices name the key and go away', async () => {
    await open(browser, url, 'crm', 'keys');
    await page.fill('#key-name', 'look test');
    await page.keyboard.press('Enter');
    await page.locator('#new-key-value').waitFor();
    assert.equal(await activeId(browser), 'copy-key');
    const made = page.locator('#toasts .toast', { hasText: 'Made a key "look test" for "crm"' });
    await made.waitFor();
    await page.keyboard.press('Enter'); // the focused copy button
    await page.locator('#copy-key').getByText('Copied').waitFor();
    const revoke = page.locator('#keys tr', { hasText: 'look test' }).locator('button.danger');
    await revoke.click();
    await revoke.click();
    await page.locator('#toasts .toast', { hasText: /Revoked sr_.*… \(look test\) of "crm"/ }).waitFor();
    // The notice comes first, focus once the list is drawn again without the key (a CI run looked in between).
    await page.locator('#keys tr', { hasText: 'look test' }).waitFor({ state: 'detached' });
    await page.waitForFunction("document.activeElement?.id === 'keys-heading'", undefined, { timeout: 5_000 }).catch(() => undefined);
    assert.equal(await activeId(browser), 'keys-heading');
    // Notices go away by themselves (6 s; errors 12 s), unless the pointer rests on one.
    await page.mouse.move(0, 0);
    await made.waitFor({ state: 'detached', timeout: 10_000 });
  });

  await t.test('copy everything: the endpoint URL, the curl; links to openapi.json and the API docs', async () => {
    await open(browser, url, 'book', 'playground');
    await page.click('#copy-endpoint');
    await page.locator('#copy-endpoint').getByText('Copied').waitFor();
    const clipboard = () => page.evaluate(() => (navigator as Navigator & { clipboard: { readText(): Promise<string> } }).clipboard.readText());
    assert.equal(await clipboard(), `${url}/sheets/book`);
    await page.fill('#pg-limit', '1');
    await page.click('#copy-curl');
    await page.locator('#copy-curl').getByText('Copied').waitFor();
    assert.equal(await clipboard(), await page.locator('#pg-curl').textContent());
    assert.match(await clipboard(), /_limit=1/);
    assert.equal(await page.getAttribute('#openapi-link', 'href'), '/sheets/book/openapi.json');
    assert.equal(await page.getAttribute('#api-docs-link', 'href'), '/_docs/book');
    assert.equal((await fetch(`${url}/_docs/book`)).status, 200);
  });

  await t.test('the theme toggle: system, light, dark, kept across a reload, both passing WCAG AA', async () => {
    await open(browser, url, 'crm', 'keys');
    assert.equal(await inPage(browser, "document.documentElement.dataset.theme ?? 'system'"), 'system');
    await page.click('#theme-toggle');
    assert.equal(await inPage(browser, 'document.documentElement.dataset.theme'), 'light');
    await page.click('#theme-toggle');
    assert.equal(await inPage(browser, "[document.documentElement.dataset.theme, localStorage.getItem('sheetrest.theme')].join()"), 'dark,dark');
    assert.equal(await activeId(browser), 'theme-toggle');
    await page.reload();
    await page.locator('#screen[data-screen=keys]').waitFor();
    assert.equal(await inPage(browser, 'document.documentElement.dataset.theme'), 'dark', 'set before the first paint by theme.js');
    const background = await inPage(browser, 'getComputedStyle(document.body).backgroundColor');
    // The dark choice holds whatever the system prefers: checked under both.
    await checkAccessibility('keys, dark chosen');
    await page.emulateMedia({ colorScheme: 'light' });
    assert.equal(await inPage(browser, 'getComputedStyle(document.body).backgroundColor'), background);
    await screenshot('keys-dark-chosen');
    await page.click('#theme-toggle');
    assert.equal(await inPage(browser, "[document.documentElement.dataset.theme ?? 'system', localStorage.getItem('sheetrest.theme')].join()"), 'system,');
    await page.emulateMedia({ colorScheme: null });
  });

  await t.test('the server unreachable: an error state with "Try again"', async () => {
    await page.route('**/_admin', (route) => route.abort());
    await page.reload();
    await page.locator('#unreachable').waitFor();
    assert.equal(await activeId(browser), 'retry');
    await checkAccessibility('unreachable');
    await screenshot('unreachable');
    await page.unroute('**/_admin');
    await page.click('#retry');
    await page.locator('#connection-list').waitFor();
  });

  await t.test('no script error and no CSP violation', () => {
    assert.deepEqual(problems, []);
  });
});

test('the dashboard on a phone (375 px): no sideways scrolling on any screen, and accessible', { skip: browserSkip() }, async (t) => {
  const { url, crm } = await serve(t);
  const browser = await openBrowser(t, 'look-phone', { width: 375, height: 740 });
  const asAdmin = (path: string, body: unknown) => fetch(`${url}/_admin${path}`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const { page, problems, screenshot, checkAccessibility } = browser;
  const overflow = () => page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth') as Promise<number>;
  await page.goto(`${url}/`);
  await page.locator('#sign-in').waitFor();
  assert.equal(await overflow(), 0, 'sign-in');
  await browser.signIn(url, TOKEN);
  // A key made, so the Keys screen has its widest content: the key box and a table row.
  assert.equal((await asAdmin('/connections', { id: 'crm', source: { type: 'file', path: crm } })).status, 201);
  const made = await asAdmin('/connections/crm/keys', { name: 'a rather long name for a phone' });
  assert.equal(made.status, 201);
  const key = ((await made.json()) as { key: string }).key;
  await page.reload();
  for (const screen of SCREENS) {
    await open(browser, url, 'crm', screen);
    if (screen === 'playground') {
      await page.fill('#playground-key', key);
      await page.press('#playground-key', 'Enter');
      await page.locator('#playground-key').blur();
      await page.selectOption('#pg-shape', 'query');
      await page.click('#pg-add-condition');
      await page.click('#pg-add-or');
    }
    assert.equal(await overflow(), 0, `${screen}: the page is no wider than the phone`);
    await screenshot(`phone-${screen}`);
  }
  // With the key given, Data shows its grid (it scrolls inside its box) and Usage its chart and tables.
  await open(browser, url, 'crm', 'data');
  await page.locator('#grid tbody tr').first().waitFor();
  assert.equal(await overflow(), 0, 'data, with the grid: the page is no wider than the phone');
  await screenshot('phone-data-grid');
  await open(browser, url, 'crm', 'usage');
  await page.locator('#usage-chart canvas').waitFor();
  await page.locator('#recent-requests').waitFor();
  assert.equal(await overflow(), 0, 'usage, with the chart and tables: the page is no wider than the phone');
  await screenshot('phone-usage-chart');
  await page.goto(`${url}/#new`);
  await page.locator('#new-connection-screen').waitFor();
  assert.equal(await overflow(), 0, 'new connection');
  await checkAccessibility('phone: new connection');
  await open(browser, url, 'crm', 'keys');
  await checkAccessibility('phone: keys');
  assert.deepEqual(problems, []);
});
