// The dashboard's settings (server/dashboard/settings.js) and the admin token in the playground,
// in headless Chromium: with no API key pasted, the playground shows a closed connection's tabs
// and columns and sends requests with the admin token (not counted); the plan (allowance, period,
// operations, rate limit), read-only and the source are changed through forms, each a PATCH of
// the admin API, checked against what the admin API then answers; a refused change names the
// field; a config file's connection says where to change it. Screenshots, WCAG 2.1 AA in light
// and dark, the keyboard, and a phone-sized viewport.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configForFile } from '../../server/config/config.ts';
import { browserSkip, openBrowser } from '../helpers/browser.ts';
import { startServer, tempDir, writeXlsx } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const ADMIN = { Authorization: `Bearer ${TOKEN}` };
const skip = browserSkip();

test('the dashboard manages a connection: playground with the admin token, plan, rate limit, read-only, source', { skip }, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  await writeXlsx(dir.path('crm.xlsx'), 'Leads', [['Lead', 'Stage'], ['Acme', 'new'], ['Globex', 'won']]);
  await writeXlsx(dir.path('crm-2025.xlsx'), 'Deals', [['Deal', 'Amount'], ['Big one', 100]]);
  const { url } = await startServer(t, configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' }, admin: { token: TOKEN } }));
  const api = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}/_admin${path}`, { method, headers: { ...ADMIN, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return response.json();
  };
  // Closed, with one key nobody pastes into the page.
  await api('POST', '/connections', { id: 'crm', source: { type: 'file', path: dir.path('crm.xlsx') } });

  const { page, problems, screenshot, signIn, checkAccessibility } = await openBrowser(t, 'settings');
  await signIn(url, TOKEN);
  // The screens of the connection's page (Data, Playground, Settings...) are tabs kept in the address.
  const open = (id: string, screen: string) => page.goto(`${url}/#connection=${id}&screen=${screen}`);
  // Notices are toasts; a refusal stays a while, so each step looks for its own words.
  const toast = (text: string) => page.locator('#toasts').getByText(text);
  await open('crm', 'data');

  await t.test('the playground reads a closed connection with the admin token, uncounted', async () => {
    await page.locator('#tabs', { hasText: 'Leads' }).waitFor();
    assert.equal(await page.locator('#openapi-error').count(), 0);
    assert.match((await page.locator('#tabs').textContent()) ?? '', /Lead\s*Stage/);
    await open('crm', 'playground');
    await page.locator('#pg-curl').waitFor();
    assert.match((await page.locator('#pg-curl').textContent()) ?? '', /Authorization: Bearer \$SHEETREST_ADMIN_TOKEN/);
    await page.click('#pg-send');
    await page.locator('#pg-status').getByText('200').waitFor();
    assert.match((await page.locator('#pg-answer').textContent()) ?? '', /Globex/);
    assert.equal((await api('GET', '/connections/crm/usage')).requests, 0);
    await screenshot('playground-admin-token');
  });

  await t.test('the plan and its rate limit, typed with the keyboard', async () => {
    await open('crm', 'settings');
    await page.locator('#plan-form').scrollIntoViewIfNeeded();
    assert.equal(await page.locator('#plan-fields').isHidden(), true, 'no plan: its fields are hidden');
    await page.focus('#plan-none');
    await page.keyboard.press('Space');
    await page.locator('#plan-fields').waitFor();
    await page.focus('#plan-name');
    await page.keyboard.type('pro');
    await page.keyboard.press('Tab');
    await page.keyboard.type('100');
    await page.selectOption('#plan-period', 'day');
    await page.uncheck('#plan-op-delete');
    await page.fill('#plan-rate-requests', '5');
    await page.fill('#plan-rate-seconds', '10');
    await screenshot('plan-filled');
    await page.focus('#plan-rate-seconds');
    await page.keyboard.press('Enter');
    await toast('Saved the plan of "crm".').waitFor();
    assert.equal(await page.locator('#plan').textContent(), 'pro (100 daily limit)');
    const saved = await api('GET', '/connections/crm');
    assert.deepEqual(saved.plan, { name: 'pro', period: 'day', requests: 100, operations: ['read', 'create', 'update'], rateLimit: { requests: 5, perSeconds: 10 } });
    // The form shows what is saved.
    assert.equal(await page.inputValue('#plan-rate-requests'), '5');
    assert.equal(await page.isChecked('#plan-op-delete'), false);
  });

  await t.test('a refused change names the field, and changes nothing', async () => {
    await page.fill('#plan-rate-seconds', '');
    await page.click('#plan-save');
    const notice = toast('plan of "crm" not saved');
    await notice.waitFor();
    assert.match((await notice.textContent()) ?? '', /plan of "crm" not saved: .*rateLimit\.perSeconds/);
    assert.deepEqual((await api('GET', '/connections/crm')).plan.rateLimit, { requests: 5, perSeconds: 10 });
    await screenshot('plan-refused');
  });

  await t.test('read-only, then back', async () => {
    await page.check('#set-readonly');
    await page.click('#flags-save');
    await toast('Saved the settings of "crm".').first().waitFor();
    assert.equal(await page.locator('#writable').textContent(), 'read-only');
    assert.equal((await api('GET', '/connections/crm')).readOnly, true);
    const write = await fetch(`${url}/sheets/crm`, { method: 'POST', headers: { ...ADMIN, 'Content-Type': 'application/json' }, body: '{"Lead": "x"}' });
    assert.equal(write.status, 403);
    await page.uncheck('#set-readonly');
    await page.click('#flags-save');
    await page.locator('#writable', { hasText: 'allowed' }).waitFor();
  });

  await t.test('another workbook as the source: the playground shows its tabs', async () => {
    await page.fill('#source-path', dir.path('crm-2025.xlsx'));
    await page.click('#source-save');
    await toast('Saved the source of "crm".').waitFor();
    assert.match((await page.locator('#source-now').textContent()) ?? '', /crm-2025\.xlsx/);
    await open('crm', 'data');
    await page.locator('#tabs', { hasText: 'Deals' }).waitFor();
    await open('crm', 'settings');
    // A file outside the admin file root is refused with the admin API's one message.
    await page.fill('#source-path', '/etc/elsewhere.xlsx');
    await page.click('#source-save');
    const refused = toast('source of "crm" not saved');
    await refused.waitFor();
    assert.match((await refused.textContent()) ?? '', /admin\.fileRoot/);
    assert.match((await api('GET', '/connections/crm')).source.path, /crm-2025\.xlsx$/);
    await screenshot('settings');
    await checkAccessibility('settings');
  });

  await t.test("a config file's connection says where to change it", async () => {
    await open('book', 'settings');
    await page.locator('#settings-config').waitFor();
    assert.match((await page.locator('#settings-config').textContent()) ?? '', /"book" comes from the config file/);
    assert.equal(await page.locator('#plan-form').count(), 0);
    // Its tabs too, with the admin token: the config connection is open, so no key either way.
    await open('book', 'data');
    await page.locator('#tabs', { hasText: 'People' }).waitFor();
  });

  await t.test('on a phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await open('crm', 'settings');
    await page.locator('#plan-form').waitFor();
    // The settings' forms fit the width (the rest of the page is 28C's layout).
    // Typed by hand: Deno's type check of the tests has no DOM library.
    const wider = await page.evaluate(() => {
      type Box = { id: string; tagName: string; getBoundingClientRect(): { right: number } };
      const doc = (globalThis as unknown as { document: { querySelectorAll(selector: string): Iterable<Box>; documentElement: { clientWidth: number } } }).document;
      return [...doc.querySelectorAll('#settings, #settings *')].filter((element) => element.getBoundingClientRect().right > doc.documentElement.clientWidth + 0.5).map((element) => element.id || element.tagName);
    });
    assert.deepEqual(wider, [], 'settings wider than a phone');
    await screenshot('phone');
  });

  assert.deepEqual(problems, []);
});
