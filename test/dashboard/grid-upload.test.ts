// The data grid and "Upload a workbook" in headless Chromium (test/helpers/browser.ts): a
// workbook dropped on the New connection screen becomes a closed connection whose first key is
// shown once on its Keys screen and whose Data screen's grid shows its rows; the grid sorts by a header, filters through
// /search, edits a cell from the keyboard (PATCH with If-Match), shows a change made meanwhile
// by another client as "changed meanwhile" with a reload button (both ways: the row checked
// after a write of ours, and a 412 on the page's tag), adds and removes a row, and shows a
// read-only connection of 100,000 rows read-only, its first page's time printed as a
// diagnostic (never asserted: figures belong in docs/benchmarks.md).
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { test } from 'node:test';
import { configForFile } from '../../server/config/config.ts';
import { browserSkip, openBrowser } from '../helpers/browser.ts';
import { startServer, tempDir, writeXlsx } from '../helpers/http.ts';

const TOKEN = 'admin-token-0123456789abcdef';
const AUTH = { Authorization: `Bearer ${TOKEN}` };
const HOSTILE_COLUMN = '<img src=x onerror="window.__pwned=1">';
const HOSTILE_CELL = '<script>window.__pwned=2</script>';
const BIG_ROWS = 100_000;
/** What the page functions below use of the page's globals, through a cast: Deno's type check has no DOM types. */
type PageGlobals = { DataTransfer: new () => { items: { add(file: File): void } } };
/** The focused grid cell's column, as an expression (the same reason). */
const FOCUSED_COLUMN = 'document.activeElement.dataset.col';

test('the grid and the upload in headless Chromium', { skip: browserSkip() }, async (t) => {
  const dir = await tempDir(t);
  await writeXlsx(dir.path('book.xlsx'), 'People', [['Name'], ['Ann']]);
  // The file to drop lives outside the server's file root (the page reads it from the "desktop").
  const desktop = await tempDir(t);
  await writeXlsx(desktop.path('Leads 2024.xlsx'), 'Leads', [['Lead', 'Stage', 'Value', HOSTILE_COLUMN], ['Acme', 'new', 10, HOSTILE_CELL], ['Globex', 'won', 250, 'x'], ['Initech', 'won', 40, 'y']]);
  const xlsx = [...new Uint8Array(await readFile(desktop.path('Leads 2024.xlsx')))];
  const big = ['Id,Name,City,Score'];
  for (let i = 0; i < BIG_ROWS; i++) big.push(`${i},Person ${i},${['Oslo', 'Lima', 'Porto'][i % 3]},${(i * 7919) % 1000}`);
  await writeFile(dir.path('big.csv'), `${big.join('\n')}\n`);
  const { url } = await startServer(t, configForFile(dir.path('book.xlsx'), { stateDir: dir.path('state'), log: { level: 'silent' }, admin: { token: TOKEN } } as never));
  const { page, problems, screenshot, signIn, checkAccessibility } = await openBrowser(t, 'grid');
  // No toast sliding in while axe measures its contrast (style.css drops animations for reduced motion).
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await signIn(url, TOKEN);
  let key = '';
  const rowsOf = async () => (await (await fetch(`${url}/sheets/Leads-2024`, { headers: { 'X-Api-Key': key } })).json()) as Record<string, string>[];
  const patch = (index: number, body: object) => fetch(`${url}/sheets/Leads-2024/${index}`, { method: 'PATCH', headers: { 'X-Api-Key': key, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const gridRows = () => page.locator('#grid tbody tr');
  const cell = (row: number, col: number) => page.locator(`#grid td[data-row="${row}"][data-col="${col}"]`);

  await t.test('the New connection screen offers the upload', async () => {
    await page.click('#new-connection-link');
    await page.locator('#new-connection-screen #upload').waitFor();
    await checkAccessibility('new connection');
    await screenshot('new-connection');
  });

  await t.test('a file that is no workbook is refused in the page', async () => {
    const transfer = await page.evaluateHandle(() => {
      const data = new (window as unknown as PageGlobals).DataTransfer();
      data.items.add(new File(['hello'], 'notes.txt'));
      return data;
    });
    await page.dispatchEvent('#new-connection-screen', 'drop', { dataTransfer: transfer });
    await page.locator('#toasts .toast-error', { hasText: /"notes\.txt" is not a workbook/ }).waitFor();
  });

  await t.test('a dropped workbook becomes a closed connection: its first key shown once on Keys, then its grid on Data', async () => {
    const transfer = await page.evaluateHandle((bytes) => {
      const data = new (window as unknown as PageGlobals).DataTransfer();
      data.items.add(new File([new Uint8Array(bytes)], 'Leads 2024.xlsx'));
      return data;
    }, xlsx);
    await page.dispatchEvent('#new-connection-screen', 'drop', { dataTransfer: transfer });
    assert.match((await page.locator('#upload-chosen').textContent()) ?? '', /^Leads 2024\.xlsx \(/);
    assert.equal(await page.locator('#upload-id').inputValue(), 'Leads-2024');
    await page.click('#upload-send');
    await page.locator('#detail h2').getByText('Leads-2024').waitFor();
    assert.equal(await page.getAttribute('#screen', 'data-screen'), 'keys');
    key = (await page.locator('#new-key-value').textContent()) ?? '';
    assert.match(key, /^sr_[\w-]{43}$/);
    await page.locator('#toasts .toast', { hasText: 'Created "Leads-2024" from the uploaded workbook, closed: its first key is shown once.' }).waitFor();
    assert.match((await page.locator('#access').textContent()) ?? '', /^closed/);
    assert.equal((await fetch(`${url}/sheets/Leads-2024`)).status, 401);
    await page.click('#tab-data');
    await gridRows().first().waitFor();
    assert.equal(await gridRows().count(), 3);
    assert.equal(await page.locator('#grid thead th').filter({ hasText: HOSTILE_COLUMN }).count(), 1);
    assert.equal(await page.locator('#grid td').filter({ hasText: HOSTILE_CELL }).count(), 1);
    assert.equal(await page.locator('#detail img').count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), undefined);
    assert.doesNotMatch((await page.locator('#grid-area').textContent()) ?? '', /null/);
    // The same file again: the server keeps the one it has unless asked to replace it.
    const again = await fetch(`${url}/_admin/files/${encodeURIComponent('Leads 2024.xlsx')}`, { method: 'PUT', headers: AUTH, body: new Uint8Array(xlsx) });
    assert.equal(again.status, 409);
    await screenshot('uploaded');
    await checkAccessibility('grid');
  });

  await t.test('sort by a header, ascending then descending', async () => {
    await page.click('#grid thead button:text-is("Value")');
    await page.locator('#grid thead th[aria-sort="ascending"]').waitFor();
    assert.deepEqual(await page.locator('#grid td[data-col="2"]').allTextContents(), ['10', '40', '250']);
    await page.click('#grid thead button:has-text("Value")');
    await page.locator('#grid thead th[aria-sort="descending"]').waitFor();
    assert.deepEqual(await page.locator('#grid td[data-col="2"]').allTextContents(), ['250', '40', '10']);
    await page.click('#grid thead button:has-text("Value")');
    await page.locator('#grid thead th[aria-sort="descending"]').waitFor({ state: 'detached' });
  });

  await t.test('the keyboard: arrows move, Enter edits and saves (PATCH with If-Match), Escape cancels, Tab moves on', async () => {
    await cell(0, 0).click();
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.evaluate(FOCUSED_COLUMN), '1');
    await page.keyboard.press('Enter');
    await page.keyboard.type('lost');
    await page.keyboard.press('Escape');
    assert.equal(await cell(0, 1).textContent(), 'new');
    assert.equal(await page.evaluate(FOCUSED_COLUMN), '1', 'focus is back on the cell');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('open');
    await page.keyboard.press('Tab');
    await page.locator('#grid-status').getByText('Saved Stage of the row at index 0.').waitFor();
    assert.equal(await page.evaluate(FOCUSED_COLUMN), '2', 'Tab moved on');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('11');
    await page.keyboard.press('Enter');
    await page.locator('#grid-status').getByText('Saved Value of the row at index 0.').waitFor();
    assert.deepEqual([(await rowsOf())[0].Stage, (await rowsOf())[0].Value], ['open', '11']);
  });

  await t.test('a change made meanwhile is shown, with the value typed, and a reload', async () => {
    // After a write of ours: the row is read again first, and the change found.
    assert.equal((await patch(1, { Stage: 'lost' })).status, 200);
    await cell(1, 1).dblclick();
    await page.keyboard.press('Control+A');
    await page.keyboard.type('mine');
    await page.keyboard.press('Enter');
    await page.locator('#grid-conflict').waitFor();
    assert.match((await page.locator('#grid-conflict').textContent()) ?? '', /The row at index 1 of "Leads" changed meanwhile, so your Stage "mine" was not saved/);
    assert.equal((await rowsOf())[1].Stage, 'lost', 'the other client\'s change stands');
    await screenshot('changed-meanwhile');
    await page.click('#grid-reload');
    await page.locator('#grid-conflict').waitFor({ state: 'detached' });
    assert.equal(await cell(1, 1).textContent(), 'lost');
    // On a page just read: its tab tag goes with the PATCH, and the server answers 412.
    assert.equal((await patch(2, { Value: '41' })).status, 200);
    await cell(2, 0).dblclick();
    await page.keyboard.type('x');
    await page.keyboard.press('Enter');
    await page.locator('#grid-conflict').waitFor();
    assert.equal((await rowsOf())[2].Lead, 'Initech');
  });

  await t.test('the filter uses /search; add a row; remove one after asking once more', async () => {
    await page.click('#grid-reload');
    await page.fill('#grid-filter', 'glob');
    await page.locator('#grid-range').getByText('Rows 1 to 1 of 1').waitFor();
    await page.fill('#grid-filter', 'Lead=*tech');
    await page.locator('#grid td').getByText('Initech').waitFor();
    assert.equal(await gridRows().count(), 1);
    await page.fill('#grid-filter', 'nothing-like-this');
    await page.locator('#grid-empty').waitFor();
    await page.fill('#grid-filter', '');
    await page.locator('#grid-range').getByText('of 3').waitFor();
    await page.fill('#grid-add input[data-column="Lead"]', 'Umbrella');
    await page.fill('#grid-add input[data-column="Value"]', '7');
    await page.click('#grid-add button[type=submit]');
    await page.locator('#grid-range').getByText('of 4').waitFor();
    assert.equal((await rowsOf())[3].Lead, 'Umbrella');
    const remove = page.locator('#grid tbody tr[data-index="3"] button.grid-remove');
    await remove.click();
    assert.match((await remove.textContent()) ?? '', /Really remove index 3\?/);
    assert.equal((await rowsOf()).length, 4, 'nothing removed on the first press');
    await remove.click();
    await page.locator('#grid-range').getByText('of 3').waitFor();
    assert.deepEqual((await rowsOf()).map((row) => row.Lead), ['Acme', 'Globex', 'Initech']);
  });

  await t.test('a read-only connection of 100,000 rows: pages, read-only, and its first page\'s time', async () => {
    const created = await fetch(`${url}/_admin/connections`, { method: 'POST', headers: { ...AUTH, 'Content-Type': 'application/json' }, body: JSON.stringify({ id: 'big', source: { type: 'file', path: dir.path('big.csv') }, readOnly: true, open: true }) });
    assert.equal(created.status, 201);
    await page.evaluate(() => performance.clearMeasures('sheetrest:grid-first-page'));
    await page.evaluate(() => {
      location.hash = 'connection=big';
    });
    // The page lists connections as it last read them: a reload reads them again (the admin token stays in the tab).
    await page.reload();
    await page.locator('#detail h2').getByText('big').waitFor();
    await page.locator('#grid-range').getByText(`Rows 1 to 100 of ${BIG_ROWS}`).waitFor();
    const ms = await page.evaluate(() => performance.getEntriesByName('sheetrest:grid-first-page').at(-1)?.duration);
    t.diagnostic(`grid: first page of a ${BIG_ROWS}-row tab drawn ${ms?.toFixed(1)} ms after the grid opened (its /tabs and page requests included)`);
    assert.match((await page.locator('#grid-read-only').textContent()) ?? '', /Read-only: "big" is set read-only/);
    assert.equal(await page.locator('#grid').getAttribute('aria-readonly'), 'true');
    await cell(0, 1).click();
    await page.keyboard.press('Enter');
    assert.equal(await page.locator('#grid input').count(), 0, 'no editing');
    assert.equal(await page.locator('#grid-add').count(), 0);
    await page.click('#grid-next');
    await page.locator('#grid-range').getByText(`Rows 101 to 200 of ${BIG_ROWS}`).waitFor();
    await page.click('#grid thead button:has-text("Score")');
    await page.locator('#grid thead th[aria-sort="ascending"]').waitFor();
    assert.equal(await cell(0, 3).textContent(), '0');
    await screenshot('big-read-only');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot('phone');
    assert.ok(await page.evaluate('document.documentElement.scrollWidth <= innerWidth + 1'), 'the page does not scroll sideways on a phone (the grid scrolls inside its box)');
    await checkAccessibility('read-only grid');
  });

  assert.deepEqual(problems, []);
});
