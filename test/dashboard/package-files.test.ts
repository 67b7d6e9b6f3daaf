// The npm packages' files the dashboard serves from node_modules under fixed names
// (`/_dashboard/vendor/uplot.js`, uPlot's ES module for the usage chart, and its style sheet):
// their bytes, type, the page's CSP and caching headers, and no other file of the package or of
// node_modules reachable by any spelling.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { loadDashboard, PACKAGE_FILES } from '../../server/http/dashboard-files.ts';
import { RUNTIME } from '../helpers/http.ts';

test(`the dashboard serves uPlot from node_modules under fixed names only (${RUNTIME})`, async () => {
  const dashboard = await loadDashboard();
  assert.deepEqual(Object.keys(PACKAGE_FILES).sort(), ['vendor/uplot.css', 'vendor/uplot.js']);
  for (const [name, path] of Object.entries(PACKAGE_FILES)) {
    const answer = dashboard.answer('GET', `/_dashboard/${name}`, null);
    assert.equal(answer?.status, 200, name);
    assert.match(answer.headers['Content-Type'], name.endsWith('.js') ? /^text\/javascript; charset=utf-8$/ : /^text\/css; charset=utf-8$/);
    assert.match(answer.headers['Content-Security-Policy'], /default-src 'none'; script-src 'self'/);
    assert.equal(answer.headers['Cache-Control'], 'no-cache');
    assert.equal(answer.headers['X-Content-Type-Options'], 'nosniff');
    const bytes = new Uint8Array(await readFile(fileURLToPath(new URL(`../../node_modules/${path}`, import.meta.url))));
    assert.deepEqual(answer.body, bytes);
    assert.equal(dashboard.answer('GET', `/_dashboard/${name}`, answer.headers.ETag)?.status, 304);
  }
  for (const path of ['/_dashboard/vendor/uPlot.cjs.js', '/_dashboard/vendor/', '/_dashboard/vendor/../vendor/uplot.js', '/_dashboard/vendor%2fuplot.js', '/_dashboard/uplot/dist/uPlot.esm.js', '/_dashboard/vendor/uplot.js/', '/_dashboard/node_modules/uplot/package.json']) {
    assert.equal(dashboard.answer('GET', path, null)?.status, 404, path);
  }
});
