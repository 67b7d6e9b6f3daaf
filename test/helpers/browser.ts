// The dashboard's browser tests share this: headless Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core; nothing is downloaded), a page that collects its own errors,
// numbered screenshots in a folder the test names, signing in with the admin token, and an
// accessibility check of the screen as it is (axe-core run inside the page, WCAG 2.1 A and AA
// rules, in the light and the dark color scheme).
//
//   const skip = browserSkip();
//   test('the grid', { skip }, async (t) => {
//     const { url } = await startServer(t, config);
//     const { page, screenshot, signIn, checkAccessibility } = await openBrowser(t, 'grid');
//     await signIn(url, TOKEN);
//     await screenshot('connection');
//     await checkAccessibility('connection');
//   });
//
// Node only: playwright-core's driver is not supported on Deno or Bun, so there a browser test
// is skipped with that reason; skipped too, with the reason, when /usr/bin/chromium is missing
// (.ci/run installs Debian's chromium).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { RUNTIME } from './http.ts';

export const CHROMIUM = '/usr/bin/chromium';

/** Why browser tests cannot run here, or false when they can. */
export function browserSkip(): string | false {
  if (RUNTIME !== 'node') return `browser tests run on Node only (playwright-core does not support ${RUNTIME})`;
  if (!existsSync(CHROMIUM)) return `${CHROMIUM} is missing (apt-get install chromium)`;
  return false;
}

export interface BrowserPage {
  page: Page;
  /** Where this test's screenshots go (printed as a diagnostic). */
  shots: string;
  /** Errors the page threw or logged; a test asserts it stays empty. */
  problems: string[];
  screenshot(name: string): Promise<void>;
  /** Opens the dashboard at `url` and signs in with the admin token. */
  signIn(url: string, token: string): Promise<void>;
  /**
   * Runs axe-core's WCAG 2.1 A/AA rules on the page as it is now, in both color schemes; `context`
   * (axe's `{ include: [selectors] }`) limits it to a part of the page (a third party's widget left out).
   */
  checkAccessibility(screen: string, context?: { include: string[] }): Promise<void>;
}

const AXE_SOURCE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** A fresh page in a headless Chromium that closes when the test ends. */
export async function openBrowser(t: TestContext, name: string, viewport = { width: 1280, height: 900 }): Promise<BrowserPage> {
  const { chromium } = await import('playwright-core');
  const shots = await mkdtemp(join(tmpdir(), `sheetrest-${name}-shots-`));
  t.diagnostic(`screenshots: ${shots}`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  t.after(() => browser.close());
  const page = await browser.newPage({ viewport, permissions: ['clipboard-read', 'clipboard-write'] });
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    // Chromium logs every 4xx the page fetches; those are the tests' own 401s, 404s and 412s.
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) problems.push(message.text());
  });
  let shot = 0;
  const screenshot = async (what: string) => {
    await page.screenshot({ path: join(shots, `${String(++shot).padStart(2, '0')}-${what}.png`), fullPage: true });
  };

  const signIn = async (url: string, token: string) => {
    await page.goto(`${url}/`, { waitUntil: 'load' });
    await page.locator('#admin-token').fill(token);
    await page.locator('#sign-in button[type=submit]').click();
    await page.locator('#connection-list').waitFor();
  };

  const checkAccessibility = async (screen: string, context?: { include: string[] }) => {
    for (const colorScheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme });
      // Evaluated through the driver, not added as a script tag: the dashboard's Content-Security-Policy
      // (script-src 'self') rightly refuses inline scripts.
      if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(await readFile(AXE_SOURCE, 'utf8'));
      const violations = await page.evaluate(async (include) => {
        // `window.document` through a cast: Deno's type check has no DOM types.
        const page = window as unknown as { document: unknown };
        const axe = (window as unknown as { axe: { run(context: unknown, options: object): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> } }).axe;
        const result = await axe.run(include === null ? page.document : { include }, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
        return result.violations.map((each) => `${each.id} (${each.impact}): ${each.help} at ${each.nodes.map((node) => node.target.join(' ')).join(', ')}`);
      }, context?.include ?? null);
      assert.deepEqual(violations, [], `${screen} in the ${colorScheme} scheme breaks WCAG 2.1 AA rules`);
    }
    await page.emulateMedia({ colorScheme: null });
  };

  return { page, shots, problems, screenshot, signIn, checkAccessibility };
}
