// What a new user's first hour showed (issue 28, part 6), pinned in headless Chromium: no stray
// word "null" on the sign-in or an empty Usage screen; the sign-in names the token file; a key with
// no name and no end says so; a two-step button ("Revoke" -> "Really revoke?") goes back on Escape
// and when focus leaves; a toast that appears under a resting pointer still goes away; the forms
// have headings; on a phone the keys are cards whose Rotate and Revoke are within the screen.
// Node only, with Chromium (test/helpers/browser.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configForFile, type Config } from '../../server/config/config.ts';
import { browserSkip, openBrowser, type BrowserPage } from '../helpers/browser.ts';
import { startServer, tempDir, writeXlsx } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';

async function serve(t: Parameters<typeof tempDir>[0]): Promise<string> {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name', 'City'], ['Ann', 'Oslo']]);
  await writeXlsx(dir.path('crm.xlsx'), 'Leads', [['Lead', 'Stage'], ['Acme', 'new']]);
  const config: Config = configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' }, admin: { token: TOKEN } });
  const { url } = await startServer(t, config);
  const made = await fetch(`${url}/_admin/connections`, { method: 'POST', headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ id: 'crm', source: { type: 'file', path: dir.path('crm.xlsx') } }) });
  assert.equal(made.status, 201);
  return url;
}

async function open(browser: BrowserPage, url: string, connection: string, screen: string): Promise<void> {
  await browser.page.goto(`${url}/#connection=${connection}&screen=${screen}`);
  await browser.page.locator(`#screen[data-screen=${screen}]`).waitFor();
  await browser.page.locator('#screen .loading').first().waitFor({ state: 'detached' });
}

// Expressions as text: Deno's type check has no DOM types (`document`), the page has.
const bodyText = (browser: BrowserPage) => browser.page.evaluate('document.body.innerText') as Promise<string>;

test('the first hour: texts that name things, buttons that go back, toasts that go away', { skip: browserSkip() }, async (t) => {
  const url = await serve(t);
  const browser = await openBrowser(t, 'first-hour');
  const { page, problems, screenshot, checkAccessibility } = browser;
  await page.emulateMedia({ reducedMotion: 'reduce' });

  await t.test('the sign-in: no stray "null" in the app bar, and where the token is', async () => {
    await page.goto(`${url}/`);
    await page.locator('#sign-in').waitFor();
    assert.deepEqual(await page.locator('#who > *').evaluateAll((tools) => tools.map((tool) => tool.id)), ['theme-toggle', 'project-docs']);
    assert.doesNotMatch(await bodyText(browser), /\bnull\b/);
    assert.match((await page.locator('#sign-in-help').textContent()) ?? '', /SHEETREST_ADMIN_TOKEN.*npm start -- --admin.*\.sheetrest\/admin-token/);
  });

  await t.test('Usage before any request: no "null", no empty table of days, and the curl as code', async () => {
    await browser.signIn(url, TOKEN);
    await open(browser, url, 'book', 'usage');
    await page.locator('#usage-summary').waitFor();
    assert.doesNotMatch(await page.locator('#screen').innerText(), /\bnull\b/);
    assert.equal(await page.locator('#usage-days-table').count(), 0, 'no "numbers per day" when there are none');
    assert.match((await page.locator('#usage-summary code').textContent()) ?? '', /^curl http:\/\/127\.0\.0\.1:\d+\/sheets\/book$/);
    assert.match((await page.locator('#quota-gauge').textContent()) ?? '', /no plan, so no limit/);
    // A closed connection's curl carries the key it needs.
    await open(browser, url, 'crm', 'usage');
    await page.locator('#usage-summary').waitFor();
    assert.match((await page.locator('#usage-summary code').textContent()) ?? '', /^curl -H "X-Api-Key: \$SHEETREST_KEY" http:\/\/127\.0\.0\.1:\d+\/sheets\/crm$/);
  });

  await t.test('a key with no name and no end says so; Revoke asks once more, and goes back on Escape or when focus leaves', async () => {
    await open(browser, url, 'crm', 'keys');
    assert.equal(await page.locator('#new-key-form').getAttribute('aria-labelledby'), 'new-key-heading');
    assert.equal(await page.locator('#new-key-heading').textContent(), 'Create a key for crm');
    const row = page.locator('#keys tbody tr').first();
    assert.equal(await row.locator('td[data-label=Name]').textContent(), 'no name');
    assert.equal(await row.locator('td[data-label=Ends]').textContent(), 'never');
    const revoke = row.locator('button.danger');
    await revoke.click();
    assert.match((await revoke.textContent()) ?? '', /Really revoke the last key\?/);
    await page.keyboard.press('Escape');
    assert.equal(await revoke.textContent(), 'Revoke');
    await revoke.click();
    await page.keyboard.press('Shift+Tab');
    assert.equal(await revoke.textContent(), 'Revoke', 'focus left: the question is taken back');
    assert.equal(await page.locator('#keys tbody tr').count(), 1, 'nothing revoked');
    await checkAccessibility('keys');
    await screenshot('keys');
  });

  await t.test('a toast that appears under the resting pointer still goes away', async () => {
    await page.fill('#key-name', 'pointer test');
    // The pointer rests in the toasts' corner (bottom left), the form is sent with Enter.
    await page.mouse.move(60, 900 - 30);
    await page.press('#key-name', 'Enter');
    const made = page.locator('#toasts .toast', { hasText: 'Made a key "pointer test" for "crm"' });
    await made.waitFor();
    await made.waitFor({ state: 'detached', timeout: 10_000 });
    await page.click('#hide-key');
  });

  await t.test('the webhook form: a heading, its URL first', async () => {
    await open(browser, url, 'crm', 'webhooks');
    await page.locator('#new-webhook-form').waitFor();
    assert.equal(await page.locator('#new-webhook-heading').textContent(), 'Add a webhook to crm');
    assert.equal(await page.locator('#new-webhook-form input').first().getAttribute('id'), 'webhook-url');
    await checkAccessibility('webhooks');
    await screenshot('webhooks');
  });

  await t.test('no script error and no CSP violation', () => {
    assert.deepEqual(problems, []);
  });
});

test('the keys on a phone (375 px): cards with Rotate and Revoke within the screen', { skip: browserSkip() }, async (t) => {
  const url = await serve(t);
  const browser = await openBrowser(t, 'first-hour-phone', { width: 375, height: 740 });
  const { page, problems, screenshot, checkAccessibility } = browser;
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await browser.signIn(url, TOKEN);
  await open(browser, url, 'crm', 'keys');
  const buttons = await page.locator('#keys tbody tr').first().locator('button').evaluateAll((each) => each.map((button) => {
    const box = button.getBoundingClientRect();
    return { text: button.textContent, right: Math.round(box.right) };
  }));
  assert.deepEqual(buttons.map((button) => button.text), ['Rotate', 'Revoke']);
  for (const button of buttons) assert.ok(button.right <= 375, `${button.text} ends at ${button.right} px, beyond the phone's 375`);
  assert.equal(await page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth'), 0);
  await checkAccessibility('phone: keys as cards');
  await screenshot('phone-keys');
  assert.deepEqual(problems, []);
});
