// A connection's usage in the dashboard: the quota gauge (GET /_admin/connections/crm/usage, a
// <meter>), requests per day over 7, 30 or 90 days as a chart (uPlot, served from node_modules as
// /_dashboard/vendor/uplot.js) with the same numbers as a table, the period's requests per key and
// per operation, and the recent requests (GET .../requests) with errors marked by a word, not by
// color alone. The Usage screen of a connection (SCREENS in app.js). Built with dom.js only:
// paths and key names are text.
import { admin, messageOf } from './api.js';
import { button, empty, h, loading, when } from './dom.js';
import { icon } from './icons.js';

const PERIODS = [[7, 'Last 7 days'], [30, 'Last 30 days'], [90, 'Last 90 days']];
const PERIOD_WORDS = { month: 'this month', day: 'today', hour: 'this hour' };
const OPERATION_WORDS = { read: 'read', search: 'search', query: 'query', aggregate: 'aggregate', events: 'events', openapi: 'OpenAPI document', create: 'create (POST)', update: 'update (PATCH, PUT)', delete: 'delete', other: 'other' };

/** uPlot's ES module, served from node_modules (a name, so no checker follows it as a file). */
const UPLOT = '/_dashboard/vendor/uplot.js';

let chosenDays = 30;
let onlyErrors = false;

/** The screen; it fills itself. */
export function usageSection(connection) {
  const area = h('div', { id: 'usage-area' }, loading('Loading the usage…'));
  const section = h('section', { 'aria-labelledby': 'usage-heading', class: 'usage' }, h('h3', { id: 'usage-heading' }, `Usage of ${connection.id}`), area);
  void load(connection, area);
  return section;
}

async function load(connection, area) {
  const base = `/connections/${encodeURIComponent(connection.id)}`;
  const [quota, history, recent] = await Promise.all([
    admin('GET', `${base}/usage`),
    admin('GET', `${base}/usage/history?days=${chosenDays}`),
    admin('GET', `${base}/requests`),
  ]);
  const failed = [quota, history, recent].find((reply) => !reply.ok);
  if (failed !== undefined) {
    area.replaceChildren(h('p', { class: 'error', role: 'alert' }, icon('alert'), ' ', `The usage of ${connection.id} could not be loaded: ${messageOf(failed)}`));
    return;
  }
  // The header's usage line says the same as the meter below (app.js listens).
  dispatchEvent(new CustomEvent('sheetrest:usage', { detail: { connection: connection.id, usage: quota.body } }));
  const reload = () => load(connection, area);
  const period = h('select', { id: 'usage-days' }, PERIODS.map(([days, text]) => h('option', { value: String(days), selected: days === chosenDays }, text)));
  period.addEventListener('change', () => {
    chosenDays = Number(period.value);
    void reload();
  });
  const refresh = button('Refresh', 'rotate', { id: 'usage-refresh', onclick: () => void reload() });
  // replaceChildren shows a null as the text "null" (breakdowns is null before any request): only what is there.
  area.replaceChildren(...[
    gauge(connection, quota.body),
    h('div', { class: 'inline usage-controls' }, h('label', { class: 'field', for: 'usage-days' }, h('span', {}, 'Period'), period), refresh),
    perDay(connection, history.body),
    breakdowns(history.body),
    recentRequests(connection, recent.body.requests, reload),
  ].filter((each) => each !== null));
}

/** The plan's allowance as a meter: used, limit, reset; without a limit, the count alone. */
function gauge(connection, usage) {
  const period = connection.plan?.period ?? 'month';
  const span = PERIOD_WORDS[period] ?? period;
  if (usage.limit === null) {
    const plan = connection.plan ? `the plan "${usage.plan}" sets no limit` : 'no plan, so no limit';
    return h('p', { id: 'quota-gauge' }, `${usage.requests.toLocaleString()} requests ${span}; ${plan}. The count starts again ${when(usage.resetAt)}.`);
  }
  const share = usage.limit === 0 ? 1 : usage.requests / usage.limit;
  return h('div', { id: 'quota-gauge', class: 'usage-gauge' },
    h('label', { for: 'quota-meter' }, `Allowance ${span} on the plan "${usage.plan}"`),
    h('meter', { id: 'quota-meter', min: '0', max: String(usage.limit), value: String(Math.min(usage.requests, usage.limit)), low: String(usage.limit * 0.8), high: String(usage.limit * 0.95), optimum: '0' }),
    h('p', { id: 'quota-text' }, `${usage.requests.toLocaleString()} of ${usage.limit.toLocaleString()} requests used (${Math.round(share * 100)}%), ${usage.remaining.toLocaleString()} left; resets ${when(usage.resetAt)}.`,
      usage.remaining === 0 ? h('strong', {}, ' Used up: requests are refused with 402 until then.') : ''));
}

/** Requests per day: a chart, a sentence saying what it shows, and the numbers as a table. */
function perDay(connection, history) {
  const { totals, from, to } = history;
  const days = history.history;
  const busiest = days.reduce((best, day) => (day.requests > best.requests ? day : best), days[0]);
  const errors = totals.clientErrors + totals.serverErrors;
  const summary = totals.requests === 0
    ? [`No requests to ${connection.id} from ${from} to ${to}. Send one from the Playground tab, or with curl: `, h('code', {}, `curl ${connection.open ? '' : '-H "X-Api-Key: $SHEETREST_KEY" '}${location.origin}/sheets/${encodeURIComponent(connection.id)}`)]
    : `${totals.requests.toLocaleString()} requests from ${from} to ${to}, ${errors.toLocaleString()} of them errors (${totals.clientErrors.toLocaleString()} 4xx, ${totals.serverErrors.toLocaleString()} 5xx); the busiest day was ${busiest.day} with ${busiest.requests.toLocaleString()}.`;
  const chart = h('div', { class: 'usage-chart', id: 'usage-chart', role: 'img', 'aria-label': `Chart of requests and errors per day from ${from} to ${to}` });
  const legend = h('p', { class: 'usage-legend', 'aria-hidden': 'true' },
    h('span', { class: 'usage-swatch usage-swatch-requests' }), ' requests ', h('span', { class: 'usage-swatch usage-swatch-errors' }), ' errors (4xx and 5xx)');
  const table = h('table', { id: 'usage-days-table' },
    h('caption', {}, 'Requests per day (UTC)'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Day'), h('th', { scope: 'col' }, 'Requests'), h('th', { scope: 'col' }, '4xx'), h('th', { scope: 'col' }, '5xx'))),
    h('tbody', {}, [...days].reverse().map((day) => h('tr', {}, h('td', {}, day.day), h('td', {}, day.requests.toLocaleString()), h('td', {}, day.clientErrors.toLocaleString()), h('td', {}, day.serverErrors.toLocaleString())))));
  const figure = h('figure', { class: 'usage-figure' },
    h('figcaption', { id: 'usage-summary' }, summary),
    totals.requests === 0 ? null : [legend, chart],
    totals.requests === 0 ? null : h('details', {}, h('summary', {}, 'The numbers per day'), table));
  if (totals.requests > 0) void drawChart(chart, legend, days);
  return figure;
}

/** Draws the chart once the element is in the page (it needs a width), again when the color scheme or the theme toggle changes. */
async function drawChart(element, legend, days) {
  let uPlot;
  try {
    ensureStyles();
    uPlot = (await import(UPLOT)).default;
  } catch {
    element.replaceChildren(h('p', {}, 'The chart could not be loaded; the numbers are in the table below.'));
    return;
  }
  const x = days.map((day) => Date.parse(`${day.day}T00:00:00Z`) / 1000);
  const requests = days.map((day) => day.requests);
  const failures = days.map((day) => day.clientErrors + day.serverErrors);
  let plot = null;
  const draw = () => {
    if (!element.isConnected) return;
    const swatch = (name) => getComputedStyle(legend.querySelector(`.usage-swatch-${name}`)).backgroundColor;
    const ink = getComputedStyle(element).color;
    const grid = getComputedStyle(element).borderTopColor;
    const axis = { stroke: ink, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } };
    const bars = uPlot.paths.bars({ size: [0.7, 40] });
    plot?.destroy();
    plot = new uPlot({
      width: Math.max(280, Math.min(element.clientWidth || 640, 960)),
      height: 220,
      legend: { show: false },
      cursor: { show: true, drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (_, _min, max) => [0, Math.max(1, max)] } },
      axes: [{ ...axis }, { ...axis, size: 60 }],
      series: [
        { label: 'Day' },
        { label: 'Requests', stroke: swatch('requests'), fill: swatch('requests'), paths: bars, points: { show: false } },
        { label: 'Errors', stroke: swatch('errors'), fill: swatch('errors'), paths: bars, points: { show: false } },
      ],
    }, [x, requests, failures], element);
  };
  requestAnimationFrame(draw);
  // The system's scheme, or the header's toggle (data-theme on <html>): both change the theme's colors.
  const scheme = matchMedia('(prefers-color-scheme: dark)');
  const toggle = new MutationObserver(() => redraw());
  const redraw = () => {
    if (element.isConnected) return draw();
    scheme.removeEventListener('change', redraw);
    toggle.disconnect();
  };
  scheme.addEventListener('change', redraw);
  toggle.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
}

/** uPlot's style sheet, added once, from this server (CSP: style-src 'self'). */
function ensureStyles() {
  if (document.getElementById('uplot-css') !== null) return;
  document.head.append(h('link', { id: 'uplot-css', rel: 'stylesheet', href: '/_dashboard/vendor/uplot.css' }));
}

/** The period's requests per key and per operation, busiest first. */
function breakdowns(history) {
  const keys = new Map();
  const operations = new Map();
  for (const day of history.history) {
    for (const key of day.keys) {
      const seen = keys.get(key.key) ?? { ...key, requests: 0, clientErrors: 0, serverErrors: 0 };
      seen.requests += key.requests;
      seen.clientErrors += key.clientErrors;
      seen.serverErrors += key.serverErrors;
      keys.set(key.key, seen);
    }
    for (const [name, counts] of Object.entries(day.operations)) {
      const seen = operations.get(name) ?? { requests: 0, clientErrors: 0, serverErrors: 0 };
      seen.requests += counts.requests;
      seen.clientErrors += counts.clientErrors;
      seen.serverErrors += counts.serverErrors;
      operations.set(name, seen);
    }
  }
  if (keys.size === 0) return null;
  const table = (id, caption, first, rows) => h('div', { class: 'usage-scroll' }, h('table', { id },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, first), h('th', { scope: 'col' }, 'Requests'), h('th', { scope: 'col' }, '4xx'), h('th', { scope: 'col' }, '5xx'))),
    h('tbody', {}, rows.sort((a, b) => b[1].requests - a[1].requests).map(([name, counts]) => h('tr', {},
      h('th', { scope: 'row' }, name), h('td', {}, counts.requests.toLocaleString()), h('td', {}, counts.clientErrors.toLocaleString()), h('td', {}, counts.serverErrors.toLocaleString()))))));
  return h('div', { class: 'usage-breakdowns' },
    table('usage-keys', `Per key, ${history.from} to ${history.to}`, 'Key', [...keys.values()].map((key) => [keyName(key), key])),
    table('usage-operations', `Per operation, ${history.from} to ${history.to}`, 'Operation', [...operations].map(([name, counts]) => [OPERATION_WORDS[name] ?? name, counts])));
}

function keyName(key) {
  if (key.key === 'open') return 'no key (open connection)';
  if (key.key === 'none') return 'no valid key (refused)';
  if (key.key === 'other') return 'other keys';
  if (key.name !== null && key.prefix !== null) return `${key.name} (${key.prefix}…)`;
  return key.name ?? (key.prefix === null ? `config key ${key.key.slice(4, 12)}` : `${key.prefix}…`);
}

/** The last requests this server answered, newest first; errors carry the word "error". */
function recentRequests(connection, requests, reload) {
  const only = h('input', { type: 'checkbox', id: 'usage-only-errors', checked: onlyErrors });
  only.addEventListener('change', () => {
    onlyErrors = only.checked;
    void reload();
  });
  const shown = onlyErrors ? requests.filter((each) => each.error) : requests;
  const errors = requests.filter((each) => each.error).length;
  const body = shown.length === 0
    ? empty('recent-empty', 'inbox', requests.length === 0
      ? `No requests to ${connection.id} since this server started. Requests sent from the Playground tab, or by any client, show here.`
      : `None of the last ${requests.length} requests failed.`)
    : h('div', { class: 'usage-scroll' }, h('table', { id: 'recent-requests' },
      h('caption', {}, `The last ${shown.length} ${onlyErrors ? 'failed ' : ''}requests, newest first (${errors} of ${requests.length} failed)`),
      h('thead', {}, h('tr', {}, ['Time', 'Method', 'Path', 'Status', 'Duration', 'Key'].map((name) => h('th', { scope: 'col' }, name)))),
      h('tbody', {}, shown.map((each) => h('tr', { class: each.error ? 'usage-failed' : null },
        h('td', { class: 'when' }, new Date(each.at).toLocaleTimeString()),
        h('td', {}, each.method),
        h('td', {}, h('code', {}, each.path)),
        h('td', { class: 'when' }, each.error ? h('span', { class: 'usage-error-mark' }, 'error ') : null, String(each.status)),
        h('td', { class: 'when' }, `${each.ms} ms`),
        h('td', {}, each.key ?? '—'))))));
  return h('div', { class: 'usage-recent' },
    h('h4', {}, 'Recent requests'),
    h('label', { class: 'check' }, only, 'Only errors'),
    body);
}
